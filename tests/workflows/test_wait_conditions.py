"""Heat's wait conditions through the stack workflow: a WaitCondition holds the create
until its handle has `count` SUCCESS signals, durably (hours pass in milliseconds on
the time-skipping server), fails at a FAILURE signal, and fails when its timeout passes.

Tests that skip time use `own_harness`: on the shared server, work left by earlier tests
can hold the clock."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from temporalio.client import WorkflowUpdateFailedError

from domain.stack.requests import ResourceSignalRequest
from store.stacks import StackRecord
from tests.support.eventually import eventually
from tests.workflows.support import SIGNAL_BASE, Harness
from tests.workflows.test_stack_workflow import (
    create_stack,
    rejection,
    resources,
    send,
    stack_settles,
)


def waiting(count: int = 1, timeout: int = 36000) -> dict[str, Any]:
    return {
        "heat_template_version": "2015-04-30",
        "resources": {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {
                "type": "OS::Heat::WaitCondition",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "count": count,
                    "timeout": timeout,
                },
            },
            "after": {"type": "OS::Heat::RandomString", "depends_on": "wait"},
        },
        "outputs": {
            "data": {"value": {"get_attr": ["wait", "data"]}},
            "curl": {"value": {"get_attr": ["handle", "curl_cli"]}},
        },
    }


async def handle_made(h: Harness, stack_id: str) -> str:
    async def made() -> str | None:
        row = resources(h, stack_id).get("handle")
        return row.physical_id if row is not None and row.status == "COMPLETE" else None

    signal_id: str = await eventually(made, timeout=30)
    return signal_id


def signal(details: dict[str, Any]) -> ResourceSignalRequest:
    return ResourceSignalRequest(resource_name="handle", details=details)


async def test_the_create_waits_for_count_signals_then_goes_on(own_harness: Harness) -> None:
    harness = own_harness
    handle, stack_id = await create_stack(harness, waiting(count=2), wait=False)
    signal_id = await handle_made(harness, stack_id)
    rows = resources(harness, stack_id)
    assert rows["handle"].attributes["endpoint"] == f"{SIGNAL_BASE}/v1/signal/{signal_id}"
    assert rows["handle"].attributes["curl_cli"].endswith(f"{SIGNAL_BASE}/v1/signal/{signal_id}")
    # An hour passes: the wait condition is still waiting, nothing after it started.
    await harness.env.sleep(timedelta(hours=1))
    assert "after" not in resources(harness, stack_id)

    await send(handle, "deliver_signal", signal({}))
    await send(
        handle, "deliver_signal", signal({"status": "SUCCESS", "data": "ready", "id": "web"})
    )
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert json.loads(stack.outputs["data"]) == {"1": None, "web": "ready"}
    metadata = resources(harness, stack_id)["handle"].rsrc_metadata
    assert metadata == {
        "1": {"data": None, "reason": "Signal 1 received", "status": "SUCCESS"},
        "web": {"data": "ready", "reason": "Signal 2 received", "status": "SUCCESS"},
    }


async def test_a_failure_signal_fails_the_wait(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, waiting(count=3), wait=False)
    await handle_made(harness, stack_id)
    await send(handle, "deliver_signal", signal({"status": "FAILURE", "reason": "disk full"}))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert stack.status_reason == (
        "Resource CREATE failed: wait: WaitConditionFailure: disk full"
    ), stack.status_reason


async def test_the_wait_times_out_after_its_timeout(own_harness: Harness) -> None:
    harness = own_harness
    handle, stack_id = await create_stack(harness, waiting(count=2, timeout=7200), wait=False)
    await handle_made(harness, stack_id)
    await send(handle, "deliver_signal", signal({"reason": "db up"}))
    await harness.env.sleep(timedelta(hours=3))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert stack.status_reason.endswith("WaitConditionTimeout: 1 of 2 received - db up")


async def test_an_idle_stack_keeps_a_signal_and_refuses_a_malformed_one(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, waiting(), wait=False)
    await handle_made(harness, stack_id)
    await send(handle, "deliver_signal", signal({}))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason

    await send(handle, "deliver_signal", signal({"status": "SUCCESS", "reason": "late"}))

    async def kept() -> dict[str, Any] | None:
        metadata = resources(harness, stack_id)["handle"].rsrc_metadata
        return metadata if len(metadata) == 2 else None

    assert (await eventually(kept))["2"]["reason"] == "late"
    for bad in ({"status": "MAYBE"}, {"colour": "red"}):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await send(handle, "deliver_signal", signal(bad))
        assert rejection(refused.value) == "Metadata format invalid"
    with pytest.raises(WorkflowUpdateFailedError) as wrong:
        await send(handle, "deliver_signal", ResourceSignalRequest(resource_name="after"))
    assert "does not accept signals" in rejection(wrong.value)
    assert harness.rows(StackRecord, id=stack_id)[0].status == "COMPLETE"


async def test_an_app_may_signal_the_handle_straight_through_temporal(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, waiting(), wait=False)
    await handle_made(harness, stack_id)
    await handle.signal("deliver_signal", signal({"reason": "from the app"}))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert resources(harness, stack_id)["handle"].rsrc_metadata["1"]["reason"] == "from the app"
