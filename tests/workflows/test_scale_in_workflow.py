"""Scale-in with lifecycle hooks on the time-skipping server: hours of waiting in ms.

Tests that skip time with `env.sleep` use `own_harness`, a time-skipping server of
their own: on the shared one, work left by earlier tests can hold the clock.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from domain.actions import ActionName
from domain.cluster.lifecycle import DeletionSettings, HookDelivery, LifecycleNote
from domain.cluster.requests import (
    ClusterOperationRequest,
    LockClusterRequest,
    MarkNodeRequest,
    PolicyAttachRequest,
)
from domain.cluster.state import AttachedPolicy, ClusterState
from store.actions import ActionRecord
from store.clusters import ClusterRecord, NodeRecord
from store.events import EventRecord
from tests.support.eventually import eventually
from tests.workflows.support import Harness
from workflows.cluster.operations import NodesOperationResult
from workflows.cluster.scale_in import VICTIM_START_WAVES, ScaleInInput, ScaleInWorkflow

HOUR = 3600


def deletion_policy(timeout: int, **extra: Any) -> PolicyAttachRequest:
    props: dict[str, Any] = {
        "criteria": "OLDEST_FIRST",
        "hooks": {"type": "webhook", "params": {"url": "http://app.test/hook"}, "timeout": timeout},
        **extra,
    }
    return PolicyAttachRequest(
        policy=AttachedPolicy(
            policy_id=str(uuid.uuid4()),
            name="drain-first",
            type="senlin.policy.deletion",
            properties=props,
        )
    )


async def hooked_cluster(
    harness: Harness, *, size: int = 3, timeout: int = HOUR, **kw: Any
) -> tuple[WorkflowHandle[object, object], str]:
    handle, cluster_id = await harness.create(desired=size, **kw)
    await harness.update(handle, "policy_attach", deletion_policy(timeout))
    return handle, cluster_id


async def scale_in(harness: Harness, handle: WorkflowHandle[object, object], count: int = 1) -> str:
    accepted = await harness.update(
        handle, "scale_in", ClusterOperationRequest(params={"count": count})
    )
    return accepted.action_id


def tokens_of(harness: Harness, parent: str) -> list[ActionRecord]:
    return [
        a for a in harness.rows(ActionRecord, name="NODE_DELETE") if parent in (a.depended_by or [])
    ]


async def waiting_tokens(
    harness: Harness, parent: str, n: int = 1, *, messages: int | None = None
) -> list[ActionRecord]:
    """The parent's `n` victims once they wait, and their apps got `messages` (default n)."""
    delivered = n if messages is None else messages

    async def waiting() -> list[ActionRecord] | None:
        found = [
            a for a in tokens_of(harness, parent) if a.status == "WAITING_LIFECYCLE_COMPLETION"
        ]
        return found if len(found) == n and len(harness.cloud.messages) >= delivered else None

    return await eventually(waiting, what=f"{n} victim(s) waiting on hooks")


async def test_scale_in_waits_for_complete_lifecycle_then_deletes_node(harness: Harness) -> None:
    handle, cluster_id = await hooked_cluster(harness)
    parent = await scale_in(harness, handle)
    [token] = await waiting_tokens(harness, parent)
    assert (await harness.action_status(parent, "WAITING")).status == "WAITING"
    message = harness.cloud.messages[-1].message
    assert message.lifecycle_action_token == token.id
    assert message.complete_url == f"http://warden.test/v1/clusters/{cluster_id}/actions"
    assert message.node_name == "web-1"  # OLDEST_FIRST; all equally old → by name
    assert harness.cloud.deleted == []

    node_delete = harness.env.client.get_workflow_handle(f"node-delete:{token.id}")
    await node_delete.signal("complete_lifecycle", LifecycleNote(source="test"))
    action = await harness.action_ends(parent)
    assert action.status == "SUCCEEDED"
    done = await harness.action_ends(token.id)
    assert done.status == "SUCCEEDED" and "complete_lifecycle received" in done.status_reason
    assert len(harness.cloud.deleted) == 1
    assert sorted(n.name for n in harness.rows(NodeRecord, cluster_id=cluster_id)) == [
        "web-2",
        "web-3",
    ]
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert (cluster.desired_capacity, cluster.status) == (2, "ACTIVE")


async def test_scale_in_deletes_node_when_hook_times_out(own_harness: Harness) -> None:
    harness = own_harness
    handle, _ = await hooked_cluster(harness, timeout=2 * HOUR)
    parent = await scale_in(harness, handle)
    [token] = await waiting_tokens(harness, parent)
    await harness.env.sleep(timedelta(hours=1))
    assert (await harness.action_status(token.id, "WAITING_LIFECYCLE_COMPLETION")).id == token.id
    await harness.env.sleep(timedelta(hours=1, minutes=1))
    done = await harness.action_ends(token.id)
    assert done.status == "SUCCEEDED" and "timed out" in done.status_reason
    assert len(harness.cloud.deleted) == 1


async def test_heartbeat_restarts_the_hook_timer(own_harness: Harness) -> None:
    harness = own_harness
    handle, _ = await hooked_cluster(harness, timeout=HOUR)
    parent = await scale_in(harness, handle)
    [token] = await waiting_tokens(harness, parent)
    node_delete = harness.env.client.get_workflow_handle(f"node-delete:{token.id}")
    await harness.env.sleep(timedelta(minutes=50))
    await node_delete.signal("heartbeat_lifecycle")
    await harness.env.sleep(timedelta(minutes=30))  # 80 min after the message: still waiting
    [still] = [a for a in tokens_of(harness, parent) if a.id == token.id]
    assert still.status == "WAITING_LIFECYCLE_COMPLETION"
    assert still.outputs.get("heartbeats") == 1
    await harness.env.sleep(timedelta(minutes=31))
    done = await harness.action_ends(token.id)
    assert "timed out" in done.status_reason and done.outputs["heartbeats"] == 1


async def test_wait_ends_early_when_the_server_disappears(own_harness: Harness) -> None:
    harness = own_harness
    handle, _ = await hooked_cluster(harness, timeout=10 * HOUR, poll_s=60)
    parent = await scale_in(harness, handle)
    [token] = await waiting_tokens(harness, parent)
    message = harness.cloud.messages[-1].message
    harness.cloud.servers.pop(message.resource_id)
    await harness.env.sleep(timedelta(minutes=2))
    done = await harness.action_ends(token.id)
    assert "server disappeared" in done.status_reason


async def test_marked_unhealthy_node_is_first_victim_and_skips_the_wait(harness: Harness) -> None:
    handle, cluster_id = await hooked_cluster(harness, size=3)
    web3 = next(n for n in harness.rows(NodeRecord, cluster_id=cluster_id) if n.name == "web-3")
    await harness.update(
        handle, "mark_unhealthy", MarkNodeRequest(node_id=web3.id, mark_unhealthy=True)
    )
    [marked] = harness.rows(NodeRecord, id=web3.id)
    assert (marked.status, marked.status_reason) == ("ERROR", "Marked unhealthy by user")
    # One level mapping for node events: a node in ERROR is an ERROR event (Senlin's).
    [event] = harness.rows(EventRecord, obj_id=web3.id, action="NODE_MARK_UNHEALTHY")
    assert (event.status, event.level) == ("ERROR", "ERROR")
    parent = await scale_in(harness, handle)
    action = await harness.action_ends(parent)
    assert action.status == "SUCCEEDED"
    assert harness.cloud.messages == []  # not ACTIVE: no message, no wait
    assert sorted(n.name for n in harness.rows(NodeRecord, cluster_id=cluster_id)) == [
        "web-1",
        "web-2",
    ]


async def test_scale_in_below_min_size_fails_the_action_and_leaves_the_cluster(
    harness: Harness,
) -> None:
    """Senlin's action refuses it, not its service: the action FAILED with the reason."""
    handle, cluster_id = await harness.create(desired=1, min_size=1)
    action = await harness.action_ends(await scale_in(harness, handle))
    assert (action.status, action.status_reason) == (
        "FAILED",
        "The target capacity (0) is less than the cluster's min_size (1).",
    )
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert (cluster.status, cluster.desired_capacity) == ("ACTIVE", 1)
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 1
    # the cluster is idle again at once
    assert (await harness.action_ends(await scale_in(harness, handle))).status == "FAILED"


async def test_busy_cluster_rejects_a_second_operation_with_409(harness: Harness) -> None:
    handle, _ = await hooked_cluster(harness, size=3)
    parent = await scale_in(harness, handle)
    await waiting_tokens(harness, parent)
    for name, req in (
        ("scale_out", ClusterOperationRequest(params={"count": 1})),
        ("scale_in", ClusterOperationRequest(params={"count": 1})),
        ("check", ClusterOperationRequest()),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as failed:
            await harness.update(handle, name, req)
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError) and cause.type == "ActionInProgress"
        assert "already has an action (CLUSTER_SCALE_IN) in progress" in cause.message


async def test_locked_cluster_refuses_scaling_and_node_delete(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=2)
    await harness.update(handle, "lock", LockClusterRequest(reason="maintenance", owner="ops"))
    node = harness.rows(NodeRecord, cluster_id=cluster_id)[0]
    for name, params in (
        ("scale_in", {"count": 1}),
        ("scale_out", {"count": 1}),
        ("resize", {"adjustment_type": "EXACT_CAPACITY", "number": 1}),
        ("del_nodes", {"nodes": [node.id]}),
        ("delete_node", {"nodes": [node.id]}),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as failed:
            await harness.update(handle, name, ClusterOperationRequest(params=params))
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError) and cause.type == "Conflict", name
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 2


async def test_scale_out_adds_nodes_with_new_names(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=2)
    node = next(n for n in harness.rows(NodeRecord, cluster_id=cluster_id) if n.name == "web-2")
    await harness.action_ends(
        (
            await harness.update(
                handle, "del_nodes", ClusterOperationRequest(params={"nodes": [node.id]})
            )
        ).action_id
    )
    accepted = await harness.update(
        handle, "scale_out", ClusterOperationRequest(params={"count": 2})
    )
    assert (await harness.action_ends(accepted.action_id)).status == "SUCCEEDED"
    names = sorted(n.name for n in harness.rows(NodeRecord, cluster_id=cluster_id))
    assert names == ["web-1", "web-3", "web-4"]  # names are never reused
    state = await handle.query("describe", result_type=ClusterState)
    assert state.desired_capacity == 3


async def test_resize_changes_bounds_and_capacity(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=4)
    accepted = await harness.update(
        handle,
        "resize",
        ClusterOperationRequest(
            params={"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -50, "min_size": 1}
        ),
    )
    assert (await harness.action_ends(accepted.action_id)).status == "SUCCEEDED"
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert (cluster.desired_capacity, cluster.min_size) == (2, 1)
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 2


async def test_del_nodes_with_unknown_node_is_rejected(harness: Harness) -> None:
    handle, _ = await harness.create(desired=1)
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(handle, "del_nodes", ClusterOperationRequest(params={"nodes": ["x"]}))
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidRequest"
    assert "Nodes not members of specified cluster: ['x']" in cause.message


async def test_hook_target_down_still_deletes_at_the_deadline_and_records_why(
    own_harness: Harness,
) -> None:
    harness = own_harness
    harness.cloud.hook_down = True
    handle, _ = await hooked_cluster(harness, timeout=120)
    parent = await scale_in(harness, handle)

    async def started() -> list[ActionRecord] | None:
        return tokens_of(harness, parent) or None

    await eventually(started, what="victim recorded")
    await harness.env.sleep(timedelta(minutes=3))
    action = await harness.action_ends(parent)
    assert action.status == "SUCCEEDED"
    [token] = tokens_of(harness, parent)
    assert "timed out" in token.status_reason
    reasons = [e.status_reason for e in harness.rows(EventRecord, action_id=token.id)]
    assert any("not delivered" in r or "delivery failed" in r for r in reasons), reasons


async def victim_steps(harness: Harness, token: str) -> list[str]:
    """A victim's history as event types, with the activity or marker each one names."""
    history = await harness.env.client.get_workflow_handle(f"node-delete:{token}").fetch_history()
    steps = []
    for event in history.events:
        kind = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
        if event.HasField("activity_task_scheduled_event_attributes"):
            kind += f" {event.activity_task_scheduled_event_attributes.activity_type.name}"
        if event.HasField("marker_recorded_event_attributes"):
            kind += f" {event.marker_recorded_event_attributes.marker_name}"
        steps.append(kind)
    return steps


async def test_app_answering_while_its_message_is_delivered_is_heard(harness: Harness) -> None:
    # The app calls complete_lifecycle before its webhook even answers: the first
    # attempt is a local activity, so the signal waits in Temporal for that task to end.
    async def answer_at_once(delivery: HookDelivery) -> None:
        token = delivery.message.lifecycle_action_token
        victim = harness.env.client.get_workflow_handle(f"node-delete:{token}")
        await victim.signal("complete_lifecycle", LifecycleNote(source="app"))

    harness.cloud.on_message = answer_at_once
    handle, _ = await hooked_cluster(harness)
    parent = await scale_in(harness, handle)
    assert (await harness.action_ends(parent)).status == "SUCCEEDED"
    [token] = tokens_of(harness, parent)
    assert token.status == "SUCCEEDED" and "complete_lifecycle received" in token.status_reason
    reasons = [e.status_reason for e in harness.rows(EventRecord, action_id=token.id)]
    assert "complete_lifecycle received via app" in reasons, reasons
    assert [m.prior_attempts for m in harness.cloud.messages] == [0]
    steps = await victim_steps(harness, token.id)
    # One task delivers the message and starts the deadline; no delivery activity, no
    # patch marker: the lean history docs/performance.md measures.
    assert "ACTIVITY_TASK_SCHEDULED deliver_lifecycle_message" not in steps
    assert steps.count("MARKER_RECORDED core_local_activity") == 1
    assert not any("core_patch" in s for s in steps), steps
    assert steps.count("WORKFLOW_TASK_COMPLETED") == 3, steps


@pytest.mark.parametrize(
    "target",
    [
        "busy",  # answers 503 once: a retryable failure
        # Slower than FIRST_ATTEMPT_TIMEOUT (2 s): the local attempt holds a workflow
        # task slot of the worker, so it gives up and the activity delivers instead.
        "slow",
    ],
)
async def test_first_delivery_attempt_failing_is_retried_by_an_activity(
    harness: Harness, target: str
) -> None:
    if target == "busy":
        harness.cloud.hook_busy = 1
    else:
        harness.cloud.hook_slow = 1
    handle, _ = await hooked_cluster(harness)
    parent = await scale_in(harness, handle)
    [token] = await waiting_tokens(harness, parent)
    # The activity's attempts continue the local attempt's count in events and logs.
    assert [m.prior_attempts for m in harness.cloud.messages] == [1]
    steps = await victim_steps(harness, token.id)
    assert "ACTIVITY_TASK_SCHEDULED deliver_lifecycle_message" in steps
    node_delete = harness.env.client.get_workflow_handle(f"node-delete:{token.id}")
    await node_delete.signal("complete_lifecycle", LifecycleNote(source="test"))
    done = await harness.action_ends(token.id)
    assert done.status == "SUCCEEDED" and "complete_lifecycle received" in done.status_reason
    assert len(harness.cloud.deleted) == 1


async def test_message_only_hook_delivers_then_deletes_without_waiting(harness: Harness) -> None:
    handle, _ = await hooked_cluster(harness, timeout=0)
    parent = await scale_in(harness, handle)
    assert (await harness.action_ends(parent)).status == "SUCCEEDED"
    [token] = tokens_of(harness, parent)
    assert token.status == "SUCCEEDED" and "hook timeout is 0, no wait" in token.status_reason
    [message] = harness.cloud.messages
    assert (message.message.timeout, message.message.lifecycle_action_token) == (0, token.id)
    assert "TIMER_STARTED" not in await victim_steps(harness, token.id)
    assert len(harness.cloud.deleted) == 1


async def test_rejected_first_attempt_is_not_retried_and_the_wait_goes_on(harness: Harness) -> None:
    harness.cloud.hook_down = True  # a 4xx: the target will never take it
    handle, _ = await hooked_cluster(harness)
    parent = await scale_in(harness, handle)
    [token] = await waiting_tokens(harness, parent, messages=0)

    async def first_task_ended() -> list[str] | None:
        # The token's row says WAITING just before the victim's workflow starts, and no
        # message proves it started: read its history once its first task has ended.
        with contextlib.suppress(RPCError):
            steps = await victim_steps(harness, token.id)
            return steps if "WORKFLOW_TASK_COMPLETED" in steps else None
        return None

    steps = await eventually(first_task_ended, what="the victim's first task ended")
    assert "ACTIVITY_TASK_SCHEDULED deliver_lifecycle_message" not in steps
    node_delete = harness.env.client.get_workflow_handle(f"node-delete:{token.id}")
    await node_delete.signal("complete_lifecycle", LifecycleNote(source="operator"))
    done = await harness.action_ends(token.id)
    assert done.status == "SUCCEEDED"
    reasons = [e.status_reason for e in harness.rows(EventRecord, action_id=token.id)]
    assert any("delivery failed: hook target answered 410" in r for r in reasons), reasons


async def test_shards_start_one_after_another_and_remove_every_victim(harness: Harness) -> None:
    # Five victims in shards of two: three shards. Each starts its victims' deletions
    # only once the one before has started all of its own (docs/performance.md: started together,
    # their child starts queue in front of every victim's signal on the server's store).
    top, state, result = await remove_every_node(harness, 5, shard_size=2)
    assert sorted(result.removed) == sorted(n.node_id for n in state.nodes)
    assert result.error == "" and result.nodes == []
    assert len(harness.cloud.deleted) == 5

    steps = []
    async for event in top.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            child = event.start_child_workflow_execution_initiated_event_attributes.workflow_id
            steps.append(f"start {child.rpartition(':')[2]}")
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
            signal = event.workflow_execution_signaled_event_attributes.signal_name
            steps.append(signal)
    assert steps == [
        "start shard-0",
        "shard_started",
        "start shard-1",
        "shard_started",
        "start shard-2",
        "shard_started",
    ]
    for i, victims in enumerate((2, 2, 1)):
        shard = harness.env.client.get_workflow_handle(f"{top.id}:shard-{i}")
        kinds = [
            EventType.Name(e.event_type)
            async for e in shard.fetch_history_events()
            if e.event_type
            in (
                EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
                EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
            )
        ]
        # Every victim started before the shard tells its parent.
        assert kinds == [
            *["EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED"] * victims,
            "EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED",
        ], kinds


async def test_victims_start_in_waves_each_once_the_one_before_has_started(
    harness: Harness,
) -> None:
    # Five victims in waves of two: the server takes the parent's lock for every child
    # it starts, so hundreds of starts at once time out on it and retry (docs/performance.md).
    top, state, result = await remove_every_node(harness, 5, start_wave=2)
    assert sorted(result.removed) == sorted(n.node_id for n in state.nodes)
    assert result.error == "" and result.nodes == []
    assert len(harness.cloud.deleted) == 5

    steps = []
    async for event in top.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            steps.append("initiated")
        elif event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            steps.append("started")
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            steps.append(_patch_of(event))
    # Only the starts matter here: victims may end (and their ends be recorded) early.
    starts = [s for s in steps if s in ("initiated", "started")][:10]
    assert starts == ["initiated"] * 2 + ["started"] * 2 + ["initiated"] * 2 + ["started"] * 2 + [
        "initiated",
        "started",
    ], steps
    assert steps.count(VICTIM_START_WAVES) == 1  # asked once: there is more than one wave


async def test_a_single_wave_of_victims_carries_no_patch_marker(harness: Harness) -> None:
    top, _, result = await remove_every_node(harness, 2, start_wave=2)
    assert len(result.removed) == 2
    patches = [
        _patch_of(e)
        async for e in top.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    assert VICTIM_START_WAVES not in patches, patches


async def remove_every_node(
    harness: Harness, size: int, **settings: int
) -> tuple[WorkflowHandle[Any, Any], ClusterState, NodesOperationResult]:
    """A `size`-node cluster, all of it removed by a ScaleInWorkflow started directly with
    `settings` (`shard_size`, `start_wave`); the run, the cluster before and the result."""
    handle, cluster_id = await harness.create(desired=size)
    state = await handle.query("describe", result_type=ClusterState)
    action_id = str(uuid.uuid4())
    top = await harness.env.client.start_workflow(
        ScaleInWorkflow.run,
        ScaleInInput(
            project_id="p1",
            cluster_id=cluster_id,
            cluster_name="web",
            action_id=action_id,
            action_name=ActionName.CLUSTER_SCALE_IN,
            victims=state.nodes,
            deletion=DeletionSettings(),
            complete_url=f"http://warden.test/v1/clusters/{cluster_id}/actions",
            **settings,
        ),
        id=f"cluster-op:{cluster_id}:{action_id}",
        task_queue=harness.task_queue,
    )
    harness.started.append(top.id)
    return top, state, await top.result()


def _patch_of(event: HistoryEvent) -> str:
    """The patch id a marker records ("" for other markers, e.g. local activities)."""
    attrs = event.marker_recorded_event_attributes
    if attrs.marker_name != "core_patch":
        return ""
    data = [json.loads(p.data) for ps in attrs.details.values() for p in ps.payloads]
    return ",".join(str(d["id"]) for d in data if isinstance(d, dict) and "id" in d)
