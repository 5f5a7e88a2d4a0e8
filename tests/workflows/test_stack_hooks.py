"""Heat's breakpoint hooks through the stack workflow: an operation pauses, durably, at
a resource's hook until `unset_hook` clears it (heat-tempest-plugin's `test_hooks`)."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError

from domain.stack.requests import StackOperationRequest, UnsetHookRequest
from store.events import EventRecord
from store.stacks import StackRecord
from tests.support.eventually import eventually
from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import (
    create_stack,
    rejection,
    resources,
    send,
    stack_settles,
)

STEPS: dict[str, Any] = {
    "heat_template_version": "2014-10-16",
    "resources": {
        "foo_step1": {"type": "OS::Heat::RandomString"},
        "foo_step2": {"type": "OS::Heat::RandomString", "depends_on": "foo_step1"},
        "foo_step3": {"type": "OS::Heat::RandomString", "depends_on": "foo_step2"},
    },
}


async def paused(h: Harness, stack_id: str, resource: str, reason: str) -> EventRecord:
    async def found() -> EventRecord | None:
        events = h.rows(EventRecord, stack_id=stack_id, obj_name=resource)
        return next((e for e in events if e.status_reason == reason), None)

    event: EventRecord = await eventually(found, timeout=30)
    return event


async def clear(handle: WorkflowHandle[Any, Any], resource: str, hook: str) -> None:
    await send(handle, "unset_hook", UnsetHookRequest(resource_name=resource, hook=hook))


async def test_pre_create_pauses_the_resource_until_its_hook_is_cleared(harness: Harness) -> None:
    handle, stack_id = await create_stack(
        harness, STEPS, wait=False, hooks={"foo_step2": {"hooks": "pre-create"}}
    )
    event = await paused(
        harness, stack_id, "foo_step2", "CREATE paused until Hook pre-create is cleared"
    )
    assert (event.action, event.status) == ("INIT", "COMPLETE")
    rows = resources(harness, stack_id)
    assert f"{rows['foo_step1'].action}_{rows['foo_step1'].status}" == "CREATE_COMPLETE"
    assert f"{rows['foo_step2'].action}_{rows['foo_step2'].status}" == "INIT_COMPLETE"
    assert "foo_step3" not in rows
    stack = harness.rows(StackRecord, id=stack_id)[0]
    assert f"{stack.action}_{stack.status}" == "CREATE_IN_PROGRESS"

    await clear(handle, "foo_step2", "pre-create")
    cleared = await paused(harness, stack_id, "foo_step2", "Hook pre-create is cleared")
    assert (cleared.action, cleared.status) == ("INIT", "COMPLETE")
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert sorted(resources(harness, stack_id)) == ["foo_step1", "foo_step2", "foo_step3"]


async def test_pre_update_pauses_even_an_unchanged_resource(harness: Harness) -> None:
    hooks = {"foo_step2": {"hooks": ["pre-update"]}}
    handle, stack_id = await create_stack(harness, STEPS, hooks=hooks)
    before = resources(harness, stack_id)["foo_step2"].physical_id
    await send(handle, "update", StackOperationRequest(existing=True))
    event = await paused(
        harness, stack_id, "foo_step2", "UPDATE paused until Hook pre-update is cleared"
    )
    assert (event.action, event.status) == ("CREATE", "COMPLETE")
    await clear(handle, "foo_step2", "pre-update")
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert resources(harness, stack_id)["foo_step2"].physical_id == before


async def test_a_glob_pauses_each_resource_and_deletes_wait_too(harness: Harness) -> None:
    handle, stack_id = await create_stack(
        harness, STEPS, wait=False, hooks={"foo_*": {"hooks": ["pre-create", "pre-delete"]}}
    )
    for name in ("foo_step1", "foo_step2", "foo_step3"):
        await paused(harness, stack_id, name, "CREATE paused until Hook pre-create is cleared")
        await clear(handle, name, "pre-create")
    await stack_settles(harness, stack_id)

    await send(handle, "delete", StackOperationRequest())
    await paused(harness, stack_id, "foo_step3", "DELETE paused until Hook pre-delete is cleared")
    assert sorted(resources(harness, stack_id)) == ["foo_step1", "foo_step2", "foo_step3"]
    for name in ("foo_step3", "foo_step2", "foo_step1"):
        await paused(harness, stack_id, name, "DELETE paused until Hook pre-delete is cleared")
        await clear(handle, name, "pre-delete")

    async def gone() -> bool:
        return not harness.rows(StackRecord, id=stack_id)

    await eventually(gone, timeout=30)


async def test_unset_hook_is_refused_where_no_hook_waits(harness: Harness) -> None:
    handle, _ = await create_stack(harness, STEPS, hooks={"foo_step2": {"hooks": "pre-delete"}})
    with pytest.raises(WorkflowUpdateFailedError) as idle:
        await clear(handle, "foo_step2", "pre-delete")
    assert rejection(idle.value) == 'The "pre-delete" hook is not defined on foo_step2'
    with pytest.raises(WorkflowUpdateFailedError) as unknown:
        await clear(handle, "foo_step1", "pre-delete")
    assert rejection(unknown.value) == 'The "pre-delete" hook is not defined on foo_step1'
    with pytest.raises(WorkflowUpdateFailedError) as bad:
        await clear(handle, "foo_step2", "mid-create")
    assert rejection(bad.value) == 'Invalid hook type "mid-create" for foo_step2'


async def test_a_stopped_operation_leaves_no_row_for_a_resource_it_never_made(
    harness: Harness,
) -> None:
    failing = {
        "type": "OS::Heat::TestResource",
        "depends_on": "foo_step1",
        "properties": {"fail": True, "wait_secs": 1},
    }
    _, stack_id = await create_stack(
        harness,
        {**STEPS, "resources": {**STEPS["resources"], "bad": failing}},
        wait=False,
        hooks={"foo_step2": {"hooks": "pre-create"}},
    )
    await paused(harness, stack_id, "foo_step2", "CREATE paused until Hook pre-create is cleared")
    stack = await stack_settles(harness, stack_id)  # `bad` fails: the operation stops
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert "foo_step2" not in resources(harness, stack_id)
    await paused(harness, stack_id, "foo_step2", "Failure occurred while waiting.")
