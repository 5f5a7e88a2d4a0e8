"""StackWorkflow on the time-skipping server: graph walks, mark-unhealthy, lock, rollback."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError

from domain.hot.template import MAX_RESOURCES
from domain.stack.requests import (
    LockStackRequest,
    MarkResourceRequest,
    ResourceSignalRequest,
    StackAccepted,
    StackOperationRequest,
)
from domain.stack.state import LockLevel, StackSpec, StackState
from store.events import EventRecord
from store.stacks import StackRecord, StackResourceRecord
from tests.support.eventually import eventually
from tests.workflows.support import Harness
from workflows.search_attributes import WARDEN_STATUS, warden_attributes
from workflows.stack.messages import StackInput
from workflows.stack.walk import BATCH_BYTES

WEB = {
    "heat_template_version": "2021-04-16",
    "parameters": {"flavor": {"type": "string", "default": "m1.tiny"}},
    "resources": {
        "secret": {"type": "OS::Heat::RandomString", "properties": {"length": 12}},
        "config": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_attr": ["secret", "value"]}},
        },
        "web": {
            "type": "OS::Nova::Server",
            "properties": {"image": "cirros", "flavor": {"get_param": "flavor"}},
            "depends_on": "config",
        },
    },
    "outputs": {
        "server": {"value": {"get_resource": "web"}},
        "password": {"value": {"get_attr": ["config", "output"]}},
    },
}


async def create_stack(
    h: Harness,
    template: dict[str, Any],
    *,
    parameters: dict[str, Any] | None = None,
    disable_rollback: bool = True,
    wait: bool = True,
    hooks: dict[str, Any] | None = None,
    tags: list[str] | None = None,
    timeout_mins: int | None = None,
    event_sinks: list[dict[str, Any]] | None = None,
) -> tuple[WorkflowHandle[Any, Any], str]:
    stack_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        "StackWorkflow",
        StackInput(
            state=StackState(
                spec=StackSpec(stack_id=stack_id, project_id="p1", name="shop"),
                disable_rollback=disable_rollback,
                tags=tags,
            )
        ),
        id=f"stack:{stack_id}",
        task_queue=h.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=warden_attributes("p1", "stack", stack_id, "INIT_COMPLETE"),
    )
    await h.env.client.execute_update_with_start_workflow(
        "create",
        StackOperationRequest(
            action_id=action_id,
            template=template,
            parameters=parameters,
            hooks=hooks,
            timeout_mins=timeout_mins,
            event_sinks=event_sinks,
        ),
        start_workflow_operation=start,
        id=action_id,
        result_type=StackAccepted,
    )
    handle = h.env.client.get_workflow_handle(f"stack:{stack_id}")
    h.started.append(handle.id)
    if wait:
        await stack_settles(h, stack_id)
    return handle, stack_id


async def stack_settles(h: Harness, stack_id: str) -> StackRecord:
    async def settled() -> StackRecord | None:
        rows = h.rows(StackRecord, id=stack_id)
        return rows[0] if rows and rows[0].status != "IN_PROGRESS" else None

    record: StackRecord = await eventually(settled, timeout=30)
    return record


def resources(h: Harness, stack_id: str) -> dict[str, StackResourceRecord]:
    return {r.name: r for r in h.rows(StackResourceRecord, stack_id=stack_id)}


def rejection(error: WorkflowUpdateFailedError) -> str:
    cause = error.cause
    assert isinstance(cause, ApplicationError)
    return cause.message


async def send(handle: WorkflowHandle[Any, Any], name: str, req: Any) -> StackAccepted:
    result: StackAccepted = await handle.execute_update(name, req, result_type=StackAccepted)
    return result


async def test_create_walks_the_graph_and_resolves_outputs(harness: Harness) -> None:
    _, stack_id = await create_stack(harness, WEB)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    rows = resources(harness, stack_id)
    assert {n: f"{r.action}_{r.status}" for n, r in rows.items()} == {
        "secret": "CREATE_COMPLETE",
        "config": "CREATE_COMPLETE",
        "web": "CREATE_COMPLETE",
    }
    assert rows["secret"].required_by == ["config"]
    assert stack.outputs["server"] == rows["web"].physical_id
    assert len(stack.outputs["password"]) == 12
    server = harness.cloud.servers[rows["web"].physical_id or ""]
    assert server.status == "ACTIVE"
    created = [e.obj_name for e in harness.rows(EventRecord, stack_id=stack_id, status="COMPLETE")]
    assert created.index("secret") < created.index("config") < created.index("web")


async def test_update_replaces_resource_marked_unhealthy(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, WEB)
    old = resources(harness, stack_id)["web"].physical_id
    await send(
        handle,
        "mark_unhealthy",
        MarkResourceRequest(resource_name=old or "", mark_unhealthy=True),
    )
    marked = resources(harness, stack_id)["web"]
    assert f"{marked.action}_{marked.status}" == "CHECK_FAILED"
    assert marked.status_reason == "state changed by resource_mark_unhealthy api"

    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    rows = resources(harness, stack_id)
    assert rows["web"].physical_id not in (None, old)
    assert old not in harness.cloud.servers
    assert stack.outputs["server"] == rows["web"].physical_id
    # Only the marked resource was replaced.
    assert f"{rows['config'].action}_{rows['config'].status}" == "CREATE_COMPLETE"


def at_the_resource_limit() -> dict[str, Any]:
    """MAX_RESOURCES resources: one that the last one reads, and many bystanders."""
    strings = {
        f"s{i:04d}": {"type": "OS::Heat::RandomString", "properties": {"length": 8}}
        for i in range(MAX_RESOURCES - 1)
    }
    reader = {
        "type": "OS::Heat::TestResource",
        "properties": {"value": {"get_attr": ["s0000", "value"]}},
    }
    return {"heat_template_version": "2021-04-16", "resources": {**strings, "reader": reader}}


async def stored_payloads(
    client: Client, handle: WorkflowHandle[Any, Any]
) -> list[tuple[str, int, int]]:
    """(what, bytes as stored, bytes once decoded) of every payload in the history of
    `handle`'s workflow and of each child it started; `what` names the event, and the
    activity type for an activity's input."""
    codec = client.data_converter.payload_codec
    assert codec is not None
    ids = [handle.id]
    for event in (await handle.fetch_history()).events:
        if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
            ids.append(event.start_child_workflow_execution_initiated_event_attributes.workflow_id)
    found = []
    for workflow_id in ids:
        for event in (await client.get_workflow_handle(workflow_id).fetch_history()).events:
            attributes = getattr(event, event.WhichOneof("attributes") or "")
            what = EventType.Name(event.event_type)
            if event.HasField("activity_task_scheduled_event_attributes"):
                what = attributes.activity_type.name
            for _, value in attributes.ListFields():
                for payload in getattr(value, "payloads", []):
                    [decoded] = await codec.decode([payload])
                    found.append((what, payload.ByteSize(), decoded.ByteSize()))
    return found


async def test_stack_at_the_resource_limit_marks_updates_and_deletes(
    unhurried_harness: Harness,
) -> None:
    # Each step once re-read the whole template per resource: an update of 600 unchanged
    # resources held its workflow task past the 2 s deadlock limit, retried for ever.
    # The longest task is now a few tenths of a second, reported by `make bench`; here
    # without the deadlock detector, whose 2 s the suite's load alone once crossed.
    harness = unhurried_harness
    handle, stack_id = await create_stack(harness, at_the_resource_limit())
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    # The create's projection once went out as one 1.7 MB activity input (Temporal
    # refuses 2 MB): now it is written in runs of at most BATCH_BYTES of JSON...
    payloads = await stored_payloads(harness.env.client, handle)
    records = [decoded for what, _, decoded in payloads if what == "record_changes"]
    assert len(records) > 5
    assert max(records) <= BATCH_BYTES + 1024
    # ...and every payload is stored compressed: the largest, the create's result with
    # every resource (525 KB of JSON), takes a tenth of that.
    largest = max(payloads, key=lambda p: p[2])
    assert largest[2] > 500_000
    assert largest[1] < largest[2] / 5, largest
    before = resources(harness, stack_id)
    await send(
        handle, "mark_unhealthy", MarkResourceRequest(resource_name="s0000", mark_unhealthy=True)
    )
    marked = resources(harness, stack_id)["s0000"]
    assert (marked.status, marked.required_by) == ("FAILED", ["reader"])

    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    after = resources(harness, stack_id)
    changed = {n for n, r in after.items() if r.physical_id != before[n].physical_id}
    assert changed == {"s0000"}
    assert after["reader"].action == "UPDATE"  # it reads the replaced string
    assert after["s0001"].action == "CREATE"  # a bystander, kept

    await send(handle, "delete", StackOperationRequest())
    await handle.result()
    assert resources(harness, stack_id) == {}


async def test_mark_false_clears_only_check_failed(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, WEB)
    await send(
        handle, "mark_unhealthy", MarkResourceRequest(resource_name="web", mark_unhealthy=False)
    )
    assert resources(harness, stack_id)["web"].action == "CREATE"
    await send(
        handle,
        "mark_unhealthy",
        MarkResourceRequest(
            resource_name="web", mark_unhealthy=True, resource_status_reason="app says so"
        ),
    )
    assert resources(harness, stack_id)["web"].status_reason == "app says so"
    await send(
        handle, "mark_unhealthy", MarkResourceRequest(resource_name="web", mark_unhealthy=False)
    )
    row = resources(harness, stack_id)["web"]
    assert f"{row.action}_{row.status}" == "CHECK_COMPLETE"


async def test_a_mark_upserts_warden_status_only_when_it_changes(harness: Harness) -> None:
    """A mark leaves the stack's status as it was: no upsert command, no visibility write
    (docs/performance.md). WardenStatus still follows the stack when its status does change."""
    handle, stack_id = await create_stack(harness, WEB)

    async def upserts() -> list[str]:
        history = await handle.fetch_history()
        fields = (
            e.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
        )
        return [json.loads(f["WardenStatus"].data) for f in fields if "WardenStatus" in f]

    async def settled() -> list[str] | None:
        shown = await upserts()
        return shown if shown[-1:] == ["CREATE_COMPLETE"] else None

    before = await eventually(settled, what="WardenStatus CREATE_COMPLETE")
    for flag in (True, False, True):
        await send(
            handle, "mark_unhealthy", MarkResourceRequest(resource_name="web", mark_unhealthy=flag)
        )
    assert resources(harness, stack_id)["web"].status == "FAILED"
    assert await upserts() == before
    described = await handle.describe()
    assert described.typed_search_attributes.get(WARDEN_STATUS) == "CREATE_COMPLETE"

    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason

    async def updated() -> list[str] | None:  # the row is written just before the upsert
        shown = (await upserts())[len(before) :]
        return shown if shown[-1:] == ["UPDATE_COMPLETE"] else None

    assert await eventually(updated, what="WardenStatus UPDATE_COMPLETE") == [
        "UPDATE_IN_PROGRESS",
        "UPDATE_COMPLETE",
    ]


async def test_an_operation_is_written_running_by_its_accept_and_started_at_once(
    harness: Harness,
) -> None:
    """The accept writes the action RUNNING; the main loop starts the child in the same
    workflow task, without a write of its own in between (docs/performance.md)."""
    handle, stack_id = await create_stack(harness, WEB)
    accepted = await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    action = await harness.action_ends(accepted.action_id)
    assert action.status == "SUCCEEDED" and action.started_at == action.created_at

    events = list((await handle.fetch_history()).events)
    update = next(
        i
        for i, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
        and e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        == "update"
    )
    commands = (
        EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
        EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
    )
    first = next(e for e in events[update:] if e.event_type in commands)
    assert first.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED


async def test_mark_unhealthy_while_busy_is_rejected_with_heat_wording(
    own_harness: Harness,
) -> None:
    slow = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "slow": {
                "type": "OS::Heat::TestResource",
                "properties": {"action_wait_secs": {"create": 3600}},
            }
        },
    }
    handle, _ = await create_stack(own_harness, slow, wait=False)
    with pytest.raises(WorkflowUpdateFailedError) as err:
        await send(
            handle, "mark_unhealthy", MarkResourceRequest(resource_name="slow", mark_unhealthy=True)
        )
    assert rejection(err.value) == "Stack shop already has an action (CREATE) in progress."


async def test_lock_all_locks_servers_and_refuses_everything_else(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, WEB)
    await send(handle, "lock", LockStackRequest(level=LockLevel.ALL, reason="db maintenance"))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "LOCK_COMPLETE"
    server_id = resources(harness, stack_id)["web"].physical_id or ""
    assert harness.cloud.servers[server_id].locked
    for name, req in [
        ("update", StackOperationRequest(existing=True)),
        ("delete", StackOperationRequest()),
        ("check", StackOperationRequest()),
        ("mark_unhealthy", MarkResourceRequest(resource_name="web", mark_unhealthy=True)),
    ]:
        with pytest.raises(WorkflowUpdateFailedError) as err:
            await send(handle, name, req)
        assert "is locked" in rejection(err.value), name
    await send(handle, "unlock", StackOperationRequest())
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UNLOCK_COMPLETE"
    assert not harness.cloud.servers[server_id].locked
    with pytest.raises(WorkflowUpdateFailedError):
        await send(handle, "unlock", StackOperationRequest())


async def test_failed_create_rolls_back_when_rollback_enabled(harness: Harness) -> None:
    broken = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "web": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1"}},
            "bad": {
                "type": "OS::Heat::TestResource",
                "properties": {"fail": True},
                "depends_on": "web",
            },
        },
    }
    _, stack_id = await create_stack(harness, broken, disable_rollback=False)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "ROLLBACK_COMPLETE", stack.status_reason
    assert resources(harness, stack_id) == {}
    assert harness.cloud.servers == {}


async def test_failed_create_without_rollback_keeps_resources_and_reason(harness: Harness) -> None:
    broken = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "bad": {"type": "OS::Heat::TestResource", "properties": {"fail": True}},
        },
    }
    handle, stack_id = await create_stack(harness, broken)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert "Test Resource failed bad" in stack.status_reason
    # The next update replaces the failed resource; with fail off it succeeds.
    fixed = {**broken, "resources": {"bad": {"type": "OS::Heat::TestResource"}}}
    await send(handle, "update", StackOperationRequest(template=fixed))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason


async def test_delete_removes_everything_dependents_first(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, WEB)
    await send(handle, "delete", StackOperationRequest())

    async def gone() -> bool:
        return not harness.rows(StackRecord, id=stack_id)

    await eventually(gone, timeout=30)
    assert harness.cloud.servers == {}
    deleted = [
        e.obj_name
        for e in harness.rows(EventRecord, stack_id=stack_id, action="DELETE", status="COMPLETE")
        if e.obj_type == "resource"
    ]
    assert deleted.index("web") < deleted.index("config") < deleted.index("secret")


async def test_in_place_update_reaches_dependents_that_read_it(harness: Harness) -> None:
    template: dict[str, Any] = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "config": {"type": "OS::Heat::TestResource", "properties": {"value": "v1"}},
            "reader": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_attr": ["config", "output"]}},
            },
            "web": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": "cirros",
                    "flavor": "m1",
                    "metadata": {"config": {"get_attr": ["config", "output"]}},
                },
            },
            "bystander": {"type": "OS::Heat::None"},
        },
    }
    handle, stack_id = await create_stack(harness, template)
    before = resources(harness, stack_id)
    changed: dict[str, Any] = {**template, "resources": {**template["resources"]}}
    changed["resources"]["config"] = {
        "type": "OS::Heat::TestResource",
        "properties": {"value": "v2"},
    }
    await send(handle, "update", StackOperationRequest(template=changed))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    after = resources(harness, stack_id)
    # Everything changes in place, the server's metadata too (Nova's PUT metadata, as Heat).
    assert after["config"].physical_id == before["config"].physical_id
    assert after["config"].attributes == {"output": "v2"}
    assert after["reader"].physical_id == before["reader"].physical_id
    assert after["reader"].attributes == {"output": "v2"}
    assert after["web"].physical_id == before["web"].physical_id
    [put] = harness.cloud.cloud_actions
    assert (put.method, put.suffix, put.ref.id) == ("PUT", "/metadata", before["web"].physical_id)
    assert put.body["metadata"]["config"] == "v2"
    assert f"{after['bystander'].action}_{after['bystander'].status}" == "CREATE_COMPLETE"


NESTED = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "app": {
            "type": "OS::Heat::Stack",
            "properties": {
                "template": {
                    "heat_template_version": "2021-04-16",
                    "parameters": {"greeting": {"type": "string"}},
                    "resources": {
                        "vm": {
                            "type": "OS::Nova::Server",
                            "properties": {"image": "cirros", "flavor": "m1"},
                        },
                        "note": {
                            "type": "OS::Heat::TestResource",
                            "properties": {"value": {"get_param": "greeting"}},
                        },
                    },
                    "outputs": {"said": {"value": {"get_attr": ["note", "output"]}}},
                },
                "parameters": {"greeting": "hello"},
            },
        }
    },
    "outputs": {"said": {"value": {"get_attr": ["app", "outputs", "said"]}}},
}


def nested_of(h: Harness, stack_id: str) -> StackRecord:
    (child,) = h.rows(StackRecord, parent_id=stack_id)
    assert isinstance(child, StackRecord)
    return child


async def test_nested_stack_is_a_real_stack_with_a_parent(harness: Harness) -> None:
    _, stack_id = await create_stack(harness, NESTED)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"said": "hello"}
    child = nested_of(harness, stack_id)
    assert (child.parent_resource, f"{child.action}_{child.status}") == ("app", "CREATE_COMPLETE")
    assert resources(harness, stack_id)["app"].physical_id == child.id
    harness.started.append(f"stack:{child.id}")
    assert set(resources(harness, child.id)) == {"vm", "note"}


async def test_check_failed_nested_stack_replaces_only_its_failed_member(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, NESTED)
    child = nested_of(harness, stack_id)
    harness.started.append(f"stack:{child.id}")
    members = resources(harness, child.id)
    harness.cloud._set(members["vm"].physical_id or "", "SHUTOFF")
    await send(handle, "check", StackOperationRequest())
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CHECK_FAILED"
    assert resources(harness, stack_id)["app"].status == "FAILED"
    assert resources(harness, child.id)["vm"].status == "FAILED"

    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert nested_of(harness, stack_id).id == child.id  # the same nested stack
    after = resources(harness, child.id)
    assert after["vm"].physical_id != members["vm"].physical_id
    assert after["note"].physical_id == members["note"].physical_id


async def test_marked_nested_stack_is_replaced_whole(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, NESTED)
    old = nested_of(harness, stack_id)
    old_vm = resources(harness, old.id)["vm"].physical_id
    harness.started.append(f"stack:{old.id}")
    await send(
        handle, "mark_unhealthy", MarkResourceRequest(resource_name="app", mark_unhealthy=True)
    )
    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    new = nested_of(harness, stack_id)
    harness.started.append(f"stack:{new.id}")
    assert new.id != old.id
    assert old_vm not in harness.cloud.servers
    assert len(harness.cloud.servers) == 1


async def test_lock_reaches_nested_stacks(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, NESTED)
    child = nested_of(harness, stack_id)
    harness.started.append(f"stack:{child.id}")
    await send(handle, "lock", LockStackRequest(level=LockLevel.STACKS))
    await stack_settles(harness, stack_id)
    child = nested_of(harness, stack_id)
    assert f"{child.action}_{child.status}" == "LOCK_COMPLETE"
    nested = harness.env.client.get_workflow_handle(f"stack:{child.id}")
    with pytest.raises(WorkflowUpdateFailedError) as err:
        await send(nested, "update", StackOperationRequest(existing=True))
    assert "is locked" in rejection(err.value)
    with pytest.raises(WorkflowUpdateFailedError) as err:
        await send(nested, "unlock", StackOperationRequest())
    assert "unlock that one" in rejection(err.value)
    vm = resources(harness, child.id)["vm"].physical_id or ""
    assert not harness.cloud.servers[vm].locked  # level stacks leaves servers alone
    await send(handle, "unlock", StackOperationRequest())
    await stack_settles(harness, stack_id)
    assert nested_of(harness, stack_id).action == "UNLOCK"


async def test_delete_deletes_nested_stacks(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, NESTED)
    child = nested_of(harness, stack_id)
    harness.started.append(f"stack:{child.id}")
    await send(handle, "delete", StackOperationRequest())

    async def gone() -> bool:
        return not harness.rows(StackRecord, id=stack_id) and not harness.rows(
            StackRecord, id=child.id
        )

    await eventually(gone, timeout=30)
    assert harness.cloud.servers == {}


GROUP = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "asg": {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {
                "min_size": 1,
                "max_size": 3,
                "desired_capacity": 2,
                "resource": {
                    "type": "OS::Nova::Server",
                    "properties": {"image": "cirros", "flavor": "m1"},
                },
            },
        },
        "up": {
            "type": "OS::Heat::ScalingPolicy",
            "properties": {
                "auto_scaling_group_id": {"get_resource": "asg"},
                "adjustment_type": "change_in_capacity",
                "scaling_adjustment": 1,
            },
        },
        "down": {
            "type": "OS::Heat::ScalingPolicy",
            "properties": {
                "auto_scaling_group_id": {"get_resource": "asg"},
                "adjustment_type": "change_in_capacity",
                "scaling_adjustment": -1,
            },
        },
    },
    "outputs": {"size": {"value": {"get_attr": ["asg", "current_size"]}}},
}


async def test_scaling_group_grows_and_sheds_failed_member_first(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, GROUP, tags=["web"])
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"size": 2} and stack.tags == ["web"]
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")

    await send(handle, "signal", ResourceSignalRequest(resource_name="up"))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert stack.tags == ["web"]  # a scaling signal's update keeps the stack's tags
    members = resources(harness, group.id)
    assert len(members) == 3 and len(harness.cloud.servers) == 3
    # At max_size another "up" changes nothing.
    await send(handle, "signal", ResourceSignalRequest(resource_name="up"))
    assert len(resources(harness, group.id)) == 3

    newest = max(members.values(), key=lambda r: (r.created_at, r.name)).name
    nested = harness.env.client.get_workflow_handle(f"stack:{group.id}")
    await send(
        nested, "mark_unhealthy", MarkResourceRequest(resource_name=newest, mark_unhealthy=True)
    )
    await send(handle, "signal", ResourceSignalRequest(resource_name="down"))
    await stack_settles(harness, stack_id)
    remaining = resources(harness, group.id)
    assert newest not in remaining and len(remaining) == 2
    assert (await stack_settles(harness, stack_id)).outputs == {"size": 2}


async def test_failed_group_member_is_replaced_keeping_its_name(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, GROUP)
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    before = resources(harness, group.id)
    victim = sorted(before)[0]
    nested = harness.env.client.get_workflow_handle(f"stack:{group.id}")
    await send(
        nested, "mark_unhealthy", MarkResourceRequest(resource_name=victim, mark_unhealthy=True)
    )
    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    after = resources(harness, group.id)
    assert set(after) == set(before)
    assert after[victim].physical_id != before[victim].physical_id
    (other,) = set(before) - {victim}
    assert after[other].physical_id == before[other].physical_id


async def test_scaling_signal_is_refused_while_locked(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, GROUP)
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    await send(handle, "lock", LockStackRequest(level=LockLevel.STACKS))
    await stack_settles(harness, stack_id)
    with pytest.raises(WorkflowUpdateFailedError) as err:
        await send(handle, "signal", ResourceSignalRequest(resource_name="up"))
    assert "is locked" in rejection(err.value)
    with pytest.raises(WorkflowUpdateFailedError) as err:
        await send(handle, "signal", ResourceSignalRequest(resource_name="asg"))
    assert len(resources(harness, group.id)) == 2


async def test_cancel_update_stops_waits_and_rolls_back(own_harness: Harness) -> None:
    h = own_harness
    base: dict[str, Any] = {
        "heat_template_version": "2021-04-16",
        "resources": {"first": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}}},
    }
    handle, stack_id = await create_stack(h, base)
    slow = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "first": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "b", "action_wait_secs": {"update": 3600}},
            },
            "second": {"type": "OS::Heat::TestResource", "depends_on": "first"},
        },
    }
    await send(handle, "update", StackOperationRequest(template=slow))
    with pytest.raises(WorkflowUpdateFailedError):
        await send(handle, "suspend", StackOperationRequest())
    await send(handle, "cancel_update", StackOperationRequest())
    stack = await stack_settles(h, stack_id)
    assert f"{stack.action}_{stack.status}" == "ROLLBACK_COMPLETE", stack.status_reason
    rows = resources(h, stack_id)
    assert set(rows) == {"first"}
    assert rows["first"].attributes == {"output": "a"}
    with pytest.raises(WorkflowUpdateFailedError):
        await send(handle, "cancel_update", StackOperationRequest())


async def test_suspend_pauses_servers_and_resume_unpauses(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, WEB)
    with pytest.raises(WorkflowUpdateFailedError):
        await send(handle, "resume", StackOperationRequest())
    await send(handle, "suspend", StackOperationRequest())
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "SUSPEND_COMPLETE"
    server = resources(harness, stack_id)["web"].physical_id or ""
    assert harness.cloud.servers[server].status == "PAUSED"
    await send(handle, "resume", StackOperationRequest())
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "RESUME_COMPLETE"
    assert harness.cloud.servers[server].status == "ACTIVE"


CHAIN: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "release": {"type": "string", "default": "r1"},
        "fail_last": {"type": "boolean", "default": False},
    },
    "resources": {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": {"get_param": "release"}}},
        "vm": {
            "type": "OS::Nova::Server",
            "properties": {
                "image": "cirros",
                "flavor": "m1",
                "name": {"get_param": "OS::stack_name"},
            },
        },
        "b": {
            "type": "OS::Heat::TestResource",
            "properties": {"fail": {"get_param": "fail_last"}, "value": {"get_param": "release"}},
            "depends_on": "a",
        },
    },
    "outputs": {"who": {"value": {"get_param": "OS::stack_name"}}},
}


async def test_update_after_a_failed_update_redoes_only_what_it_missed(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, CHAIN)
    stack = await stack_settles(harness, stack_id)
    assert stack.outputs == {"who": "shop"}  # pseudo parameters resolve
    vm = resources(harness, stack_id)["vm"]
    assert harness.cloud.servers[vm.physical_id or ""].name == "shop"
    bad = StackOperationRequest(existing=True, parameters={"release": "r2", "fail_last": True})
    await send(handle, "update", bad)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_FAILED"
    assert stack.parameters == {"release": "r2", "fail_last": True}  # Heat keeps the new ones
    a_after_failure = resources(harness, stack_id)["a"]
    assert a_after_failure.attributes == {"output": "r2"}

    await send(
        handle, "update", StackOperationRequest(existing=True, parameters={"fail_last": False})
    )
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    rows = resources(harness, stack_id)
    assert rows["a"].updated_at == a_after_failure.updated_at  # already applied: untouched
    assert rows["b"].attributes == {"output": "r2"}
    assert rows["vm"].physical_id == vm.physical_id


async def test_rollback_leaves_resources_the_update_never_reached(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, CHAIN, disable_rollback=False)
    vm = resources(harness, stack_id)["vm"]
    changed = {**CHAIN, "resources": {**CHAIN["resources"]}}
    changed["resources"]["vm"] = {
        "type": "OS::Nova::Server",
        "properties": {"image": "cirros", "flavor": "m2"},
        "depends_on": "b",
    }
    await send(
        handle, "update", StackOperationRequest(template=changed, parameters={"fail_last": True})
    )
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "ROLLBACK_COMPLETE", stack.status_reason
    assert stack.parameters == {}
    rows = resources(harness, stack_id)
    assert rows["vm"].physical_id == vm.physical_id  # never reached: not replaced back and forth
    assert rows["b"].status == "COMPLETE"


def with_external(external_id: str | None) -> dict[str, Any]:
    """heat-tempest-plugin's external reference template: a TestResource and an output."""
    resource: dict[str, Any] = {"type": "OS::Heat::TestResource"}
    if external_id is not None:
        resource["external_id"] = external_id
    return {
        "heat_template_version": "2016-10-14",
        "resources": {"test1": resource},
        "outputs": {"str": {"value": {"get_resource": "test1"}}},
    }


async def test_an_external_resource_is_adopted_never_updated_and_left_on_delete(
    harness: Harness,
) -> None:
    handle, stack_id = await create_stack(harness, with_external("foobar"))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs["str"] == "foobar"
    assert resources(harness, stack_id)["test1"].physical_id == "foobar"

    # The same template again: nothing to do. Dropping the external_id: Heat refuses.
    await send(handle, "update", StackOperationRequest(template=with_external("foobar")))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    await send(handle, "update", StackOperationRequest(template=with_external(None)))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_FAILED"
    assert "Update to property external_id of test1" in stack.status_reason


async def test_an_external_id_may_be_a_parameter(harness: Harness) -> None:
    template = with_external(None)
    template["parameters"] = {"server_id": {"type": "string"}}
    template["resources"]["test1"]["external_id"] = {"get_param": "server_id"}
    _, stack_id = await create_stack(harness, template, parameters={"server_id": "adopted-1"})
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs["str"] == "adopted-1"
    assert resources(harness, stack_id)["test1"].physical_id == "adopted-1"


async def test_adding_an_external_id_to_a_made_resource_fails_the_update(
    harness: Harness,
) -> None:
    handle, stack_id = await create_stack(harness, with_external(None))
    await stack_settles(harness, stack_id)
    await send(handle, "update", StackOperationRequest(template=with_external("foobar")))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_FAILED"
    assert "is not supported" in stack.status_reason


async def test_an_external_server_must_exist_and_outlives_its_stack(harness: Harness) -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {"web": {"type": "OS::Nova::Server", "external_id": "no-such-server"}},
    }
    _, stack_id = await create_stack(harness, template)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert "Invalid external resource: Resource no-such-server (OS::Nova::Server)" in (
        stack.status_reason
    )

    _, made_id = await create_stack(harness, WEB)
    await stack_settles(harness, made_id)
    server = resources(harness, made_id)["web"].physical_id
    assert server is not None
    adopt = {
        "heat_template_version": "2016-10-14",
        "resources": {"web": {"type": "OS::Nova::Server", "external_id": server}},
    }
    handle, stack_id = await create_stack(harness, adopt)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    await send(handle, "delete", StackOperationRequest())
    await handle.result()
    assert server in harness.cloud.servers  # adopted, so not deleted with the stack


KEPT: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "kept": {
            "type": "OS::Nova::Server",
            "deletion_policy": "Retain",
            "properties": {"image": "cirros", "flavor": "m1.tiny"},
        },
        "gone": {
            "type": "OS::Nova::Server",
            "properties": {"image": "cirros", "flavor": "m1.tiny"},
        },
    },
}


async def test_deletion_policy_retain_keeps_the_server_when_replaced_and_on_delete(
    harness: Harness,
) -> None:
    """Heat's `Retain`: the resource leaves the stack, its server stays in the cloud."""
    handle, stack_id = await create_stack(harness, KEPT)
    first = resources(harness, stack_id)["kept"].physical_id or ""
    await send(
        handle, "mark_unhealthy", MarkResourceRequest(resource_name="kept", mark_unhealthy=True)
    )
    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    second = resources(harness, stack_id)["kept"].physical_id or ""
    assert second != first
    assert first in harness.cloud.servers  # replaced, but retained
    other = resources(harness, stack_id)["gone"].physical_id or ""

    await send(handle, "delete", StackOperationRequest())

    async def deleted() -> bool:
        return not harness.rows(StackRecord, id=stack_id)

    await eventually(deleted, timeout=30)
    assert {first, second} <= set(harness.cloud.servers)
    assert other not in harness.cloud.servers
    reasons = [e.status_reason for e in harness.rows(EventRecord, stack_id=stack_id)]
    assert f"Retained {second} (deletion_policy: Retain)" in reasons


async def test_cancel_without_rollback_stops_a_create_and_leaves_it_failed(
    own_harness: Harness,
) -> None:
    h = own_harness
    slow = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "first": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}},
            "second": {
                "type": "OS::Heat::TestResource",
                "properties": {"action_wait_secs": {"create": 3600}},
                "depends_on": "first",
            },
        },
    }
    handle, stack_id = await create_stack(h, slow, disable_rollback=False, wait=False)

    async def waiting() -> bool:
        return "second" in resources(h, stack_id)

    await eventually(waiting, timeout=30, what="the second resource waiting")
    await send(handle, "cancel_without_rollback", StackOperationRequest())
    stack = await stack_settles(h, stack_id)
    assert (f"{stack.action}_{stack.status}", stack.status_reason) == (
        "CREATE_FAILED",
        "Stack CREATE cancelled",
    )
    assert "first" in resources(h, stack_id)  # no rollback: what was made stays
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await send(handle, "cancel_without_rollback", StackOperationRequest())
    assert "is not supported" in str(refused.value.cause)
