"""Rolling updates of groups on the time-skipping server: batches, failed first, pauses."""

from __future__ import annotations

import itertools
import time
from typing import Any

from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import WorkflowHandle

from domain.stack.requests import MarkResourceRequest, StackOperationRequest
from store.events import EventRecord
from tests.support.eventually import eventually
from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import (
    create_stack,
    nested_of,
    resources,
    send,
    stack_settles,
)
from workflows.ids import stack_operation

ROLLING = {"rolling_update": {"max_batch_size": 2, "min_in_service": 4, "pause_time": 60}}


def six_members(value: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "update_policy": ROLLING,
                "properties": {
                    "count": 6,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": f"{value}-%index%"},
                    },
                },
            }
        },
        "outputs": {"values": {"value": {"get_attr": ["group", "attributes", "output"]}}},
    }


async def current_details(handle: WorkflowHandle[Any, Any]) -> str:
    """What the Temporal UI shows as the workflow's current details."""
    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return str(metadata.current_details)


def member_events(h: Harness, group_id: str) -> list[EventRecord]:
    rows = h.rows(EventRecord, stack_id=group_id, action="UPDATE")
    return sorted((e for e in rows if e.obj_type == "resource"), key=lambda e: e.seq or 0)


def batches_of(events: list[EventRecord]) -> list[set[str]]:
    """Members the nested stack started updating, one set per nested update (batch)."""
    batches: dict[str, set[str]] = {}
    for e in events:
        if e.status == "IN_PROGRESS" and e.action_id:
            batches.setdefault(e.action_id, set()).add(e.obj_name)
    return list(batches.values())


def fewest_in_service(events: list[EventRecord], size: int, unhealthy: set[str]) -> int:
    busy: set[str] = set()
    fewest = size - len(unhealthy)
    for e in events:
        if e.status == "IN_PROGRESS":
            busy.add(e.obj_name)
        elif e.status == "COMPLETE" and not e.status_reason.startswith("Deleted replaced"):
            busy.discard(e.obj_name)
            unhealthy.discard(e.obj_name)
        fewest = min(fewest, size - len(busy | unhealthy))
    return fewest


async def test_rolling_update_replaces_the_unhealthy_member_first_in_batches(
    own_harness: Harness,
) -> None:
    harness = own_harness  # skips time: a server of its own (see test_scale_in_workflow)
    handle, stack_id = await create_stack(harness, six_members("v1"))
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    before = resources(harness, group.id)
    nested = harness.env.client.get_workflow_handle(f"stack:{group.id}")
    await send(
        nested, "mark_unhealthy", MarkResourceRequest(resource_name="3", mark_unhealthy=True)
    )

    started = time.monotonic()
    await send(handle, "update", StackOperationRequest(template=six_members("v2")))
    await harness.env.sleep(150)  # the time-skipping server runs both pauses out at once
    stack = await stack_settles(harness, stack_id)
    elapsed = time.monotonic() - started
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert stack.outputs["values"] == {str(i): f"v2-{i}" for i in range(6)}
    after = resources(harness, group.id)
    assert sorted(after) == sorted(before) == [str(i) for i in range(6)]
    assert after["3"].physical_id != before["3"].physical_id  # replaced, same name
    assert after["0"].physical_id == before["0"].physical_id  # updated in place

    events = member_events(harness, group.id)
    batches = batches_of(events)
    assert len(batches) == 3 and all(len(b) <= 2 for b in batches), batches
    assert "3" in batches[0]
    assert set().union(*batches) == set(before)
    assert fewest_in_service(events, 6, {"3"}) >= 4
    # The two 60 s pauses passed in workflow time, not in wall time.
    first_done = max(e.timestamp for e in events if e.obj_name in batches[0])
    second_start = min(
        e.timestamp for e in events if e.obj_name in batches[1] and e.status == "IN_PROGRESS"
    )
    assert (second_start - first_done).total_seconds() >= 60
    assert elapsed < 30


async def test_update_without_a_new_definition_does_not_roll(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, six_members("v1"))
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    await send(handle, "update", StackOperationRequest(existing=True))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert batches_of(member_events(harness, group.id)) == []


async def test_cancel_update_in_a_pause_stops_the_roll_and_rolls_back(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, six_members("v1"), disable_rollback=False)
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    before = resources(harness, group.id)
    slow = six_members("v2")
    slow["resources"]["group"]["update_policy"] = {
        "rolling_update": {"max_batch_size": 2, "min_in_service": 4, "pause_time": 3600}
    }
    accepted = await send(handle, "update", StackOperationRequest(template=slow))

    async def first_batch_done() -> list[EventRecord] | None:
        events = member_events(harness, group.id)
        done = [e for e in events if e.status == "COMPLETE"]
        return events if len(done) == 2 else None

    first = batches_of(await eventually(first_batch_done, timeout=30))
    op = harness.env.client.get_workflow_handle(stack_operation(stack_id, accepted.action_id))

    async def paused() -> str | None:
        details = await current_details(op)
        return details if "paused 3600 s after batch 1/3" in details else None

    details = await eventually(paused, timeout=30)
    assert "- `group`: rolling update paused" in details and "cancel_update" in details
    await send(handle, "cancel_update", StackOperationRequest())
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "ROLLBACK_COMPLETE", stack.status_reason
    assert stack.outputs["values"] == {str(i): f"v1-{i}" for i in range(6)}
    after = resources(harness, group.id)
    # The group's nested stack was rolled back member by member, not rebuilt.
    assert {n: r.physical_id for n, r in after.items()} == {
        n: r.physical_id for n, r in before.items()
    }
    # Only the first batch took v2; the rollback put back just those two members.
    batches = batches_of(member_events(harness, group.id))
    assert len(first) == 1 and len(first[0]) == 2, first
    assert batches == [first[0], first[0]], batches


def scaling_group(value: str) -> dict[str, Any]:
    # min_in_service + max_batch_size <= size: no surge member, so no name changes (with
    # a surge, Heat's last batch drops the oldest member and the surge one stays).
    policy = {"rolling_update": {"max_batch_size": 2, "min_in_service": 2, "pause_time": 30}}
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "asg": {
                "type": "OS::Heat::AutoScalingGroup",
                "update_policy": policy,
                "properties": {
                    "min_size": 1,
                    "max_size": 6,
                    "desired_capacity": 4,
                    "resource": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": value},
                    },
                },
            }
        },
        "outputs": {"values": {"value": {"get_attr": ["asg", "outputs", "output"]}}},
    }


async def test_scaling_group_rolls_its_failed_member_first_keeping_names(
    own_harness: Harness,
) -> None:
    harness = own_harness  # skips time: a server of its own (see test_scale_in_workflow)
    handle, stack_id = await create_stack(harness, scaling_group("v1"))
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    before = resources(harness, group.id)
    oldest_first = sorted(before.values(), key=lambda r: (r.created_at, r.name))
    newest = oldest_first[-1].name  # the last one a roll would reach if it were healthy
    nested = harness.env.client.get_workflow_handle(f"stack:{group.id}")
    await send(
        nested, "mark_unhealthy", MarkResourceRequest(resource_name=newest, mark_unhealthy=True)
    )

    await send(handle, "update", StackOperationRequest(template=scaling_group("v2")))
    await harness.env.sleep(100)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    after = resources(harness, group.id)
    assert sorted(after) == sorted(before)
    assert stack.outputs["values"] == dict.fromkeys(before, "v2")
    assert after[newest].physical_id != before[newest].physical_id  # replaced, same name
    kept = [n for n in before if n != newest]
    assert all(after[n].physical_id == before[n].physical_id for n in kept)

    events = member_events(harness, group.id)
    batches = batches_of(events)
    assert len(batches) == 2 and all(len(b) <= 2 for b in batches), batches
    assert batches[0] == {newest, oldest_first[0].name}
    assert fewest_in_service(events, 4, {newest}) >= 2


def batch_created(count: int) -> dict[str, Any]:
    template = six_members("v1")
    group = template["resources"]["group"]
    group["properties"]["count"] = count
    group["update_policy"] = {"batch_create": {"max_batch_size": 2, "pause_time": 60}}
    return template


async def test_batch_create_makes_members_two_at_a_time_with_a_pause(own_harness: Harness) -> None:
    harness = own_harness  # skips time: a server of its own (see test_scale_in_workflow)
    _, stack_id = await create_stack(harness, batch_created(5), wait=False)
    await harness.env.sleep(150)  # both 60 s pauses, in workflow time
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs["values"] == {str(i): f"v1-{i}" for i in range(5)}
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    assert sorted(resources(harness, group.id)) == ["0", "1", "2", "3", "4"]

    rows = harness.rows(EventRecord, stack_id=group.id, status="IN_PROGRESS")
    starts = sorted((e for e in rows if e.obj_type == "resource"), key=lambda e: e.seq or 0)
    batches: dict[str, set[str]] = {}
    for e in starts:
        batches.setdefault(e.action_id, set()).add(e.obj_name)
    assert list(batches.values()) == [{"0", "1"}, {"2", "3"}, {"4"}]
    first = [e.timestamp for e in starts if e.obj_name in ("0", "2", "4")]
    assert all((b - a).total_seconds() >= 60 for a, b in itertools.pairwise(first))
