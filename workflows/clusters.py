"""ClusterWorkflow: the entity workflow of one cluster (`cluster:{cluster_id}`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.exceptions import ApplicationError, FailureError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionName, ActionStatus
    from domain.clusters import (
        RUNNING_STATUS,
        AttachedPolicy,
        ClusterOperationRequest,
        ClusterState,
        ClusterStatus,
        LockClusterRequest,
        LockInfo,
        MarkNodeRequest,
        OperationAccepted,
        PolicyAttachRequest,
        PolicyDetachRequest,
        RunningOperation,
        ensure_can_attach,
        ensure_can_detach,
        ensure_can_lock,
        ensure_can_mark,
        ensure_can_start,
        ensure_can_unlock,
        mark_node,
        status_after,
    )
    from domain.errors import Conflict, WardenError
    from domain.events import EventLevel
    from domain.health import HealthView, ProbeTarget
    from domain.membership import (
        MEMBERSHIP_OPERATIONS,
        choose_victims,
        deletion_settings,
        health_policy,
        plan_membership,
        plan_recover,
    )
    from domain.nodes import MARKED_UNHEALTHY, NodeState, node_name
    from domain.policies import PolicyType
    from domain.projection import ChangeSet, NodeSnapshot, cluster_snapshot
    from workflows.cluster_ops import (
        ClusterCheckWorkflow,
        ClusterCreateWorkflow,
        ClusterDeleteWorkflow,
        NodesOperationInput,
        NodesOperationResult,
        node_snapshot,
    )
    from workflows.cluster_records import action_change, cluster_event, node_event, show
    from workflows.entity import (
        Outcome,
        RecentActions,
        continue_as_new_due,
        record,
        reject,
        run_child,
    )
    from workflows.health import HealthManagerInput, HealthManagerWorkflow
    from workflows.recovery import ClusterRecoverInput, ClusterRecoverWorkflow
    from workflows.scale_in import ScaleInInput, ScaleInWorkflow
    from workflows.search_attributes import warden_attributes

_CHILDREN = {
    ActionName.CLUSTER_CREATE: (ClusterCreateWorkflow.run, "create {n} node(s) of cluster {name}"),
    ActionName.CLUSTER_CHECK: (ClusterCheckWorkflow.run, "check {n} node(s) of cluster {name}"),
    ActionName.CLUSTER_DELETE: (ClusterDeleteWorkflow.run, "delete cluster {name} ({n} node(s))"),
}
#: Operations whose child is chosen by what they change (create or remove nodes).
_MEMBERSHIP_SUMMARY = {
    ActionName.CLUSTER_SCALE_OUT: "scale out cluster {name} by {n} node(s)",
    ActionName.CLUSTER_SCALE_IN: "scale in cluster {name} by {n} node(s)",
    ActionName.CLUSTER_RESIZE: "resize cluster {name}: {n} node(s) to {verb}",
    ActionName.CLUSTER_DEL_NODES: "delete {n} node(s) of cluster {name}",
    ActionName.NODE_DELETE: "delete node {node} of cluster {name}",
    ActionName.CLUSTER_RECOVER: "recover {n} node(s) of cluster {name}",
}


class ClusterInput(BaseModel):
    """Start (and continue-as-new) input: everything the workflow knows."""

    state: ClusterState
    pending: RunningOperation | None = None
    recent_action_ids: list[str] = Field(default_factory=list)
    #: Continue-as-new after this many history events (tests); else when suggested.
    history_limit: int | None = None
    #: Where apps complete lifecycle hooks (the API's public URL; set by the API).
    api_url: str = "http://127.0.0.1:8004"
    #: How often servers of nodes waiting on a hook are looked at.
    server_poll_interval_s: int = 30


@workflow.defn(name="ClusterWorkflow")
class ClusterWorkflow:
    """Owns a cluster's state; serialises its operations; is its lock."""

    @workflow.init
    def __init__(self, inp: ClusterInput) -> None:
        self.state = inp.state
        self.pending = inp.pending
        self.recent = RecentActions(inp.recent_action_ids)
        self.history_limit = inp.history_limit
        self.api_url = inp.api_url
        self.server_poll_interval_s = inp.server_poll_interval_s
        self.mutex = asyncio.Lock()

    @workflow.run
    async def run(self, inp: ClusterInput) -> ClusterState:
        self._show()
        while not self.state.deleted:
            await workflow.wait_condition(
                lambda: self.pending is not None or continue_as_new_due(self.history_limit)
            )
            if self.pending is not None:
                op = self.pending
                await self._execute(op)
                if self.pending is op:
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

    @workflow.update(name="scale_out")
    async def scale_out(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Add `count` nodes."""
        return await self._accept(ActionName.CLUSTER_SCALE_OUT, req)

    @scale_out.validator
    def validate_scale_out(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_SCALE_OUT, req)

    @workflow.signal(name="scale_out")
    async def scale_out_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `scale_out`."""
        await self._signalled(ActionName.CLUSTER_SCALE_OUT, req)

    @workflow.update(name="scale_in")
    async def scale_in(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Remove `count` nodes chosen by the deletion policy (hooks fire)."""
        return await self._accept(ActionName.CLUSTER_SCALE_IN, req)

    @scale_in.validator
    def validate_scale_in(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_SCALE_IN, req)

    @workflow.signal(name="scale_in")
    async def scale_in_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `scale_in`."""
        await self._signalled(ActionName.CLUSTER_SCALE_IN, req)

    @workflow.update(name="resize")
    async def resize(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Change capacity and/or size bounds (Senlin's resize)."""
        return await self._accept(ActionName.CLUSTER_RESIZE, req)

    @resize.validator
    def validate_resize(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_RESIZE, req)

    @workflow.signal(name="resize")
    async def resize_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `resize`."""
        await self._signalled(ActionName.CLUSTER_RESIZE, req)

    @workflow.update(name="del_nodes")
    async def del_nodes(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Remove the named nodes (hooks fire)."""
        return await self._accept(ActionName.CLUSTER_DEL_NODES, req)

    @del_nodes.validator
    def validate_del_nodes(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_DEL_NODES, req)

    @workflow.signal(name="del_nodes")
    async def del_nodes_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `del_nodes`."""
        await self._signalled(ActionName.CLUSTER_DEL_NODES, req)

    @workflow.update(name="delete_node")
    async def delete_node(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Remove one node: `DELETE /v1/nodes/{node_id}` (hooks fire)."""
        return await self._accept(ActionName.NODE_DELETE, req)

    @delete_node.validator
    def validate_delete_node(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.NODE_DELETE, req)

    @workflow.signal(name="delete_node")
    async def delete_node_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `delete_node`."""
        await self._signalled(ActionName.NODE_DELETE, req)

    @workflow.update(name="recover")
    async def recover(self, req: ClusterOperationRequest) -> OperationAccepted:
        """Recover nodes (named, else those in ERROR/WARNING) with the policy's actions."""
        return await self._accept(ActionName.CLUSTER_RECOVER, req)

    @recover.validator
    def validate_recover(self, req: ClusterOperationRequest) -> None:
        self._validate(ActionName.CLUSTER_RECOVER, req)

    @workflow.signal(name="recover")
    async def recover_signal(self, req: ClusterOperationRequest) -> None:
        """Signal twin of `recover` (the health manager uses it)."""
        await self._signalled(ActionName.CLUSTER_RECOVER, req)

    # ---- policies and node marks: handled inline, no child ----

    @workflow.update(name="policy_attach")
    async def policy_attach(self, req: PolicyAttachRequest) -> OperationAccepted:
        """Bind a policy (the API sends its public copy: no secret in history)."""
        return await self._policy_attach(req)

    async def _policy_attach(self, req: PolicyAttachRequest) -> OperationAccepted:
        accepted = await self._inline(
            ActionName.CLUSTER_ATTACH_POLICY,
            req.action_id,
            lambda: ensure_can_attach(self.state, req.policy),
            lambda: {"policies": [*self.state.policies, req.policy]},
            {"policy_id": req.policy.policy_id, "enabled": req.policy.enabled},
        )
        if req.policy.type == PolicyType.HEALTH.value and req.policy.enabled:
            await self._start_health_manager(req.policy)
        return accepted

    @policy_attach.validator
    def validate_policy_attach(self, req: PolicyAttachRequest) -> None:
        if req.action_id not in self.recent:
            self._check_or_raise(lambda: ensure_can_attach(self.state, req.policy))

    @workflow.signal(name="policy_attach")
    async def policy_attach_signal(self, req: PolicyAttachRequest) -> None:
        """Signal twin of `policy_attach`."""
        await self._guard_signal("policy_attach", self._policy_attach(req))

    @workflow.update(name="policy_detach")
    async def policy_detach(self, req: PolicyDetachRequest) -> OperationAccepted:
        """Unbind a policy."""
        return await self._policy_detach(req)

    async def _policy_detach(self, req: PolicyDetachRequest) -> OperationAccepted:
        was_watched = health_policy(self.state) is not None
        accepted = await self._inline(
            ActionName.CLUSTER_DETACH_POLICY,
            req.action_id,
            lambda: ensure_can_detach(self.state, req.policy_id),
            lambda: {"policies": [p for p in self.state.policies if p.policy_id != req.policy_id]},
            {"policy_id": req.policy_id},
        )
        if was_watched and health_policy(self.state) is None:
            await self._signal_health("stop")
        return accepted

    @workflow.signal(name="health_report")
    async def health_report(self, warning: str) -> None:
        """The health manager's verdict: a warning (WARNING status) or all clear."""
        async with self.mutex:
            self.state = self.state.model_copy(update={"health_warning": warning})
            if self.state.busy is None and self.state.status in (
                ClusterStatus.ACTIVE,
                ClusterStatus.WARNING,
            ):
                self.state = self.state.model_copy(
                    update={
                        "status": ClusterStatus.WARNING if warning else ClusterStatus.ACTIVE,
                        "status_reason": warning or "Health checks pass",
                    }
                )
                await record(
                    ChangeSet(clusters=[cluster_snapshot(self.state, workflow.now())]),
                    summary="record health verdict",
                )
            self._show()

    # ---- the health manager (DESIGN §3: not a child that pins this workflow) ----

    async def _start_health_manager(self, policy: AttachedPolicy) -> None:
        spec = self.state.spec
        try:
            await workflow.start_child_workflow(
                HealthManagerWorkflow.run,
                HealthManagerInput(
                    project_id=spec.project_id,
                    cluster_id=spec.cluster_id,
                    cluster_name=spec.name,
                    policy_id=policy.policy_id,
                    properties=policy.properties,
                    view=self._health_view(),
                ),
                id=f"health:{spec.cluster_id}",
                parent_close_policy=ParentClosePolicy.ABANDON,
                static_summary=f"health of cluster {spec.name}",
                static_details=f"Health policy `{policy.name}` of cluster `{spec.cluster_id}`",
                search_attributes=warden_attributes(
                    spec.project_id, "health", spec.cluster_id, "RUNNING"
                ),
            )
        except WorkflowAlreadyStartedError:
            await self._signal_health("cluster_changed", self._health_view())

    def _health_view(self) -> HealthView:
        s = self.state
        return HealthView(
            targets=[
                ProbeTarget(node_id=n.node_id, name=n.name, physical_id=n.physical_id)
                for n in s.nodes
            ],
            node_status={n.node_id: n.status.value for n in s.nodes},
            updated_at={n.node_id: n.created_at for n in s.nodes},
            marked=[n.node_id for n in s.nodes if n.data.get(MARKED_UNHEALTHY)],
            paused=s.busy is not None,
            locked=s.lock is not None,
        )

    async def _signal_health(self, name: str, arg: HealthView | None = None) -> None:
        handle = workflow.get_external_workflow_handle(f"health:{self.state.spec.cluster_id}")
        try:
            await (handle.signal(name) if arg is None else handle.signal(name, arg))
        except FailureError as err:
            workflow.logger.info("health manager not told %s: %s", name, err)

    async def _changed(self) -> None:
        """Show the new state in the UI and tell the health manager, if one watches."""
        self._show()
        if health_policy(self.state) is not None:
            if self.state.deleted or (
                self.state.status == ClusterStatus.DELETING and self.state.busy is None
            ):
                await self._signal_health("stop")
            else:
                await self._signal_health("cluster_changed", self._health_view())

    @policy_detach.validator
    def validate_policy_detach(self, req: PolicyDetachRequest) -> None:
        if req.action_id not in self.recent:
            self._check_or_raise(lambda: ensure_can_detach(self.state, req.policy_id))

    @workflow.signal(name="policy_detach")
    async def policy_detach_signal(self, req: PolicyDetachRequest) -> None:
        """Signal twin of `policy_detach`."""
        await self._guard_signal("policy_detach", self._policy_detach(req))

    @workflow.update(name="mark_unhealthy")
    async def mark_unhealthy(self, req: MarkNodeRequest) -> OperationAccepted:
        """Mark a node unhealthy (ERROR; first victim of the next scale-in) or clear it."""
        return await self._mark_unhealthy(req)

    async def _mark_unhealthy(self, req: MarkNodeRequest) -> OperationAccepted:
        async with self.mutex:
            if req.action_id in self.recent:
                return OperationAccepted(action_id=req.action_id or "", status="SUCCEEDED")
            self._check_or_raise(lambda: ensure_can_mark(self.state, req.node_id))
            self.recent.add(req.action_id or str(workflow.uuid4()))
            node = mark_node(self.state, req, workflow.now())
            self.state = self.state.model_copy(
                update={
                    "nodes": [node if n.node_id == node.node_id else n for n in self.state.nodes]
                }
            )
            verb = "marked unhealthy" if req.mark_unhealthy else "mark cleared"
            await record(
                ChangeSet(
                    nodes=[
                        node_snapshot(self.state.spec.project_id, self.state.spec.cluster_id, node)
                    ],
                    events=[
                        node_event(
                            self.state,
                            node,
                            "NODE_MARK_UNHEALTHY",
                            f"Node {verb}: {node.status_reason or 'healthy'}",
                        )
                    ],
                ),
                summary=f"node {node.name} {verb}",
            )
            await self._changed()
            return OperationAccepted(action_id=req.action_id or "", status="SUCCEEDED")

    @mark_unhealthy.validator
    def validate_mark_unhealthy(self, req: MarkNodeRequest) -> None:
        if req.action_id not in self.recent:
            self._check_or_raise(lambda: ensure_can_mark(self.state, req.node_id))

    @workflow.signal(name="mark_unhealthy")
    async def mark_unhealthy_signal(self, req: MarkNodeRequest) -> None:
        """Signal twin of `mark_unhealthy` (apps marking their own node)."""
        await self._guard_signal("mark_unhealthy", self._mark_unhealthy(req))

    # ---- maintenance mode: handled inline, no child ----

    @workflow.update(name="lock")
    async def lock(self, req: LockClusterRequest) -> OperationAccepted:
        """Enter maintenance mode: scaling, deletion and recovery are refused."""
        return await self._lock(req)

    async def _lock(self, req: LockClusterRequest) -> OperationAccepted:
        return await self._inline(
            ActionName.CLUSTER_LOCK,
            req.action_id,
            lambda: ensure_can_lock(self.state),
            lambda: {
                "lock": LockInfo(reason=req.reason, owner=req.owner, locked_at=workflow.now())
            },
            {"reason": req.reason, "owner": req.owner},
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
        return await self._inline(
            ActionName.CLUSTER_UNLOCK,
            req.action_id,
            lambda: ensure_can_unlock(self.state),
            lambda: {"lock": None},
            {},
        )

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

    def _check_or_raise(self, rule: Callable[[], object]) -> None:
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
        if name in MEMBERSHIP_OPERATIONS:
            self._check_or_raise(lambda: plan_membership(self.state, name, req.params))
        if name == ActionName.CLUSTER_RECOVER:
            self._check_or_raise(lambda: plan_recover(self.state, req.params))
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
            if name == ActionName.CLUSTER_CREATE:
                op = self._plan_create(op)
            elif name in MEMBERSHIP_OPERATIONS:
                op = self._plan_membership(op, req)
            elif name == ActionName.CLUSTER_RECOVER:
                op = op.model_copy(update={"params": dict(req.params)})
            # Busy now (validators refuse others); pending only once the row is written,
            # so the main loop's RUNNING write never races this one.
            self.state = self.state.model_copy(update={"busy": op})
            await record(
                ChangeSet(
                    clusters=[cluster_snapshot(self.state, workflow.now())],
                    nodes=self._node_rows(op.new_node_ids),
                    actions=[action_change(self.state, op, ActionStatus.READY, inputs=req.params)],
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

    def _plan_create(self, op: RunningOperation) -> RunningOperation:
        spec = self.state.spec
        nodes = self._new_nodes(spec.desired_capacity)
        self.state = self.state.model_copy(
            update={
                "nodes": nodes,
                "desired_capacity": spec.desired_capacity,
                "created_at": workflow.now(),
                "next_index": self.state.next_index + len(nodes),
            }
        )
        return op.model_copy(update={"new_node_ids": tuple(n.node_id for n in nodes)})

    def _plan_membership(
        self, op: RunningOperation, req: ClusterOperationRequest
    ) -> RunningOperation:
        """Sizes, new nodes and victims, decided once at accept time (replay-safe)."""
        plan = plan_membership(self.state, op.name, req.params)
        victims = choose_victims(self.state, plan, workflow.random())
        nodes = self._new_nodes(plan.add)
        spec = self.state.spec.model_copy(
            update={"min_size": plan.min_size, "max_size": plan.max_size}
        )
        self.state = self.state.model_copy(
            update={
                "spec": spec,
                "desired_capacity": plan.desired_capacity,
                "nodes": [*self.state.nodes, *nodes],
                "next_index": self.state.next_index + len(nodes),
            }
        )
        return op.model_copy(
            update={
                "new_node_ids": tuple(n.node_id for n in nodes),
                "victim_ids": tuple(victims),
            }
        )

    def _new_nodes(self, count: int) -> list[NodeState]:
        spec, now, first = self.state.spec, workflow.now(), self.state.next_index
        return [
            NodeState(
                node_id=str(workflow.uuid4()),
                name=node_name(spec.name, i),
                index=i,
                profile_id=spec.profile_id,
                created_at=now,
                updated_at=now,
            )
            for i in range(first, first + count)
        ]

    async def _execute(self, op: RunningOperation) -> None:
        running = RUNNING_STATUS.get(op.name, self.state.status)
        self.state = self.state.model_copy(
            update={"status": running, "status_reason": f"{op.name} in progress"}
        )
        await self._changed()
        await record(
            ChangeSet(
                clusters=[cluster_snapshot(self.state, workflow.now())],
                actions=[action_change(self.state, op, ActionStatus.RUNNING)],
            ),
            summary=f"start {op.name}",
        )
        outcome = await self._run_child(op)
        await self._finish(op, outcome.succeeded, outcome.reason, outcome.result)

    async def _run_child(self, op: RunningOperation) -> Outcome:
        """Start the child that carries out `op` and wait for it (never raises)."""
        spec = self.state.spec
        inp = NodesOperationInput(
            project_id=spec.project_id,
            cluster_id=spec.cluster_id,
            cluster_name=spec.name,
            action_id=op.action_id,
            profile=self.state.profile,
            nodes=self.state.nodes,
        )
        if op.victim_ids:
            run: Any = ScaleInWorkflow.run
            arg: Any = self._scale_in_input(op)
            n = len(op.victim_ids)
        elif op.new_node_ids:
            run, n = ClusterCreateWorkflow.run, len(op.new_node_ids)
            arg = inp.model_copy(update={"nodes": self._nodes(op.new_node_ids)})
        elif op.name == ActionName.CLUSTER_RECOVER:
            plan = plan_recover(self.state, op.params)
            if not plan.node_ids:
                return Outcome(True)
            run, n = ClusterRecoverWorkflow.run, len(plan.node_ids)
            arg = ClusterRecoverInput(
                project_id=spec.project_id,
                cluster_id=spec.cluster_id,
                cluster_name=spec.name,
                action_id=op.action_id,
                nodes=self._nodes(tuple(plan.node_ids)),
                steps=plan.steps,
                profile=self.state.profile,
                detection=plan.detection,
                fencing=plan.fencing,
                node_delete_timeout=plan.node_delete_timeout,
                node_force_recreate=plan.node_force_recreate,
                concurrency=plan.concurrency,
            )
        elif op.name in _CHILDREN:
            run, arg, n = _CHILDREN[op.name][0], inp, len(self.state.nodes)
        else:
            return Outcome(True)  # e.g. a resize that only changed the size bounds
        return await run_child(
            run,
            arg,
            workflow_id=f"cluster-op:{spec.cluster_id}:{op.action_id}",
            summary=self._summary(op, n),
            attributes=warden_attributes(spec.project_id, "cluster-op", spec.cluster_id, "RUNNING"),
            details=f"Action `{op.action_id}` ({op.name}) of cluster `{spec.cluster_id}`",
        )

    def _scale_in_input(self, op: RunningOperation) -> ScaleInInput:
        spec = self.state.spec
        return ScaleInInput(
            project_id=spec.project_id,
            cluster_id=spec.cluster_id,
            cluster_name=spec.name,
            action_id=op.action_id,
            action_name=op.name,
            victims=self._nodes(op.victim_ids),
            deletion=deletion_settings(self.state),
            complete_url=f"{self.api_url.rstrip('/')}/v1/clusters/{spec.cluster_id}/actions",
            server_poll_interval_s=self.server_poll_interval_s,
        )

    def _summary(self, op: RunningOperation, n: int) -> str:
        name = self.state.spec.name
        if op.name in _MEMBERSHIP_SUMMARY:
            victims = self._nodes(op.victim_ids)
            return _MEMBERSHIP_SUMMARY[op.name].format(
                name=name,
                n=n,
                verb="remove" if op.victim_ids else "add",
                node=victims[0].name if victims else "?",
            )
        return _CHILDREN[op.name][1].format(n=n, name=name)

    def _nodes(self, ids: tuple[str, ...]) -> list[NodeState]:
        wanted = set(ids)
        return [n for n in self.state.nodes if n.node_id in wanted]

    async def _finish(
        self, op: RunningOperation, ok: bool, reason: str, result: NodesOperationResult | None
    ) -> None:
        if result is not None:
            ok, reason = ok and not result.error, reason or result.error
            if op.name != ActionName.CLUSTER_DELETE:
                self.state = self.state.model_copy(update={"nodes": self._merged(result)})
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
        # Idle from here: the final write below lands before the caller sees SUCCEEDED,
        # and an update arriving with that write's completion must not find us busy.
        self.pending = None
        final = ActionStatus.SUCCEEDED if ok else ActionStatus.FAILED
        await record(
            ChangeSet(
                clusters=[] if deleted else [cluster_snapshot(self.state, workflow.now())],
                deleted_clusters=[self.state.spec.cluster_id] if deleted else [],
                actions=[
                    action_change(self.state, op, final, reason=reason or f"{op.name} completed")
                ],
                events=[
                    cluster_event(
                        self.state,
                        op.name.value,
                        self.state.status_reason,
                        EventLevel.INFO if ok else EventLevel.ERROR,
                        op.action_id,
                    )
                ],
            ),
            summary=f"finish {op.name}",
        )
        await self._changed()

    def _merged(self, result: NodesOperationResult) -> list[NodeState]:
        """Nodes after a child: touched ones replaced, removed ones dropped."""
        touched = {n.node_id: n for n in result.nodes}
        removed = set(result.removed)
        return [touched.get(n.node_id, n) for n in self.state.nodes if n.node_id not in removed]

    async def _inline(
        self,
        name: ActionName,
        action_id: str | None,
        rule: Callable[[], object],
        change: Callable[[], dict[str, Any]],
        inputs: dict[str, Any],
    ) -> OperationAccepted:
        """An operation done inside the handler (lock, unlock, attach, detach)."""
        async with self.mutex:
            if action_id in self.recent:
                return OperationAccepted(action_id=action_id or "", status="SUCCEEDED")
            self._check_or_raise(rule)
            self.state = self.state.model_copy(update=change())
            return await self._record_inline(name, action_id, inputs)

    async def _record_inline(
        self, name: ActionName, action_id: str | None, inputs: dict[str, Any]
    ) -> OperationAccepted:
        op = RunningOperation(action_id=action_id or str(workflow.uuid4()), name=name)
        self.recent.add(op.action_id)
        await record(
            ChangeSet(
                clusters=[cluster_snapshot(self.state, workflow.now())],
                actions=[
                    action_change(
                        self.state,
                        op,
                        ActionStatus.SUCCEEDED,
                        inputs=inputs,
                        reason=f"{name} completed",
                    )
                ],
                events=[
                    cluster_event(
                        self.state, name.value, f"{name} completed", EventLevel.INFO, op.action_id
                    )
                ],
            ),
            summary=name.value.lower(),
        )
        await self._changed()
        return OperationAccepted(action_id=op.action_id, status=ActionStatus.SUCCEEDED.value)

    async def _record_rejected(self, what: str, message: str) -> None:
        workflow.logger.warning(
            "signal %s to cluster %s rejected: %s", what, self.state.spec.cluster_id, message
        )
        event = cluster_event(
            self.state, f"signal:{what}", f"Signal rejected: {message}", EventLevel.WARNING, None
        )
        await record(ChangeSet(events=[event]), summary=f"record rejected {what}")

    def _node_rows(self, ids: tuple[str, ...]) -> list[NodeSnapshot]:
        spec = self.state.spec
        return [node_snapshot(spec.project_id, spec.cluster_id, n) for n in self._nodes(ids)]

    def _carry_over(self) -> ClusterInput:
        return ClusterInput(
            state=self.state,
            pending=self.pending,
            recent_action_ids=self.recent.to_list(),
            history_limit=self.history_limit,
            api_url=self.api_url,
            server_poll_interval_s=self.server_poll_interval_s,
        )

    def _show(self) -> None:
        """Keep the UI's current details and WardenStatus true."""
        show(self.state)
