"""The worker answers the SDK's per-payload context questions outside the sandbox, and
only for a converter those answers cannot change (worker/runner.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from config.codec import CodecKeys, new_keys_json
from config.temporal_client import warden_data_converter
from worker.main import workflow_runner
from worker.runner import ContextFreeRunner, ignores_context, workflow_runner_for


class PerWorkflowCodec(PayloadCodec, WithSerializationContext):
    """A codec that would, say, pick a key by workflow id: context changes it."""

    def __init__(self, context: SerializationContext | None = None) -> None:
        self.context = context

    def with_context(self, context: SerializationContext) -> PerWorkflowCodec:
        return PerWorkflowCodec(context)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


KEYS = CodecKeys.from_json(new_keys_json("k1"))


@pytest.mark.parametrize(
    "converter",
    [
        warden_data_converter(None),
        warden_data_converter(None, compress=False),
        warden_data_converter(KEYS),
        warden_data_converter(KEYS, compress=False),
        DataConverter.default,
    ],
    ids=["compressed", "plain", "encrypted", "encrypted-uncompressed", "sdk-default"],
)
def test_warden_converters_ignore_context_so_the_worker_answers_outside_the_sandbox(
    converter: DataConverter,
) -> None:
    assert ignores_context(converter)
    runner = workflow_runner(converter)
    assert isinstance(runner, ContextFreeRunner)
    # What runs the workflows is still the sandbox, Warden's modules passed through.
    assert isinstance(runner.inner, SandboxedWorkflowRunner)
    assert "workflows" in runner.inner.restrictions.passthrough_modules


def test_a_converter_that_uses_context_keeps_the_sdk_path() -> None:
    converter = dataclasses.replace(DataConverter.default, payload_codec=PerWorkflowCodec())
    assert not ignores_context(converter)
    sandbox = SandboxedWorkflowRunner()
    assert workflow_runner_for(converter, sandbox) is sandbox


def test_under_temporal_debug_mode_the_sdk_gets_its_sandbox_runner_as_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The SDK relaxes the sandbox for breakpoint() only on a runner of its own type.
    monkeypatch.setenv("TEMPORAL_DEBUG", "1")
    sandbox = SandboxedWorkflowRunner()
    assert workflow_runner_for(warden_data_converter(None), sandbox) is sandbox
