"""ClusterWorkflow on the time-skipping server: the entity-workflow spine end to end.

The store activity is the real one (SQLite in tmp_path); compute activities are
fakes registered under the real names (docs/style.md §Tests).
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from domain.cluster.requests import ClusterOperationRequest, LockClusterRequest, OperationAccepted
from domain.cluster.state import ClusterState
from store.actions import ActionRecord
from store.clusters import ClusterRecord, NodeRecord
from store.events import EventRecord
from tests.support.eventually import eventually
from tests.workflows.support import Harness


async def test_create_makes_every_node_active_and_projects_it(harness: Harness) -> None:
    _, cluster_id = await harness.create(desired=3)
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert cluster.status == "ACTIVE"
    nodes = harness.rows(NodeRecord, cluster_id=cluster_id)
    assert sorted(n.name for n in nodes) == ["web-1", "web-2", "web-3"]
    assert all(n.status == "ACTIVE" and n.physical_id in harness.cloud.servers for n in nodes)
    [action] = harness.rows(ActionRecord, target=cluster_id)
    assert (action.name, action.status) == ("CLUSTER_CREATE", "SUCCEEDED")
    assert action.started_at is not None and action.ended_at is not None
    assert harness.rows(EventRecord, cluster_id=cluster_id)


async def test_failed_server_fails_create_with_reason(harness: Harness) -> None:
    harness.cloud.fail_names.add("web-2")
    _, cluster_id = await harness.create(desired=2)
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert cluster.status == "ERROR"
    assert "web-2" in cluster.status_reason
    [action] = harness.rows(ActionRecord, target=cluster_id)
    assert action.status == "FAILED" and "went to ERROR" in action.status_reason
    [bad] = harness.rows(NodeRecord, cluster_id=cluster_id, name="web-2")
    assert bad.status == "ERROR"


async def test_a_create_whose_every_answer_was_lost_adopts_its_server(harness: Harness) -> None:
    """The POST landed, every attempt failed: the node names that server, so the
    cluster's delete removes it instead of leaving an orphan no node refers to."""
    harness.cloud.lost_creates.add("web-1")
    handle, cluster_id = await harness.create(desired=1)
    [node] = harness.rows(NodeRecord, cluster_id=cluster_id)
    [server] = harness.cloud.servers
    assert (node.status, node.physical_id) == ("ERROR", server)

    deleting = await handle.execute_update(
        "delete", ClusterOperationRequest(), result_type=OperationAccepted
    )
    await harness.action_ends(deleting.action_id)
    assert harness.cloud.servers == {}


async def test_lock_rejects_delete_with_conflict_and_writes_no_history(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=1)
    await handle.execute_update(
        "lock", LockClusterRequest(reason="patching", owner="ops"), result_type=OperationAccepted
    )
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await handle.execute_update(
            "delete", ClusterOperationRequest(), result_type=OperationAccepted
        )
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "Conflict"
    assert "locked by ops (patching)" in cause.message
    accepted = [
        e
        async for e in handle.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    # create and lock only: a validator rejection is never written to history
    assert len(accepted) == 2
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert cluster.lock is not None and cluster.lock["owner"] == "ops"


async def test_lock_signal_twin_locks_and_a_rejected_signal_is_recorded(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=0)
    await handle.signal("lock", LockClusterRequest(reason="from app", owner="app"))
    await handle.signal("lock", LockClusterRequest(reason="again", owner="app"))

    async def rejected() -> list[EventRecord]:
        return [
            e for e in harness.rows(EventRecord, cluster_id=cluster_id) if e.action == "signal:lock"
        ]

    [event] = await eventually(rejected, what="rejected signal event")
    assert "already locked" in event.status_reason and event.level == "WARNING"
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert cluster.lock is not None and cluster.lock["reason"] == "from app"


async def test_retried_update_with_same_action_id_runs_once(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=1)
    action_id = str(uuid.uuid4())
    first = await handle.execute_update(
        "check",
        ClusterOperationRequest(action_id=action_id),
        id=action_id,
        result_type=OperationAccepted,
    )
    await harness.action_ends(action_id)
    again = await handle.execute_update(
        "check", ClusterOperationRequest(action_id=action_id), result_type=OperationAccepted
    )
    assert first.action_id == again.action_id == action_id
    checks = [a for a in harness.rows(ActionRecord, target=cluster_id) if a.name == "CLUSTER_CHECK"]
    assert len(checks) == 1


async def test_check_marks_a_vanished_server_error(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=2)
    [victim, _] = sorted(harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.name)
    harness.cloud.servers.pop(victim.physical_id)
    accepted = await handle.execute_update(
        "check", ClusterOperationRequest(), result_type=OperationAccepted
    )
    action = await harness.action_ends(accepted.action_id)
    assert action.status == "FAILED"
    [node] = harness.rows(NodeRecord, id=victim.id)
    assert (node.status, node.status_reason) == ("ERROR", "Server not found")
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert cluster.status == "WARNING"


async def test_continue_as_new_keeps_state_and_dedups_old_action_ids(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=1, history_limit=40)
    first_run = (await handle.describe()).run_id
    ids = []
    for _ in range(3):
        action_id = str(uuid.uuid4())
        ids.append(action_id)
        await handle.execute_update(
            "check", ClusterOperationRequest(action_id=action_id), result_type=OperationAccepted
        )
        await harness.action_ends(action_id)

    async def new_run() -> bool:
        return (await handle.describe()).run_id != first_run

    await eventually(new_run, what="continue-as-new")
    history = [e async for e in handle.fetch_history_events()]
    assert history[0].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
    again = await handle.execute_update(
        "check", ClusterOperationRequest(action_id=ids[0]), result_type=OperationAccepted
    )
    assert again.action_id == ids[0]
    state = await handle.query("describe", result_type=ClusterState)
    assert state.created and len(state.nodes) == 1 and state.status == "ACTIVE"
    assert (
        len([a for a in harness.rows(ActionRecord, target=cluster_id) if a.name == "CLUSTER_CHECK"])
        == 3
    )


async def test_delete_removes_servers_rows_and_ends_the_workflow(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=2)
    accepted = await handle.execute_update(
        "delete", ClusterOperationRequest(), result_type=OperationAccepted
    )
    action = await harness.action_ends(accepted.action_id)
    assert action.status == "SUCCEEDED"
    result = await handle.result()
    assert result is not None
    assert harness.cloud.servers == {}
    assert harness.rows(ClusterRecord, id=cluster_id) == []
    assert harness.rows(NodeRecord, cluster_id=cluster_id) == []
