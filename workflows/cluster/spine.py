"""How a cluster's entity workflow carries out its operations (the handlers' bodies).

`ClusterWorkflow` (`workflows/cluster/workflow.py`) binds each operation of `ClusterOperations`
to one of the bodies here. Operations carried out by a `cluster-op` child are planned
at accept time (new nodes, victims: replay-safe), then run by the main loop; locks,
policy bindings and node marks are done in the handler. What the cluster looks like
after each step is decided in `domain/cluster/transitions.py`; the health manager is
kept informed by `workflows/cluster/health_link.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionName, ActionStatus
    from domain.cluster import transitions
    from domain.cluster.membership import (
        MEMBERSHIP_OPERATIONS,
        NodeCreateParams,
        choose_victims,
        health_policy,
        plan_membership,
        plan_replace,
    )
    from domain.cluster.nodes import NODE_NAME_FORMAT, NodeState, node_name
    from domain.cluster.placement import placed
    from domain.cluster.policies.specs import PolicyType
    from domain.cluster.requests import (
        ClusterOperationRequest,
        ClusterPropertiesRequest,
        LockClusterRequest,
        MarkNodeRequest,
        OperationAccepted,
        PolicyAttachRequest,
        PolicyDetachRequest,
        PolicyUpdateRequest,
    )
    from domain.cluster.scale_actions import SCALE_ACTIONS, after_scale
    from domain.cluster.state import RUNNING_STATUS, AttachedPolicy, ClusterState, RunningOperation
    from domain.cluster.transitions import mark_node
    from domain.cluster.update import UpdatePlan, plan_update
    from domain.events import EventLevel
    from domain.projection import ChangeSet, NodeSnapshot, cluster_snapshot
    from workflows import ids
    from workflows.cluster.children import ClusterContext, child_for, nodes_of
    from workflows.cluster.health_link import ClusterHealthLink
    from workflows.cluster.messages import ClusterInput
    from workflows.cluster.operations import NodesOperationResult, node_snapshot
    from workflows.cluster.records import action_change, cluster_event, node_event
    from workflows.entity import Outcome, record, run_child
    from workflows.operation import Operation
    from workflows.search_attributes import warden_attributes

#: Policy types whose attach makes something in the cloud (a load balancer, a server
#: group) and whose detach deletes it: both are child operations, not inline.
_MADE_ON_ATTACH = frozenset({PolicyType.LOADBALANCE.value, PolicyType.AFFINITY.value})

ClusterOp = Operation[ClusterState, Any, OperationAccepted]


class ClusterSpine(ClusterHealthLink):
    """A cluster's state and the bodies of its operations' handlers."""

    def _setup(self, inp: ClusterInput) -> None:
        self._begin(inp.state, inp.pending, inp.recent_action_ids, inp.history_limit)
        self.context = ClusterContext(inp.api_url, inp.server_poll_interval_s)

    # ---- handler bodies (bound to operations in workflows/cluster/workflow.py) ----

    async def accept(self, op: ClusterOp, req: ClusterOperationRequest) -> OperationAccepted:
        """Accept an operation a `cluster-op` child carries out; the main loop runs it."""
        name = ActionName(op.action)

        async def start(action_id: str) -> OperationAccepted:
            planned = self._planned(RunningOperation(action_id=action_id, name=name), req)
            # Busy now (validators refuse others); pending only once the row is written,
            # so the main loop's RUNNING write never races this one.
            self.state = self.state.model_copy(update={"busy": planned})
            await record(
                ChangeSet(
                    clusters=[cluster_snapshot(self.state, workflow.now())],
                    nodes=self._node_rows(planned.new_node_ids),
                    actions=[
                        action_change(self.state, planned, ActionStatus.READY, inputs=req.params)
                    ],
                ),
                summary=f"accept {name}",
            )
            self.pending = planned
            return self._answer_again(op, action_id)

        return await self._perform(op, req, start)

    async def enter_maintenance(self, op: ClusterOp, req: LockClusterRequest) -> OperationAccepted:
        """Enter maintenance mode (inline)."""
        inputs = {"reason": req.reason, "owner": req.owner}
        change = lambda: transitions.locked(self.state, req, workflow.now())  # noqa: E731
        return await self._inline(op, req, change, inputs)

    async def leave_maintenance(
        self, op: ClusterOp, req: ClusterOperationRequest
    ) -> OperationAccepted:
        """Leave maintenance mode (inline)."""
        return await self._inline(op, req, lambda: self.state.model_copy(update={"lock": None}), {})

    async def attach(self, op: ClusterOp, req: PolicyAttachRequest) -> OperationAccepted:
        """Bind a policy; a health policy starts (or informs) the health manager; a
        load-balancing policy makes its load balancer first (a child operation)."""
        if req.policy.type in _MADE_ON_ATTACH:
            return await self._bind_later(op, req, ActionName.CLUSTER_ATTACH_POLICY, req.policy)
        accepted = await self._inline(
            op,
            req,
            lambda: self.state.model_copy(update={"policies": [*self.state.policies, req.policy]}),
            {"policy_id": req.policy.policy_id, "enabled": req.policy.enabled},
        )
        if req.policy.type == PolicyType.HEALTH.value and req.policy.enabled:
            await self._start_health_manager(req.policy)
        return accepted

    async def detach(self, op: ClusterOp, req: PolicyDetachRequest) -> OperationAccepted:
        """Unbind a policy; the last health policy gone stops the health manager; a
        load-balancing policy's load balancer goes first (a child operation)."""
        bound = next((p for p in self.state.policies if p.policy_id == req.policy_id), None)
        if bound is not None and bound.type in _MADE_ON_ATTACH:
            return await self._bind_later(op, req, ActionName.CLUSTER_DETACH_POLICY, bound)
        was_watched = health_policy(self.state) is not None

        def detached() -> ClusterState:
            kept = [p for p in self.state.policies if p.policy_id != req.policy_id]
            return self.state.model_copy(update={"policies": kept})

        accepted = await self._inline(
            op,
            req,
            detached,
            {"policy_id": req.policy_id},
        )
        if was_watched and health_policy(self.state) is None:
            await self._signal_health("stop")
        return accepted

    async def change_properties(
        self, op: ClusterOp, req: ClusterPropertiesRequest
    ) -> OperationAccepted:
        """Rename the cluster, or change its metadata, config or timeout (inline)."""
        changes = req.model_dump(exclude={"action_id"}, exclude_none=True)

        def changed() -> ClusterState:
            spec = self.state.spec.model_copy(update=changes)
            return self.state.model_copy(update={"spec": spec})

        return await self._inline(op, req, changed, changes)

    async def rebind(self, op: ClusterOp, req: PolicyUpdateRequest) -> OperationAccepted:
        """Switch a bound policy on or off; the health manager follows its policy."""
        was_watched = health_policy(self.state) is not None

        def rebound() -> ClusterState:
            policies = [
                p.model_copy(update={"enabled": req.enabled})
                if p.policy_id == req.policy_id and req.enabled is not None
                else p
                for p in self.state.policies
            ]
            return self.state.model_copy(update={"policies": policies})

        accepted = await self._inline(
            op, req, rebound, {"policy_id": req.policy_id, "enabled": req.enabled}
        )
        watched = next(
            (p for p in self.state.policies if p.type == PolicyType.HEALTH.value and p.enabled),
            None,
        )
        if was_watched and watched is None:
            await self._signal_health("stop")
        elif watched is not None and not was_watched:
            await self._start_health_manager(watched)
        return accepted

    async def mark(self, op: ClusterOp, req: MarkNodeRequest) -> OperationAccepted:
        """Mark a node unhealthy (ERROR; first victim of the next scale-in) or clear it."""

        async def marked(action_id: str) -> OperationAccepted:
            node = mark_node(self.state, req, workflow.now())
            self.state = transitions.with_node(self.state, node)
            verb = "marked unhealthy" if req.mark_unhealthy else "mark cleared"
            spec = self.state.spec
            reason = f"Node {verb}: {node.status_reason or 'healthy'}"
            await record(
                ChangeSet(
                    nodes=[node_snapshot(spec.project_id, spec.cluster_id, node)],
                    events=[node_event(self.state, node, "NODE_MARK_UNHEALTHY", reason)],
                ),
                summary=f"node {node.name} {verb}",
            )
            await self._changed()
            return self._answer_again(op, action_id)

        return await self._perform(op, req, marked, id_first=False)

    async def _bind_later(
        self,
        op: ClusterOp,
        req: PolicyAttachRequest | PolicyDetachRequest,
        name: ActionName,
        policy: AttachedPolicy,
    ) -> OperationAccepted:
        """An attach or detach that needs the cloud: a child carries it out, and the
        binding changes when it has succeeded (`_finish`)."""

        async def start(action_id: str) -> OperationAccepted:
            params = {"policy": policy.model_dump(mode="json")}
            planned = RunningOperation(action_id=action_id, name=name, params=params)
            self.state = self.state.model_copy(update={"busy": planned})
            inputs = {"policy_id": policy.policy_id}
            await record(
                ChangeSet(
                    clusters=[cluster_snapshot(self.state, workflow.now())],
                    actions=[action_change(self.state, planned, ActionStatus.READY, inputs=inputs)],
                ),
                summary=f"accept {name}",
            )
            self.pending = planned
            return OperationAccepted(action_id=action_id, status=ActionStatus.READY.value)

        return await self._perform(op, req, start)

    # ---- acceptance ----

    def _planned(self, op: RunningOperation, req: ClusterOperationRequest) -> RunningOperation:
        if op.name == ActionName.CLUSTER_CREATE:
            return self._plan_create(op)
        if op.name in MEMBERSHIP_OPERATIONS:
            return self._plan_membership(op, req)
        if op.name in (
            ActionName.CLUSTER_RECOVER,
            ActionName.NODE_CHECK,
            ActionName.NODE_OPERATION,
            ActionName.CLUSTER_OPERATION,
        ):
            return op.model_copy(update={"params": dict(req.params)})
        if op.name == ActionName.CLUSTER_UPDATE:
            return self._plan_update(op, req)
        if op.name == ActionName.CLUSTER_REPLACE_NODES:
            return self._plan_replace(op, req)
        return op

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
        if plan.refusal:  # fails without running: nothing changes
            return op.model_copy(update={"refusal": plan.refusal, "params": dict(req.params)})
        victims = choose_victims(self.state, plan, workflow.random())
        nodes = self._new_nodes(plan.add)
        if op.name == ActionName.NODE_CREATE:  # named by the caller, its id chosen by the API
            named = NodeCreateParams.model_validate(req.params)
            nodes = [
                n.model_copy(
                    update=named.model_dump(
                        include={"node_id", "name", "role", "metadata", "profile_id"}
                    )
                )
                for n in nodes
            ]
        nodes = placed(self.state, nodes)  # a zone placement policy's zones
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
        if plan.joining:  # one name index reserved per node taken over
            params = {"nodes": list(plan.joining), "first_index": self.state.next_index}
            self.state = self.state.model_copy(
                update={"next_index": self.state.next_index + len(plan.joining)}
            )
            return op.model_copy(update={"params": params})
        kept = dict(req.params) if op.name == ActionName.CLUSTER_DEL_NODES else op.params
        return op.model_copy(
            update={
                "new_node_ids": tuple(n.node_id for n in nodes),
                "victim_ids": tuple(victims),
                "params": kept,
            }
        )

    def _plan_replace(self, op: RunningOperation, req: ClusterOperationRequest) -> RunningOperation:
        """The members leaving and, in the same order, the nodes taking their place (one
        name index reserved each)."""
        pairs = plan_replace(self.state, req.params)
        params = {
            "nodes": list(pairs.values()),
            "first_index": self.state.next_index,
            "replacing": pairs,
        }
        self.state = self.state.model_copy(
            update={"next_index": self.state.next_index + len(pairs)}
        )
        return op.model_copy(update={"victim_ids": tuple(pairs), "params": params})

    def _plan_update(self, op: RunningOperation, req: ClusterOperationRequest) -> RunningOperation:
        """Batches decided now (replay-safe); one name index reserved per replacement."""
        in_place = workflow.patched("cluster-update-in-place")
        plan = plan_update(self.state, req.params, in_place=in_place)
        reserved = self.state.next_index + len(self.state.nodes)
        self.state = self.state.model_copy(update={"next_index": reserved})
        return op.model_copy(update={"params": plan.model_dump(mode="json")})

    def _new_nodes(self, count: int) -> list[NodeState]:
        spec, now, first = self.state.spec, workflow.now(), self.state.next_index
        return [
            NodeState(
                node_id=str(workflow.uuid4()),
                name=node_name(spec.name, i, spec.config.get(NODE_NAME_FORMAT), workflow.random()),
                index=i,
                profile_id=spec.profile_id,
                created_at=now,
                updated_at=now,
            )
            for i in range(first, first + count)
        ]

    # ---- execution (the main loop) ----

    async def _execute(self, op: RunningOperation) -> None:
        if op.refusal:
            await self._refused(op)
            return
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
        child = child_for(self.state, op, self.context)
        if child is None:
            return Outcome(True)
        spec = self.state.spec
        return await run_child(
            child.run,
            child.arg,
            workflow_id=ids.cluster_operation(spec.cluster_id, op.action_id),
            summary=child.summary,
            attributes=warden_attributes(spec.project_id, "cluster-op", spec.cluster_id, "RUNNING"),
            details=f"Action `{op.action_id}` ({op.name}) of cluster `{spec.cluster_id}`",
        )

    async def _finish(
        self, op: RunningOperation, ok: bool, reason: str, result: NodesOperationResult | None
    ) -> None:
        nodes = None
        if result is not None:
            ok, reason = ok and not result.error, reason or result.error
            nodes = self._merged(result)
        if op.name == ActionName.CLUSTER_ADD_NODES and result is not None:
            # The size grew by every node asked for at accept; keep only those that joined.
            refused = len(op.params.get("nodes", [])) - len(result.nodes)
            desired = max(0, self.state.desired_capacity - refused)
            self.state = self.state.model_copy(update={"desired_capacity": desired})
        self.state = transitions.finished(self.state, op.name, ok, reason, nodes)
        if op.name in SCALE_ACTIONS:
            self.state = after_scale(self.state, op.name, "", workflow.now())
        if ok and result is not None and result.policy is not None:
            self.state = transitions.rebound(self.state, op.name, result.policy)
        if ok and op.name == ActionName.CLUSTER_UPDATE:
            plan = UpdatePlan.model_validate(op.params)
            self.state = transitions.with_profile(self.state, plan.profile_id, plan.profile)
        # Idle from here: the final write below lands before the caller sees SUCCEEDED,
        # and an update arriving with that write's completion must not find us busy.
        self.pending = None
        deleted, final = self.state.deleted, ActionStatus.SUCCEEDED if ok else ActionStatus.FAILED
        level = EventLevel.INFO if ok else EventLevel.ERROR
        await record(
            ChangeSet(
                clusters=[] if deleted else [cluster_snapshot(self.state, workflow.now())],
                deleted_clusters=[self.state.spec.cluster_id] if deleted else [],
                actions=[action_change(self.state, op, final, reason=self.state.status_reason)],
                events=[
                    cluster_event(
                        self.state, op.name.value, self.state.status_reason, level, op.action_id
                    )
                ],
            ),
            summary=f"finish {op.name}",
        )
        await self._changed()

    async def _refused(self, op: RunningOperation) -> None:
        """End an action Senlin's checks refuse: FAILED with the reason, the cluster's
        status and size as they were."""
        self.state = self.state.model_copy(update={"busy": None})
        if op.name in SCALE_ACTIONS:
            self.state = after_scale(self.state, op.name, op.refusal, workflow.now())
        self.pending = None
        await record(
            ChangeSet(
                clusters=[cluster_snapshot(self.state, workflow.now())],
                actions=[action_change(self.state, op, ActionStatus.FAILED, reason=op.refusal)],
                events=[
                    cluster_event(
                        self.state, op.name.value, op.refusal, EventLevel.ERROR, op.action_id
                    )
                ],
            ),
            summary=f"refuse {op.name}",
        )
        await self._changed()

    def _merged(self, result: NodesOperationResult) -> list[NodeState]:
        """Nodes after a child: touched ones replaced, new ones added, removed ones dropped."""
        touched = {n.node_id: n for n in result.nodes}
        removed = set(result.removed)
        known = {n.node_id for n in self.state.nodes}
        kept = [touched.get(n.node_id, n) for n in self.state.nodes if n.node_id not in removed]
        return kept + [n for n in result.nodes if n.node_id not in known | removed]

    # ---- inline operations ----

    async def _inline(
        self,
        op: ClusterOp,
        req: Any,
        change: Callable[[], ClusterState],
        inputs: dict[str, Any],
    ) -> OperationAccepted:
        """An operation done inside the handler: change the state, record a done action."""

        async def done(action_id: str) -> OperationAccepted:
            self.state = change()
            name = ActionName(op.action)
            finished = RunningOperation(action_id=action_id, name=name)
            await record(
                ChangeSet(
                    clusters=[cluster_snapshot(self.state, workflow.now())],
                    actions=[
                        action_change(
                            self.state,
                            finished,
                            ActionStatus.SUCCEEDED,
                            inputs=inputs,
                            reason=f"{name} completed",
                        )
                    ],
                    events=[
                        cluster_event(
                            self.state, name.value, f"{name} completed", EventLevel.INFO, action_id
                        )
                    ],
                ),
                summary=name.value.lower(),
            )
            await self._changed()
            return self._answer_again(op, action_id)

        return await self._perform(op, req, done, id_first=False)

    def _node_rows(self, node_ids: tuple[str, ...]) -> list[NodeSnapshot]:
        spec = self.state.spec
        return [
            node_snapshot(spec.project_id, spec.cluster_id, n)
            for n in nodes_of(self.state, node_ids)
        ]

    # ---- what the spine asks of an entity ----

    def _deleted(self) -> bool:
        return self.state.deleted

    def _judged(self) -> ClusterState:
        return self.state.model_copy(update={"now": workflow.now()})

    def _carry_over(self) -> ClusterInput:
        return ClusterInput(
            state=self.state,
            pending=self.pending,
            recent_action_ids=self.recent.to_list(),
            history_limit=self.history_limit,
            api_url=self.context.api_url,
            server_poll_interval_s=self.context.server_poll_interval_s,
        )

    def _answer_again(
        self, op: Operation[Any, Any, OperationAccepted], action_id: str
    ) -> OperationAccepted:
        status = ActionStatus.READY if op.child else ActionStatus.SUCCEEDED
        return OperationAccepted(action_id=action_id, status=status.value)

    async def _signal_refused(self, op: Operation[Any, Any, Any], req: Any, reason: str) -> None:
        """Record what the update twin would have answered."""
        workflow.logger.warning(
            "signal %s to cluster %s rejected: %s", op.name, self.state.spec.cluster_id, reason
        )
        event = cluster_event(
            self.state, f"signal:{op.name}", f"Signal rejected: {reason}", EventLevel.WARNING, None
        )
        await record(ChangeSet(events=[event]), summary=f"record rejected {op.name}")
