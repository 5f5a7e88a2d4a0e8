"""Workflow-test harness: the real store on SQLite, fake cloud activities under real names.

docs/style.md §Tests: the time-skipping server runs the real workflows; only
the activities that talk to the cloud or to apps are fakes registered under the
names the workflows call.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest_asyncio
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from temporalio import activity, workflow
from temporalio.client import WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from activities.signals import SignalActivities
from activities.software_configs import SoftwareConfigActivities
from activities.store import StoreActivities
from config import Settings
from config.temporal_client import warden_data_converter
from domain.cloud_objects import CloudAction
from domain.cluster.health import FenceRequest, NodeProbe, ProbeRequest, ProbeResult, ProbeState
from domain.cluster.lifecycle import HookDelivery, HookDeliveryResult
from domain.cluster.nodes import NodeState
from domain.cluster.requests import ClusterOperationRequest, OperationAccepted
from domain.cluster.standalone import StandaloneNode
from domain.cluster.state import ClusterSpec, ClusterState
from domain.events import Event
from domain.projection import NodeRemoval
from domain.servers import LockServerRequest, ServerInfo, ServerRequest, ServerStatuses
from domain.stack.event_sinks import EventSinkPost
from store.actions import ActionRecord
from store.changes import apply_changes
from store.db import make_engine, migrate, session_scope
from tests.support.eventually import eventually
from tests.support.temporal import SERVER_STARTUP, binary, register_search_attributes
from worker.registry import WORKFLOWS
from worker.runner import workflow_runner_for
from workflows.cluster.workflow import ClusterInput
from workflows.node.messages import NodeInput
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
    engine: Any = None
    deleted: list[str] = field(default_factory=list)
    messages: list[HookDelivery] = field(default_factory=list)
    hook_down: bool = False
    #: Delivery attempts the hook target answers "busy, try again" (a retryable failure).
    hook_busy: int = 0
    #: Delivery attempts the hook target answers only after this many (real) seconds.
    hook_slow: int = 0
    hook_slow_s: float = 3.0
    #: What the app does on receiving a message, before its answer returns.
    on_message: Callable[[HookDelivery], Awaitable[None]] | None = None
    #: Recovery steps that cure a broken server in this fake cloud.
    cures: set[str] = field(default_factory=lambda: {"REBOOT", "REBUILD", "START", "UNPAUSE"})
    calls: list[tuple[str, str]] = field(default_factory=list)
    #: Fence kinds ("delete", "power_off") this cloud cannot confirm.
    fence_fails: set[str] = field(default_factory=set)
    #: request_id → server id: a retried create answers the same server, as simcloud does.
    requests: dict[str, str] = field(default_factory=dict)
    #: Names whose create makes the server, then fails for good (every attempt's answer lost).
    lost_creates: set[str] = field(default_factory=set)
    #: Servers whose delete the cloud refuses (locked by an admin, say).
    undeletable: set[str] = field(default_factory=set)
    #: Calls beside CRUD (a server's rename or new metadata), in order.
    cloud_actions: list[CloudAction] = field(default_factory=list)
    #: Events posted to Zaqar queues (event sinks): (queue, event), in order.
    queued: list[tuple[str, Event]] = field(default_factory=list)

    @activity.defn(name="post_to_event_sinks")
    async def post_to_event_sinks(self, post: EventSinkPost) -> None:
        for sink in post.sinks:
            self.queued += [(sink.target, e) for e in sorted(post.events, key=lambda e: e.at)]

    @activity.defn(name="create_server")
    async def create_server(self, request: ServerRequest) -> ServerInfo:
        self.creates += 1
        known = self.requests.get(request.request_id)
        if known in self.servers:
            return self.servers[known]
        status = "ERROR" if request.name in self.fail_names else "ACTIVE"
        server = ServerInfo(physical_id=str(uuid.uuid4()), name=request.name, status=status)
        self.servers[server.physical_id] = server
        self.requests[request.request_id] = server.physical_id
        if request.name in self.lost_creates:
            raise ApplicationError("compute API answered 500", non_retryable=True)
        return server

    @activity.defn(name="find_created_server")
    async def find_created_server(self, request: ServerRequest) -> ServerInfo | None:
        known = self.requests.get(request.request_id)
        return self.servers.get(known) if known else None

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
        if physical_id in self.undeletable:
            raise ApplicationError(
                f"Instance {physical_id} is locked", type="BackendConflict", non_retryable=True
            )
        self.servers.pop(physical_id, None)

    @activity.defn(name="wait_server_deleted")
    async def wait_server_deleted(self, physical_id: str) -> None:
        assert physical_id not in self.servers

    @activity.defn(name="remove_node")
    async def remove_node(self, removal: NodeRemoval) -> None:
        if removal.destroy and removal.physical_id:
            self.deleted.append(removal.physical_id)
            self.servers.pop(removal.physical_id, None)
        with session_scope(self.engine) as session:
            apply_changes(session, removal.changes)

    @activity.defn(name="deliver_lifecycle_message")
    async def deliver_lifecycle_message(self, delivery: HookDelivery) -> HookDeliveryResult:
        if self.hook_down:
            # Non-retryable here: retry timers stall the test server's time skipping;
            # retries against a real target that is down are proven in tests/integration.
            raise ApplicationError(
                "hook target answered 410", type="HookRejected", non_retryable=True
            )
        if self.hook_slow > 0:
            self.hook_slow -= 1
            await asyncio.sleep(self.hook_slow_s)
        if self.hook_busy > 0:
            self.hook_busy -= 1
            raise ApplicationError("hook target answered 503", type="HookDeliveryFailed")
        self.messages.append(delivery)
        if self.on_message is not None:
            await self.on_message(delivery)
        return HookDeliveryResult(delivered=True, detail="fake")

    # ---- recovery (names of activities/recovery.py and activities/health.py) ----

    def _set(self, physical_id: str, status: str) -> None:
        server = self.servers[physical_id]
        self.servers[physical_id] = server.model_copy(update={"status": status})

    @activity.defn(name="reboot_server")
    async def reboot_server(self, req: dict[str, Any]) -> None:
        self.calls.append(("reboot", req["physical_id"]))
        if "REBOOT" in self.cures:
            self._set(req["physical_id"], "ACTIVE")

    @activity.defn(name="rebuild_server")
    async def rebuild_server(self, req: dict[str, Any]) -> None:
        self.calls.append(("rebuild", req["physical_id"]))
        if "REBUILD" in self.cures:
            self._set(req["physical_id"], "ACTIVE")

    @activity.defn(name="resize_server")
    async def resize_server(self, req: dict[str, Any]) -> bool:
        self.calls.append(("resize", req["physical_id"]))
        return True

    @activity.defn(name="wait_server_resized")
    async def wait_server_resized(self, physical_id: str) -> None:
        self.calls.append(("wait_resized", physical_id))

    @activity.defn(name="confirm_server_resize")
    async def confirm_server_resize(self, physical_id: str) -> None:
        self.calls.append(("confirm_resize", physical_id))

    @activity.defn(name="change_server_password")
    async def change_server_password(self, req: dict[str, Any]) -> None:
        self.calls.append(("password", req["physical_id"]))

    @activity.defn(name="update_server_metadata")
    async def update_server_metadata(self, req: dict[str, Any]) -> None:
        self.calls.append(("metadata", req["physical_id"]))

    @activity.defn(name="set_server_tags")
    async def set_server_tags(self, req: dict[str, Any]) -> None:
        self.calls.append(("tags", req["physical_id"]))

    @activity.defn(name="start_server")
    async def start_server(self, physical_id: str) -> None:
        self.calls.append(("start", physical_id))
        if "START" in self.cures:
            self._set(physical_id, "ACTIVE")

    @activity.defn(name="unpause_server")
    async def unpause_server(self, physical_id: str) -> None:
        self.calls.append(("unpause", physical_id))
        if "UNPAUSE" in self.cures:
            self._set(physical_id, "ACTIVE")

    @activity.defn(name="pause_server")
    async def pause_server(self, physical_id: str) -> None:
        self.calls.append(("pause", physical_id))
        self._set(physical_id, "PAUSED")

    @activity.defn(name="act_on_cloud_object")
    async def act_on_cloud_object(self, action: CloudAction) -> dict[str, Any]:
        self.cloud_actions.append(action)
        return {"target": action.ref.id, "answer": None}

    @activity.defn(name="lock_server")
    async def lock_server(self, request: LockServerRequest) -> None:
        physical_id = request.physical_id
        self.calls.append(("lock", physical_id))
        self.servers[physical_id] = self.servers[physical_id].model_copy(update={"locked": True})

    @activity.defn(name="unlock_server")
    async def unlock_server(self, physical_id: str) -> None:
        self.calls.append(("unlock", physical_id))
        if physical_id in self.servers:
            server = self.servers[physical_id]
            self.servers[physical_id] = server.model_copy(update={"locked": False})

    @activity.defn(name="fence_server")
    async def fence_server(self, req: FenceRequest) -> str:
        kind = "delete" if req.delete else "power_off"
        self.calls.append(("fence" if req.delete else "fence_power_off", req.physical_id))
        if kind in self.fence_fails:
            # Non-retryable: retry timers would hold the time-skipping clock.
            raise ApplicationError(
                f"Server {req.physical_id} not confirmed", type="FencingTimeout", non_retryable=True
            )
        if req.delete:
            self.servers.pop(req.physical_id, None)
            return "DELETED"
        self._set(req.physical_id, "SHUTOFF")
        return "SHUTOFF"

    @activity.defn(name="wait_server_healthy")
    async def wait_server_healthy(self, physical_id: str) -> str:
        return self.servers[physical_id].status if physical_id in self.servers else "DELETED"

    @activity.defn(name="probe_nodes")
    async def probe_nodes(self, req: ProbeRequest) -> ProbeResult:
        probes = []
        for target in req.targets:
            status = self.servers.get(target.physical_id or "")
            healthy = status is not None and status.status == "ACTIVE"
            probes.append(
                NodeProbe(
                    node_id=target.node_id,
                    state=ProbeState.HEALTHY if healthy else ProbeState.UNHEALTHY,
                    reason="" if healthy else "Server not ACTIVE",
                    server_status=status.status if status else "DELETED",
                )
            )
        return ProbeResult(probes=probes)

    @activity.defn(name="user_fix_server")
    async def user_fix_server(self, params: dict[str, Any]) -> None:
        self.calls.append(("user_fix", str(params["server"])))
        self._set(str(params["server"]), "ACTIVE")

    @activity.defn(name="get_server_statuses")
    async def get_server_statuses(self, physical_ids: list[str]) -> ServerStatuses:
        return ServerStatuses(
            statuses={
                i: (self.servers[i].status if i in self.servers else None) for i in physical_ids
            }
        )


@workflow.defn(name="FixServerWorkflow", sandboxed=False)
class FixServerWorkflow:
    """A user's own recovery workflow (policy action `type: TEMPORAL_WORKFLOW`)."""

    @workflow.run
    async def run(self, params: dict[str, Any]) -> None:
        await workflow.execute_activity(
            "user_fix_server", params, start_to_close_timeout=timedelta(seconds=10)
        )


@dataclass
class Harness:
    env: WorkflowEnvironment
    engine: Engine
    cloud: FakeCloud
    task_queue: str
    started: list[str] = field(default_factory=list)

    async def create(
        self,
        desired: int = 2,
        history_limit: int | None = None,
        min_size: int = 0,
        max_size: int = -1,
        poll_s: int = 3600,
    ) -> tuple[WorkflowHandle[object, object], str]:
        cluster_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
        spec = ClusterSpec(
            cluster_id=cluster_id,
            project_id="p1",
            name="web",
            profile_id="prof",
            desired_capacity=desired,
            min_size=min_size,
            max_size=max_size,
        )
        start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            "ClusterWorkflow",
            ClusterInput(
                state=ClusterState(spec=spec, profile=PROFILE),
                history_limit=history_limit,
                api_url="http://warden.test",
                server_poll_interval_s=poll_s,
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
        self.started.append(handle.id)
        await self.action_ends(action_id)
        return handle, cluster_id

    async def create_node(self, name: str = "solo") -> tuple[WorkflowHandle[object, object], str]:
        """A standalone node (`POST /v1/nodes` without a cluster), once its create ended."""
        node_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
        now = datetime.now(UTC)
        node = NodeState(
            node_id=node_id, name=name, index=-1, profile_id="prof", created_at=now, updated_at=now
        )
        start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            "NodeWorkflow",
            NodeInput(state=StandaloneNode(project_id="p1", profile=PROFILE, node=node)),
            id=f"node:{node_id}",
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=warden_attributes("p1", "node", node_id, "INIT"),
        )
        await self.env.client.execute_update_with_start_workflow(
            "create",
            ClusterOperationRequest(action_id=action_id),
            start_workflow_operation=start,
            id=action_id,
            result_type=OperationAccepted,
        )
        handle = self.env.client.get_workflow_handle(f"node:{node_id}")
        self.started.append(handle.id)
        await self.action_ends(action_id)
        return handle, node_id

    async def update(
        self, handle: WorkflowHandle[object, object], name: str, req: Any
    ) -> OperationAccepted:
        accepted: OperationAccepted = await handle.execute_update(
            name, req, result_type=OperationAccepted
        )
        return accepted

    async def action_status(self, action_id: str, *statuses: str) -> ActionRecord:
        async def reached() -> ActionRecord | None:
            with Session(self.engine) as s:
                rec = s.get(ActionRecord, action_id)
                return rec if rec and rec.status in statuses else None

        return await eventually(reached, what=f"action {action_id} in {statuses}")

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
    """A harness on the session's time-skipping server."""
    async for harness in _harness(time_skipping_env, tmp_path):
        yield harness


@pytest_asyncio.fixture
async def unhurried_harness(
    time_skipping_env: WorkflowEnvironment, tmp_path: Path
) -> AsyncIterator[Harness]:
    """A harness whose worker has no deadlock detector (the SDK's debug mode). For tests
    of workflows whose largest activation takes a few tenths of a second: under the
    suite's load on two cores one crossed the SDK's 2 s limit, a timing failure of a
    test that proves behaviour. `make bench` (stacks) reports the longest workflow task
    against that limit instead."""
    async for harness in _harness(time_skipping_env, tmp_path, deadlock_detection=False):
        yield harness


@pytest_asyncio.fixture
async def own_harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """A harness on a time-skipping server of its own (for tests that skip time)."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"),
        data_converter=warden_data_converter(None),
        test_server_startup_timeout=SERVER_STARTUP,
    )
    await register_search_attributes(env.client)
    try:
        async for harness in _harness(env, tmp_path):
            yield harness
    finally:
        await env.shutdown()


#: The API base URL the harness's signal URLs name.
SIGNAL_BASE = "http://warden.test"


async def _harness(
    time_skipping_env: WorkflowEnvironment, tmp_path: Path, *, deadlock_detection: bool = True
) -> AsyncIterator[Harness]:
    engine = make_engine(f"sqlite:///{tmp_path / 'w.db'}")
    migrate(engine)
    cloud = FakeCloud(engine=engine)
    queue = f"tq-{uuid.uuid4()}"
    store = StoreActivities(engine)
    signals = SignalActivities(Settings(var_dir=tmp_path, public_url=SIGNAL_BASE))
    configs = SoftwareConfigActivities(engine)
    with ThreadPoolExecutor(4) as pool:
        async with Worker(
            time_skipping_env.client,
            task_queue=queue,
            workflows=[*WORKFLOWS, FixServerWorkflow],
            activities=[
                store.record_changes,
                cloud.create_server,
                cloud.find_created_server,
                cloud.wait_server_active,
                cloud.delete_server,
                cloud.wait_server_deleted,
                cloud.get_server_statuses,
                cloud.remove_node,
                cloud.deliver_lifecycle_message,
                cloud.reboot_server,
                cloud.rebuild_server,
                cloud.resize_server,
                cloud.wait_server_resized,
                cloud.confirm_server_resize,
                cloud.change_server_password,
                cloud.update_server_metadata,
                cloud.set_server_tags,
                cloud.start_server,
                cloud.unpause_server,
                cloud.pause_server,
                cloud.lock_server,
                cloud.unlock_server,
                cloud.act_on_cloud_object,
                cloud.fence_server,
                cloud.wait_server_healthy,
                cloud.probe_nodes,
                cloud.user_fix_server,
                signals.signal_url,
                cloud.post_to_event_sinks,
                configs.store_software_config,
                configs.show_software_config,
                configs.delete_software_config,
                configs.start_software_deployment,
                configs.software_deployment_replaced_by,
                configs.signal_software_deployment,
                configs.cancel_software_deployment,
                configs.remove_software_deployment,
            ],
            activity_executor=pool,
            debug_mode=not deadlock_detection,
            # The strict sandbox, answering the SDK's context questions as the worker does.
            workflow_runner=workflow_runner_for(
                time_skipping_env.client.data_converter, SandboxedWorkflowRunner()
            ),
        ):
            harness = Harness(time_skipping_env, engine, cloud, queue)
            yield harness
            # Workflows left waiting (hooks, timers) with no worker polling their task
            # queue would stall time skipping for every later test: end them here.
            with Session(engine) as session:
                children = {a.workflow_id for a in session.exec(select(ActionRecord))}
            for workflow_id in [*harness.started, *sorted(w for w in children if w)]:
                with contextlib.suppress(RPCError):
                    await time_skipping_env.client.get_workflow_handle(workflow_id).terminate(
                        "test finished"
                    )
    engine.dispose()
