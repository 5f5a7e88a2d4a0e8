"""ClusterWorkflow: the entity workflow of one cluster (`cluster:{cluster_id}`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.clusters import (
        RUNNING_STATUS,
        ClusterOperationRequest,
        ClusterState,
        ClusterStatus,
        LockClusterRequest,
        LockInfo,
        OperationAccepted,
        RunningOperation,
        ensure_can_lock,
        ensure_can_start,
        ensure_can_unlock,
        status_after,
    )
    from domain.errors import Conflict, WardenError
    from domain.events import Event, EventLevel
    from domain.nodes import NodeState, node_name
    from domain.projection import ChangeSet, NodeSnapshot, cluster_snapshot
    from workflows.cluster_ops import (
        ClusterCheckWorkflow,
        ClusterCreateWorkflow,
        ClusterDeleteWorkflow,
        NodesOperationInput,
        NodesOperationResult,
        node_snapshot,
    )
    from workflows.entity import (
        RecentActions,
        continue_as_new_due,
        record,
        reject,
        run_child,
    )
    from workflows.search_attributes import WARDEN_STATUS, warden_attributes

_CHILDREN = {
    ActionName.CLUSTER_CREATE: (ClusterCreateWorkflow.run, "create {n} node(s) of cluster {name}"),
    ActionName.CLUSTER_CHECK: (ClusterCheckWorkflow.run, "check {n} node(s) of cluster {name}"),
    ActionName.CLUSTER_DELETE: (ClusterDeleteWorkflow.run, "delete cluster {name} ({n} node(s))"),
}


class ClusterInput(BaseModel):
    """Start (and continue-as-new) input: everything the workflow knows."""

    state: ClusterState
    pending: RunningOperation | None = None
    recent_action_ids: list[str] = Field(default_factory=list)
    #: Continue-as-new after this many history events (tests); else when suggested.
    history_limit: int | None = None


@workflow.defn(name="ClusterWorkflow")
class ClusterWorkflow:
    """Owns a cluster's state; serialises its operations; is its lock."""

    @workflow.init
    def __init__(self, inp: ClusterInput) -> None:
        self.state = inp.state
        self.pending = inp.pending
        self.recent = RecentActions(inp.recent_action_ids)
        self.history_limit = inp.history_limit
        self.mutex = asyncio.Lock()

    @workflow.run
    async def run(self, inp: ClusterInput) -> ClusterState:
        self._show()
        while not self.state.deleted:
            await workflow.wait_condition(
                lambda: self.pending is not None or continue_as_new_due(self.history_limit)
            )
            if self.pending is not None:
                await self._execute(self.pending)
                self.pending = None
                continue
            await workflow.wait_condition(workflow.all_handlers_finished)
            if self.pending is None:
                workflow.continue_as_new(self._carry_over())
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.state

    # ---- operations that run as children (update + signal twin each) ----

    @workflow.update(name="create")
    async def create(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Create the cluster's nodes (the first update, sent with start)."""
        return await self._accept(ActionName.CLUSTER_CREATE, req)

    @create.validator
    def validate_create(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_CREATE, req)

    @workflow.update(name="check")
    async def check(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Refresh node statuses from the cloud."""
        return await self._accept(ActionName.CLUSTER_CHECK, req)

    @check.validator
    def validate_check(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_CHECK, req)

    @workflow.signal(name="check")
    async def check_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `check` for apps that talk to Temporal directly."""
        await self._signalled(ActionName.CLUSTER_CHECK, req)

    @workflow.update(name="delete")
    async def delete(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Delete every node, then the cluster."""
        return await self._accept(ActionName.CLUSTER_DELETE, req)

    @delete.validator
    def validate_delete(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_DELETE, req)

    @workflow.signal(name="delete")
    async def delete_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `delete`."""
        await self._signalled(ActionName.CLUSTER_DELETE, req)

    # ---- maintenance mode: handled inline, no child ----

    @workflow.update(name="lock")
    async def lock(self, req: LockClusterRequest) -> OperationAccepted:
        """Enter maintenance mode: scaling, deletion and recovery are refused."""
        return await self._lock(req)

    async def _lock(self, req: LockClusterRequest) -> OperationAccepted:
        async with self.mutex:
            if req.action_id in self.recent:
                return OperationAccepted(action_id=req.action_id or "", status="SUCCEEDED")
            self._check_or_raise(lambda: ensure_can_lock(self.state))
            info = LockInfo(reason=req.reason, owner=req.owner, locked_at=workflow.now())
            self.state = self.state.model_copy(update={"lock": info})
            return await self._record_inline(
                ActionName.CLUSTER_LOCK, req.action_id, {"reason": req.reason, "owner": req.owner}
            )

    @lock.validator
    def validate_lock(self, req: LockClusterRequest) -> None:
        if req.action_id not in self.recent:
            self._check_or_raise(lambda: ensure_can_lock(self.state))

    @workflow.signal(name="lock")
    async def lock_signal(self, req: LockClusterRequest) -> None:
        """Signal twin of `lock`."""
        await self._guard_signal("lock", self._lock(req))

    @workflow.update(name="unlock")
    async def unlock(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Leave maintenance mode."""
        return await self._unlock(req)

    async def _unlock(self, req: ClusterOperationRequest) -> OperationAccepted:
        async with self.mutex:
            if req.action_id in self.recent:
                return OperationAccepted(action_id=req.action_id or "", status="SUCCEEDED")
            self._check_or_raise(lambda: ensure_can_unlock(self.state))
            self.state = self.state.model_copy(update={"lock": None})
            return await self._record_inline(ActionName.CLUSTER_UNLOCK, req.action_id, {})

    @unlock.validator
    def validate_unlock(self, req: ClusterOperationRequest) -> None:
        if req.action_id not in self.recent:
            self._check_or_raise(lambda: ensure_can_unlock(self.state))

    @workflow.signal(name="unlock")
    async def unlock_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `unlock`."""
        await self._guard_signal("unlock", self._unlock(req))

    @workflow.query(name="describe")
    def describe(self) -> ClusterState:
        """The cluster as this workflow knows it (needs a running worker)."""
        return self.state

    # ---- the spine: validate, accept, execute, project ----

    def _check_or_raise(self, rule: Callable[[], None]) -> None:
        """Run a domain rule; a WardenError becomes the ApplicationError the API maps."""
        try:
            rule()
        except WardenError as err:
            reject(err)

    def _validate(self, name: ActionName, req: ClusterOperationRequest) -> None:
        if req.action_id is not None and req.action_id in self.recent:
            return  # a client retry of an accepted request: answer it again
        if name == ActionName.CLUSTER_CREATE and self.state.created:
            reject(Conflict(f"Cluster {self.state.spec.name} already exists."))
        self._check_or_raise(lambda: ensure_can_start(self.state, name))
        if self.pending is not None:
            reject(
                Conflict(
                    f"Cluster {self.state.spec.name} already has an action "
                    f"({self.pending.name}) in progress."
                )
            )

    async def _accept(self, name: ActionName, req: ClusterOperationRequest) -> OperationAccepted:
        async with self.mutex:
            action_id = req.action_id or str(workflow.uuid4())
            if action_id in self.recent:
                return OperationAccepted(action_id=action_id, status=ActionStatus.READY.value)
            self._validate(name, req)  # state may have moved since the validator ran
            self.recent.add(action_id)
            op = RunningOperation(action_id=action_id, name=name)
            # Busy now (validators refuse others); pending only once the row is written,
            # so the main loop's RUNNING write never races this one.
            self.state = self.state.model_copy(update={"busy": op})
            if name == ActionName.CLUSTER_CREATE:
                self._plan_nodes()
            await record(
                ChangeSet(
                    clusters=[cluster_snapshot(self.state, workflow.now())],
                    nodes=self._node_rows() if name == ActionName.CLUSTER_CREATE else [],
                    actions=[self._action(op, ActionStatus.READY, inputs=req.params)],
                ),
                summary=f"accept {name}",
            )
            self.pending = op
            return OperationAccepted(action_id=action_id, status=ActionStatus.READY.value)

    async def _signalled(self, name: ActionName, req: ClusterOperationRequest) -> None:
        await self._guard_signal(name.value.lower(), self._accept(name, req))

    async def _guard_signal(self, what: str, handler: Awaitable[OperationAccepted]) -> None:
        """Run a signal twin; a rejection is recorded as an event, never raised.

        An ApplicationError escaping a signal handler would fail the whole entity
        workflow, so signals record what the update twin would have answered.
        """
        try:
            await handler
        except ApplicationError as err:
            await self._record_rejected(what, err.message)

    def _plan_nodes(self) -> None:
        spec, now = self.state.spec, workflow.now()
        nodes = [
            NodeState(
                node_id=str(workflow.uuid4()),
                name=node_name(spec.name, i),
                index=i,
                profile_id=spec.profile_id,
                created_at=now,
                updated_at=now,
            )
            for i in range(1, spec.desired_capacity + 1)
        ]
        self.state = self.state.model_copy(
            update={"nodes": nodes, "desired_capacity": spec.desired_capacity, "created_at": now}
        )

    async def _execute(self, op: RunningOperation) -> None:
        running = RUNNING_STATUS.get(op.name, self.state.status)
        self.state = self.state.model_copy(
            update={"status": running, "status_reason": f"{op.name} in progress"}
        )
        self._show()
        await record(
            ChangeSet(
                clusters=[cluster_snapshot(self.state, workflow.now())],
                actions=[self._action(op, ActionStatus.RUNNING)],
            ),
            summary=f"start {op.name}",
        )
        run, summary = _CHILDREN[op.name]
        spec = self.state.spec
        outcome = await run_child(
            run,
            NodesOperationInput(
                project_id=spec.project_id,
                cluster_id=spec.cluster_id,
                cluster_name=spec.name,
                action_id=op.action_id,
                profile=self.state.profile,
                nodes=self.state.nodes,
            ),
            workflow_id=f"cluster-op:{spec.cluster_id}:{op.action_id}",
            summary=summary.format(n=len(self.state.nodes), name=spec.name),
            attributes=warden_attributes(spec.project_id, "cluster-op", spec.cluster_id, "RUNNING"),
            details=f"Action `{op.action_id}` ({op.name}) of cluster `{spec.cluster_id}`",
        )
        await self._finish(op, outcome.succeeded, outcome.reason, outcome.result)

    async def _finish(
        self, op: RunningOperation, ok: bool, reason: str, result: NodesOperationResult | None
    ) -> None:
        if result is not None:
            ok, reason = ok and not result.error, reason or result.error
            if op.name != ActionName.CLUSTER_DELETE:
                self.state = self.state.model_copy(update={"nodes": result.nodes})
        status = status_after(op.name, ok, self.state.status)
        deleted = ok and op.name == ActionName.CLUSTER_DELETE
        self.state = self.state.model_copy(
            update={
                "status": ClusterStatus.DELETING if deleted else status,
                "status_reason": reason or f"{op.name} completed",
                "busy": None,
                "deleted": deleted,
                "created": self.state.created or op.name == ActionName.CLUSTER_CREATE,
            }
        )
        final = ActionStatus.SUCCEEDED if ok else ActionStatus.FAILED
        await record(
            ChangeSet(
                clusters=[] if deleted else [cluster_snapshot(self.state, workflow.now())],
                deleted_clusters=[self.state.spec.cluster_id] if deleted else [],
                actions=[self._action(op, final, reason=reason or f"{op.name} completed")],
                events=[
                    self._event(
                        op.name.value,
                        self.state.status_reason,
                        EventLevel.INFO if ok else EventLevel.ERROR,
                        op.action_id,
                    )
                ],
            ),
            summary=f"finish {op.name}",
        )
        self._show()

    async def _record_inline(
        self, name: ActionName, action_id: str | None, inputs: dict[str, str]
    ) -> OperationAccepted:
        op = RunningOperation(action_id=action_id or str(workflow.uuid4()), name=name)
        self.recent.add(op.action_id)
        await record(
            ChangeSet(
                clusters=[cluster_snapshot(self.state, workflow.now())],
                actions=[
                    self._action(
                        op, ActionStatus.SUCCEEDED, inputs=inputs, reason=f"{name} completed"
                    )
                ],
                events=[
                    self._event(name.value, f"{name} completed", EventLevel.INFO, op.action_id)
                ],
            ),
            summary=name.value.lower(),
        )
        self._show()
        return OperationAccepted(action_id=op.action_id, status=ActionStatus.SUCCEEDED.value)

    async def _record_rejected(self, what: str, message: str) -> None:
        workflow.logger.warning(
            "signal %s to cluster %s rejected: %s", what, self.state.spec.cluster_id, message
        )
        event = self._event(
            f"signal:{what}", f"Signal rejected: {message}", EventLevel.WARNING, None
        )
        await record(ChangeSet(events=[event]), summary=f"record rejected {what}")

    def _action(
        self,
        op: RunningOperation,
        status: ActionStatus,
        *,
        reason: str = "",
        inputs: dict[str, Any] | None = None,
    ) -> ActionChange:
        spec = self.state.spec
        return ActionChange(
            action_id=op.action_id,
            project_id=spec.project_id,
            name=op.name,
            target=spec.cluster_id,
            status=status,
            status_reason=reason,
            inputs=inputs,
            workflow_id=f"cluster-op:{spec.cluster_id}:{op.action_id}"
            if op.name in _CHILDREN
            else workflow.info().workflow_id,
            at=workflow.now(),
        )

    def _event(self, action: str, reason: str, level: EventLevel, action_id: str | None) -> Event:
        spec = self.state.spec
        return Event(
            event_id=str(workflow.uuid4()),
            project_id=spec.project_id,
            obj_type="cluster",
            obj_id=spec.cluster_id,
            obj_name=spec.name,
            cluster_id=spec.cluster_id,
            action=action,
            status=self.state.status.value,
            status_reason=reason,
            level=level,
            action_id=action_id,
            at=workflow.now(),
        )

    def _node_rows(self) -> list[NodeSnapshot]:
        spec = self.state.spec
        return [node_snapshot(spec.project_id, spec.cluster_id, n) for n in self.state.nodes]

    def _carry_over(self) -> ClusterInput:
        return ClusterInput(
            state=self.state,
            pending=self.pending,
            recent_action_ids=self.recent.to_list(),
            history_limit=self.history_limit,
        )

    def _show(self) -> None:
        """Keep the UI's current details and WardenStatus true."""
        s = self.state
        lock = f" · 🔒 locked by {s.lock.owner or '?'}: {s.lock.reason}" if s.lock else ""
        busy = f" · running {s.busy.name}" if s.busy else ""
        workflow.set_current_details(
            f"Cluster **{s.spec.name}** is {s.status.value} with {len(s.nodes)} node(s)"
            f"{busy}{lock}\n\n{s.status_reason}"
        )
        workflow.upsert_search_attributes([WARDEN_STATUS.value_set(s.status.value)])
