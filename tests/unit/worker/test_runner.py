"""The worker answers the SDK's per-payload context questions outside the sandbox, and
only for a converter those answers cannot change (worker/runner.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest
from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.converter import (
    DataConverter,
    PayloadCodec,
    SerializationContext,
    StorageDriverStoreContext,
    WithSerializationContext,
)
from temporalio.worker import WorkflowInstance
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from config.codec import CodecKeys, new_keys_json
from config.temporal_client import warden_data_converter
from worker.main import workflow_runner
from worker.runner import (
    ABANDONED,
    EVICTION_ATTEMPTS,
    STUCK_EVICTION,
    ContextFreeInstance,
    ContextFreeRunner,
    ignores_context,
    workflow_runner_for,
)


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


class StuckInstance(WorkflowInstance):
    """A sandboxed instance whose eviction fails as the SDK's does when a task the
    deadlock detector's interrupt broke will not end."""

    def __init__(self) -> None:
        self.activations = 0

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        self.activations += 1
        if any(job.HasField("remove_from_cache") for job in act.jobs):
            raise RuntimeError(f"{STUCK_EVICTION} 1 tasks remain. Stack traces below:")
        raise RuntimeError("some other failure")

    def get_serialization_context(self, command_info: object) -> None:
        return None

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        return StorageDriverStoreContext()

    def get_info(self) -> workflow.Info:
        raise AssertionError("ContextFreeInstance passes get_info through; no test here calls it")


def eviction(run_id: str) -> WorkflowActivation:
    act = WorkflowActivation(run_id=run_id)
    act.jobs.add().remove_from_cache.message = "Potential deadlock detected"
    return act


def test_an_eviction_that_keeps_failing_ends_on_the_third_try_and_the_instance_is_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stuck = StuckInstance()
    instance = ContextFreeInstance(stuck)

    for _ in range(EVICTION_ATTEMPTS - 1):
        with pytest.raises(RuntimeError, match=STUCK_EVICTION):
            instance.activate(eviction("run-1"))
    completion = instance.activate(eviction("run-1"))

    assert (completion.run_id, completion.HasField("successful")) == ("run-1", True)
    assert stuck.activations == EVICTION_ATTEMPTS
    assert ABANDONED[-1] is stuck
    assert "evicted after 3 failed evictions" in caplog.text


def test_other_failures_and_other_activations_are_the_sdks_to_handle() -> None:
    instance = ContextFreeInstance(StuckInstance())
    other = WorkflowActivation(run_id="run-2")
    other.jobs.add().fire_timer.seq = 1

    for _ in range(EVICTION_ATTEMPTS + 1):
        with pytest.raises(RuntimeError, match="some other failure"):
            instance.activate(other)
    assert instance.stuck_evictions == 0
