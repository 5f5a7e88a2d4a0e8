"""NodeWorkflow: the entity workflow of one standalone node (`node:{node_id}`).

Senlin's orphan node: made by `POST /v1/nodes` without a cluster, it lives on its own
until a cluster's `add_nodes` takes it (the `join` signal; the node answers `joined`
to the cluster's child and this workflow ends). Its long operations run the cluster's
node children on a one-node view of it (`domain.cluster.standalone.as_cluster`), so a
standalone node's server is created, checked, recovered and deleted exactly as a
member's is.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.cluster.nodes import NodeState, NodeStatus
    from domain.cluster.requests import ClusterOperationRequest, OperationAccepted
    from domain.cluster.standalone import (
        NO_CLUSTER,
        JoinAnswer,
        JoinRequest,
        NodeUpdateRequest,
        StandaloneNode,
        as_cluster,
        gone,
        join_refusal,
        updated,
    )
    from domain.cluster.state import RunningOperation
    from domain.events import EventLevel, node_event
    from domain.projection import ChangeSet
    from workflows import ids
    from workflows.cluster.children import ChildPlan, ClusterContext, child_for
    from workflows.cluster.operations import NodesOperationResult, node_snapshot
    from workflows.entity import Outcome, record, record_now, run_child
    from workflows.node.messages import JOIN_SIGNAL, JOINED_SIGNAL, NodeInput
    from workflows.node.messages import NodeOperations as Ops
    from workflows.operation import Operation
    from workflows.search_attributes import show_status, warden_attributes
    from workflows.spine import EntityWorkflow, update_and_signal, update_handler

NodeOp = Operation[StandaloneNode, Any, OperationAccepted]
#: The cluster operation whose child carries out each node operation.
_AS_CLUSTER_OPERATION = {
    ActionName.NODE_CREATE: ActionName.CLUSTER_CREATE,
    ActionName.NODE_DELETE: ActionName.CLUSTER_DELETE,
    ActionName.NODE_CHECK: ActionName.NODE_CHECK,
    ActionName.NODE_RECOVER: ActionName.CLUSTER_RECOVER,
    ActionName.NODE_OPERATION: ActionName.NODE_OPERATION,
    # A new profile: the node's server is recreated from it (Warden does not update a
    # server in place to another profile, as it replaces a cluster's nodes).
    ActionName.NODE_UPDATE: ActionName.CLUSTER_RECOVER,
}
#: What the node shows while an operation runs.
_RUNNING = {
    ActionName.NODE_CREATE: NodeStatus.CREATING,
    ActionName.NODE_DELETE: NodeStatus.DELETING,
    ActionName.NODE_RECOVER: NodeStatus.RECOVERING,
}


class NodeSpine(EntityWorkflow[StandaloneNode, RunningOperation, OperationAccepted]):
    """A standalone node's state and the bodies of its operations' handlers."""

    # ---- handler bodies ----

    async def accept(self, op: NodeOp, req: ClusterOperationRequest) -> OperationAccepted:
        """Accept an operation a `node-op` child carries out; the main loop runs it."""
        name = ActionName(op.action)

        async def start(action_id: str) -> OperationAccepted:
            planned = RunningOperation(action_id=action_id, name=name, params=dict(req.params))
            self.state = self.state.model_copy(update={"busy": planned})
            await record_now(
                ChangeSet(
                    nodes=[self._row()],
                    actions=[self._action(planned, ActionStatus.READY, inputs=req.params)],
                ),
                summary=f"accept {name}",
            )
            self.pending = planned
            return self._answer_again(op, action_id)

        return await self._perform(op, req, start)

    async def change(self, op: NodeOp, req: NodeUpdateRequest) -> OperationAccepted:
        """Change the node's name, role or metadata (inline)."""

        async def done(action_id: str) -> OperationAccepted:
            self.state = updated(self.state, req, workflow.now())
            finished = RunningOperation(action_id=action_id, name=ActionName.NODE_UPDATE)
            await record_now(
                ChangeSet(
                    nodes=[self._row()],
                    actions=[
                        self._action(
                            finished,
                            ActionStatus.SUCCEEDED,
                            child=False,
                            inputs=req.model_dump(exclude={"action_id"}, exclude_none=True),
                            reason="Node updated successfully.",
                        )
                    ],
                    events=[self._event("NODE_UPDATE", "Node updated successfully.", action_id)],
                ),
                summary="update node",
            )
            self._show()
            return self._answer_again(op, action_id)

        return await self._perform(op, req, done, id_first=False)

    async def hand_over(self, req: JoinRequest) -> None:
        """Answer a cluster's `join`: the node as it joins (the entity then ends), or why
        it cannot."""
        async with self.mutex:
            refused = join_refusal(self.state, req)
            if not refused and self.state.joined_cluster is None:
                node = self.state.node.model_copy(
                    update={"index": req.index, "updated_at": workflow.now()}
                )
                self.state = self.state.model_copy(
                    update={"node": node, "joined_cluster": req.cluster_id}
                )
            answer = JoinAnswer(
                node_id=self.state.node.node_id,
                node=None if refused else self.state.node,
                refused=refused,
            )
            # The child records the node's row under its cluster: nothing to write here.
            await workflow.get_external_workflow_handle(req.reply_to).signal(JOINED_SIGNAL, answer)
            self._show()

    # ---- execution (the main loop) ----

    async def _execute(self, op: RunningOperation) -> None:
        running = _RUNNING.get(op.name)
        if running is not None:
            node = self.state.node.model_copy(
                update={"status": running, "status_reason": f"{op.name} in progress"}
            )
            self.state = self.state.model_copy(update={"node": node})
        await record(
            ChangeSet(nodes=[self._row()], actions=[self._action(op, ActionStatus.RUNNING)]),
            summary=f"start {op.name}",
        )
        self._show()
        plan = self._child(op)
        outcome = Outcome(True)
        if plan is not None:
            node_id = self.state.node.node_id
            outcome = await run_child(
                plan.run,
                plan.arg,
                workflow_id=ids.node_operation(node_id, op.action_id),
                summary=f"{op.name.lower().replace('_', ' ')} {self.state.node.name}",
                attributes=warden_attributes(self.state.project_id, "node-op", node_id, "RUNNING"),
                details=f"Action `{op.action_id}` ({op.name}) of node `{node_id}`",
            )
        await self._finish(op, outcome)

    def _child(self, op: RunningOperation) -> ChildPlan | None:
        node_id = self.state.node.node_id
        params = {**op.params, "nodes": [node_id]}
        state = self.state
        if op.name == ActionName.NODE_UPDATE:
            state = state.model_copy(update={"profile": op.params.get("profile", {})})
            params = {"operation": "RECREATE", "nodes": [node_id]}
        as_op = RunningOperation(
            action_id=op.action_id,
            name=_AS_CLUSTER_OPERATION[op.name],
            new_node_ids=(node_id,) if op.name == ActionName.NODE_CREATE else (),
            params=params,
        )
        return child_for(as_cluster(state), as_op, ClusterContext("", 30))

    async def _finish(self, op: RunningOperation, outcome: Outcome) -> None:
        result: NodesOperationResult | None = outcome.result
        ok, reason = outcome.succeeded, outcome.reason
        node = self.state.node
        if result is not None:
            ok, reason = ok and not result.error, reason or result.error
            node = next((n for n in result.nodes if n.node_id == node.node_id), node)
        deleted = ok and op.name == ActionName.NODE_DELETE
        if not ok and op.name in _RUNNING and node.status == _RUNNING[op.name]:
            node = node.model_copy(update={"status": NodeStatus.ERROR, "status_reason": reason})
        profile = self.state.profile
        if ok and op.name == ActionName.NODE_UPDATE:  # recreated on the new profile
            node = node.model_copy(update={"profile_id": str(op.params["profile_id"])})
            profile = dict(op.params.get("profile", {}))
        self.state = self.state.model_copy(
            update={
                "profile": profile,
                "node": node,
                "busy": None,
                "deleted": deleted,
                "created": self.state.created or op.name == ActionName.NODE_CREATE,
            }
        )
        self.pending = None
        final = ActionStatus.SUCCEEDED if ok else ActionStatus.FAILED
        said = reason or f"{op.name} completed"
        await record(
            ChangeSet(
                nodes=[] if deleted else [self._row()],
                deleted_nodes=[node.node_id] if deleted else [],
                actions=[self._action(op, final, reason=said)],
                events=[
                    self._event(
                        op.name.value,
                        said,
                        op.action_id,
                        EventLevel.INFO if ok else EventLevel.ERROR,
                    )
                ],
            ),
            summary=f"finish {op.name}",
        )
        self._show()

    # ---- projection helpers ----

    def _row(self) -> Any:
        return node_snapshot(self.state.project_id, NO_CLUSTER, self.state.node)

    def _action(
        self,
        op: RunningOperation,
        status: ActionStatus,
        *,
        reason: str = "",
        inputs: dict[str, Any] | None = None,
        child: bool = True,
    ) -> ActionChange:
        node_id = self.state.node.node_id
        return ActionChange(
            action_id=op.action_id,
            project_id=self.state.project_id,
            name=op.name,
            target=node_id,
            status=status,
            status_reason=reason,
            inputs=inputs,
            workflow_id=ids.node_operation(node_id, op.action_id)
            if child
            else workflow.info().workflow_id,
            at=workflow.now(),
        )

    def _event(
        self, action: str, reason: str, action_id: str | None, level: EventLevel | None = None
    ) -> Any:
        node: NodeState = self.state.node
        return node_event(
            event_id=str(workflow.uuid4()),
            at=workflow.now(),
            project_id=self.state.project_id,
            cluster_id=NO_CLUSTER,
            node_id=node.node_id,
            node_name=node.name,
            action=action,
            status=node.status.value,
            reason=reason,
            level=level,
            action_id=action_id,
        )

    # ---- what the spine asks of an entity ----

    def _deleted(self) -> bool:
        return gone(self.state)

    def _carry_over(self) -> NodeInput:
        return NodeInput(
            state=self.state,
            pending=self.pending,
            recent_action_ids=self.recent.to_list(),
            history_limit=self.history_limit,
        )

    def _show(self) -> None:
        node, state = self.state.node, self.state
        where = f" · joined cluster `{state.joined_cluster}`" if state.joined_cluster else ""
        busy = f" · running {state.busy.name}" if state.busy else ""
        workflow.set_current_details(
            f"Node **{node.name}** is {node.status.value}{busy}{where}\n\n{node.status_reason}"
        )
        show_status("DELETED" if state.deleted else node.status.value)

    def _answer_again(self, op: NodeOp, action_id: str) -> OperationAccepted:
        status = ActionStatus.READY if op.child else ActionStatus.SUCCEEDED
        return OperationAccepted(action_id=action_id, status=status.value)

    async def _signal_refused(self, op: NodeOp, req: Any, reason: str) -> None:
        workflow.logger.warning(
            "signal %s to node %s rejected: %s", op.name, self.state.node.node_id, reason
        )
        await record(
            ChangeSet(
                events=[self._event(f"signal:{op.name}", f"Signal rejected: {reason}", None)]
            ),
            summary=f"record rejected {op.name}",
        )


@workflow.defn(name="NodeWorkflow")
class NodeWorkflow(NodeSpine):
    """Owns a standalone node's state; serialises its operations; is its lock."""

    create = update_handler(Ops.create, NodeSpine.accept)
    delete, delete_signal = update_and_signal(Ops.delete, NodeSpine.accept)
    check, check_signal = update_and_signal(Ops.check, NodeSpine.accept)
    recover, recover_signal = update_and_signal(Ops.recover, NodeSpine.accept)
    update_profile, update_profile_signal = update_and_signal(Ops.update_profile, NodeSpine.accept)
    operation, operation_signal = update_and_signal(Ops.operation, NodeSpine.accept)
    update, update_signal = update_and_signal(Ops.update, NodeSpine.change)

    @workflow.init
    def __init__(self, inp: NodeInput) -> None:
        self._begin(inp.state, inp.pending, inp.recent_action_ids, inp.history_limit)

    @workflow.run
    async def run(self, inp: NodeInput) -> StandaloneNode:
        await self._serve()
        return self.state

    @workflow.signal(name=JOIN_SIGNAL)
    async def join(self, req: JoinRequest) -> None:
        """A cluster's `add_nodes` takes the node: answer `joined` (and end) or refuse."""
        await self.hand_over(req)

    @workflow.query(name="describe")
    def describe(self) -> StandaloneNode:
        """The node as this workflow knows it (needs a running worker)."""
        return self.state
