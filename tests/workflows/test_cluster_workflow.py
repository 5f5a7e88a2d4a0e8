"""ClusterWorkflow on the time-skipping server: the entity-workflow spine end to end.

The store activity is the real one (SQLite in tmp_path); compute activities are
fakes registered under the real names (STYLE.md: tests/workflows).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import WithStartWorkflowOperation, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.store import StoreActivities
from domain.clusters import (
    ClusterOperationRequest,
    ClusterSpec,
    ClusterState,
    LockClusterRequest,
    OperationAccepted,
)
from domain.servers import ServerInfo, ServerRequest, ServerStatuses
from store.actions import ActionRecord
from store.clusters import ClusterRecord, NodeRecord
from store.db import make_engine, migrate
from store.events import EventRecord
from tests.support.eventually import eventually
from worker.registry import WORKFLOWS
from workflows.clusters import ClusterInput
from workflows.search_attributes import warden_attributes

PROFILE = {
    "type": "os.nova.server",
    "version": "1.0",
    "properties": {"image": "cirros", "flavor": "m1.tiny"},
}


@dataclass
class FakeCloud:
    """Servers in memory; names listed in `fail_names` fail to build."""

    servers: dict[str, ServerInfo] = field(default_factory=dict)
    fail_names: set[str] = field(default_factory=set)
    creates: int = 0

    @activity.defn(name="create_server")
    async def create_server(self, request: ServerRequest) -> ServerInfo:
        self.creates += 1
        found = [s for s in self.servers.values() if s.name == request.name]
        if found:
            return found[0]
        status = "ERROR" if request.name in self.fail_names else "ACTIVE"
        server = ServerInfo(physical_id=str(uuid.uuid4()), name=request.name, status=status)
        self.servers[server.physical_id] = server
        return server

    @activity.defn(name="wait_server_active")
    async def wait_server_active(self, physical_id: str) -> ServerInfo:
        server = self.servers[physical_id]
        if server.status != "ACTIVE":
            raise ApplicationError(
                f"Server {physical_id} went to ERROR", type="BackendError", non_retryable=True
            )
        return server

    @activity.defn(name="delete_server")
    async def delete_server(self, physical_id: str) -> None:
        self.servers.pop(physical_id, None)

    @activity.defn(name="wait_server_deleted")
    async def wait_server_deleted(self, physical_id: str) -> None:
        assert physical_id not in self.servers

    @activity.defn(name="get_server_statuses")
    async def get_server_statuses(self, physical_ids: list[str]) -> ServerStatuses:
        return ServerStatuses(
            statuses={
                i: (self.servers[i].status if i in self.servers else None) for i in physical_ids
            }
        )


@dataclass
class Harness:
    env: WorkflowEnvironment
    engine: Engine
    cloud: FakeCloud
    task_queue: str

    async def create(
        self,
        desired: int = 2,
        history_limit: int | None = None,
    ) -> tuple[WorkflowHandle[object, object], str]:
        cluster_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
        spec = ClusterSpec(
            cluster_id=cluster_id,
            project_id="p1",
            name="web",
            profile_id="prof",
            desired_capacity=desired,
        )
        start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            "ClusterWorkflow",
            ClusterInput(
                state=ClusterState(spec=spec, profile=PROFILE), history_limit=history_limit
            ),
            id=f"cluster:{cluster_id}",
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=warden_attributes("p1", "cluster", cluster_id, "INIT"),
        )
        accepted = await self.env.client.execute_update_with_start_workflow(
            "create",
            ClusterOperationRequest(action_id=action_id),
            start_workflow_operation=start,
            id=action_id,
            result_type=OperationAccepted,
        )
        assert accepted.action_id == action_id
        handle = self.env.client.get_workflow_handle(f"cluster:{cluster_id}")
        await self.action_ends(action_id)
        return handle, cluster_id

    async def action_ends(self, action_id: str) -> ActionRecord:
        async def ended() -> ActionRecord | None:
            with Session(self.engine) as s:
                rec = s.get(ActionRecord, action_id)
                return rec if rec and rec.status in ("SUCCEEDED", "FAILED") else None

        return await eventually(ended, what=f"action {action_id} ended")

    def rows(self, model: type, **where: object) -> list:  # type: ignore[type-arg]
        with Session(self.engine) as s:
            query: Any = select(model)
            for key, value in where.items():
                query = query.where(getattr(model, key) == value)
            return list(s.exec(query))


@pytest_asyncio.fixture
async def harness(time_skipping_env: WorkflowEnvironment, tmp_path: Path) -> AsyncIterator[Harness]:
    engine = make_engine(f"sqlite:///{tmp_path / 'w.db'}")
    migrate(engine)
    cloud = FakeCloud()
    queue = f"tq-{uuid.uuid4()}"
    store = StoreActivities(engine)
    with ThreadPoolExecutor(4) as pool:
        async with Worker(
            time_skipping_env.client,
            task_queue=queue,
            workflows=list(WORKFLOWS),
            activities=[
                store.record_changes,
                cloud.create_server,
                cloud.wait_server_active,
                cloud.delete_server,
                cloud.wait_server_deleted,
                cloud.get_server_statuses,
            ],
            activity_executor=pool,
        ):
            yield Harness(time_skipping_env, engine, cloud, queue)
    engine.dispose()


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
