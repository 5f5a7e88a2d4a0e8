"""Which child workflow carries out a cluster operation, with what input and summary.

Decided from the operation as it was planned at accept time (new nodes, victims,
recovery plan), so a replay or a continue-as-new picks the same child.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionName
    from domain.cluster.membership import deletion_settings, plan_recover, removal_settings
    from domain.cluster.nodes import NodeState
    from domain.cluster.policies.loadbalance import lb_binding
    from domain.cluster.policies.specs import PolicyType
    from domain.cluster.rules import checked_nodes
    from domain.cluster.server_ops import ServerOperation
    from domain.cluster.state import AttachedPolicy, ClusterState, RunningOperation
    from domain.cluster.update import UpdatePlan
    from workflows.cluster.add_nodes import AddNodesInput, ClusterAddNodesWorkflow
    from workflows.cluster.affinity_policy import (
        AffinityPolicyAttachWorkflow,
        AffinityPolicyDetachWorkflow,
    )
    from workflows.cluster.lb_policy import (
        LbPolicyAttachWorkflow,
        LbPolicyDetachWorkflow,
        LbPolicyInput,
    )
    from workflows.cluster.operations import (
        ClusterCheckWorkflow,
        ClusterCreateWorkflow,
        ClusterDeleteWorkflow,
        NodesOperationInput,
    )
    from workflows.cluster.recovery import ClusterRecoverInput, ClusterRecoverWorkflow
    from workflows.cluster.replace_nodes import ClusterReplaceNodesWorkflow, ReplaceNodesInput
    from workflows.cluster.scale_in import ScaleInInput, ScaleInWorkflow
    from workflows.cluster.server_ops import ServerOperationsInput, ServerOperationsWorkflow
    from workflows.cluster.update import ClusterUpdateInput, ClusterUpdateWorkflow

_SUMMARY = {
    ActionName.CLUSTER_CREATE: "create {n} node(s) of cluster {name}",
    ActionName.CLUSTER_CHECK: "check {n} node(s) of cluster {name}",
    ActionName.NODE_CHECK: "check node {node} of cluster {name}",
    ActionName.CLUSTER_DELETE: "delete cluster {name} ({n} node(s))",
    ActionName.CLUSTER_SCALE_OUT: "scale out cluster {name} by {n} node(s)",
    ActionName.CLUSTER_SCALE_IN: "scale in cluster {name} by {n} node(s)",
    ActionName.CLUSTER_RESIZE: "resize cluster {name}: {n} node(s) to {verb}",
    ActionName.CLUSTER_DEL_NODES: "delete {n} node(s) of cluster {name}",
    ActionName.NODE_DELETE: "delete node {node} of cluster {name}",
    ActionName.NODE_CREATE: "create node {node} in cluster {name}",
    ActionName.CLUSTER_RECOVER: "recover {n} node(s) of cluster {name}",
}


@dataclass(frozen=True)
class ChildPlan:
    """The child to start: its run method, input and UI summary."""

    run: Any
    arg: Any
    summary: str


@dataclass(frozen=True)
class ClusterContext:
    """What the cluster workflow knows beyond its state (set at start by the API)."""

    api_url: str
    server_poll_interval_s: int


def nodes_of(state: ClusterState, ids: tuple[str, ...]) -> list[NodeState]:
    """The cluster's nodes with these ids, in the cluster's order."""
    wanted = set(ids)
    return [n for n in state.nodes if n.node_id in wanted]


def _policy_child(
    state: ClusterState, op: RunningOperation, base: NodesOperationInput
) -> ChildPlan:
    """The attach or detach of a policy that makes something in the cloud."""
    policy = AttachedPolicy.model_validate(op.params["policy"])
    attach = op.name == ActionName.CLUSTER_ATTACH_POLICY
    verb = "attach" if attach else "detach"
    run: Any
    if policy.type == PolicyType.AFFINITY.value:
        run = AffinityPolicyAttachWorkflow.run if attach else AffinityPolicyDetachWorkflow.run
        kind = "affinity"
    else:
        run = LbPolicyAttachWorkflow.run if attach else LbPolicyDetachWorkflow.run
        kind = "load-balancing"
    summary = f"{verb} {kind} policy {policy.name} of cluster {state.spec.name}"
    return ChildPlan(run, LbPolicyInput(base=base, policy=policy), summary)


def child_for(state: ClusterState, op: RunningOperation, ctx: ClusterContext) -> ChildPlan | None:
    """The child that carries out `op`, or None when there is nothing to run
    (e.g. a resize that only changed the size bounds, a recover with nothing to do)."""
    base = _nodes_input(state, op)
    if op.name in (ActionName.CLUSTER_ATTACH_POLICY, ActionName.CLUSTER_DETACH_POLICY):
        return _policy_child(state, op, base)
    if op.name == ActionName.CLUSTER_ADD_NODES:
        summary = f"add {len(op.params.get('nodes', []))} node(s) to cluster {state.spec.name}"
        return ChildPlan(ClusterAddNodesWorkflow.run, _joins(state, op, base), summary)
    if op.name == ActionName.CLUSTER_REPLACE_NODES:
        leave = _scale_in_input(state, op, ctx)
        # Senlin's NODE_LEAVE: a replaced member keeps its server, standalone.
        keep = leave.deletion.model_copy(update={"destroy_after_deletion": False})
        replacing = {str(k): str(v) for k, v in op.params.get("replacing", {}).items()}
        replace = ReplaceNodesInput(
            join=_joins(state, op, base),
            leave=leave.model_copy(update={"deletion": keep}),
            replacing=replacing,
        )
        summary = f"replace {len(replacing)} node(s) of cluster {state.spec.name}"
        return ChildPlan(ClusterReplaceNodesWorkflow.run, replace, summary)
    if op.victim_ids:
        victims = nodes_of(state, op.victim_ids)
        return ChildPlan(
            ScaleInWorkflow.run, _scale_in_input(state, op, ctx), _summary(state, op, victims)
        )
    if op.new_node_ids:
        new = nodes_of(state, op.new_node_ids)
        return ChildPlan(
            ClusterCreateWorkflow.run,
            base.model_copy(update={"nodes": new}),
            _summary(state, op, new),
        )
    if op.name == ActionName.CLUSTER_RECOVER:
        return _recover_child(state, op)
    if op.name == ActionName.CLUSTER_UPDATE:
        return _update_child(state, op, ctx)
    if op.name in (ActionName.CLUSTER_OPERATION, ActionName.NODE_OPERATION):
        targets = checked_nodes(state, op.params)
        operation = ServerOperation(
            name=str(op.params.get("operation", "")),
            params={str(k): str(v) for k, v in dict(op.params.get("params") or {}).items()},
        )
        ops = ServerOperationsInput(
            base=base.model_copy(update={"nodes": targets}), operation=operation
        )
        summary = f"{operation.name} {len(targets)} node(s) of {state.spec.name}"
        return ChildPlan(ServerOperationsWorkflow.run, ops, summary)
    if op.name in (ActionName.CLUSTER_CHECK, ActionName.NODE_CHECK):
        checked = checked_nodes(state, op.params)
        arg = base.model_copy(update={"nodes": checked})
        return ChildPlan(ClusterCheckWorkflow.run, arg, _summary(state, op, checked))
    if op.name == ActionName.CLUSTER_CREATE:  # an empty cluster: nothing new to build
        return ChildPlan(ClusterCreateWorkflow.run, base, _summary(state, op, state.nodes))
    if op.name == ActionName.CLUSTER_DELETE:
        return ChildPlan(ClusterDeleteWorkflow.run, base, _summary(state, op, state.nodes))
    return None


def _joins(state: ClusterState, op: RunningOperation, base: NodesOperationInput) -> AddNodesInput:
    """The standalone nodes an operation takes over, at the indexes reserved for them."""
    return AddNodesInput(
        base=base.model_copy(update={"nodes": []}),
        node_ids=[str(n) for n in op.params.get("nodes", [])],
        first_index=int(op.params.get("first_index", state.next_index)),
    )


def _nodes_input(state: ClusterState, op: RunningOperation) -> NodesOperationInput:
    spec = state.spec
    return NodesOperationInput(
        project_id=spec.project_id,
        cluster_id=spec.cluster_id,
        cluster_name=spec.name,
        action_id=op.action_id,
        profile=state.profile,
        nodes=state.nodes,
        lb=lb_binding(state.policies),
    )


def _recover_child(state: ClusterState, op: RunningOperation) -> ChildPlan | None:
    plan = plan_recover(state, op.params)
    if not plan.node_ids:
        return None
    spec, nodes = state.spec, nodes_of(state, tuple(plan.node_ids))
    arg = ClusterRecoverInput(
        project_id=spec.project_id,
        cluster_id=spec.cluster_id,
        cluster_name=spec.name,
        action_id=op.action_id,
        nodes=nodes,
        steps=plan.steps,
        profile=state.profile,
        detection=plan.detection,
        fencing=plan.fencing,
        node_delete_timeout=plan.node_delete_timeout,
        node_force_recreate=plan.node_force_recreate,
        concurrency=plan.concurrency,
        check=plan.check,
        lb=lb_binding(state.policies),
    )
    summary = (
        f"check {len(nodes)} node(s) of cluster {spec.name}, recover the unhealthy"
        if plan.check
        else _summary(state, op, nodes)
    )
    return ChildPlan(ClusterRecoverWorkflow.run, arg, summary)


def _update_child(state: ClusterState, op: RunningOperation, ctx: ClusterContext) -> ChildPlan:
    plan, spec = UpdatePlan.model_validate(op.params), state.spec
    arg = ClusterUpdateInput(
        project_id=spec.project_id,
        cluster_id=spec.cluster_id,
        cluster_name=spec.name,
        action_id=op.action_id,
        profile_id=plan.profile_id,
        profile=plan.profile,
        nodes=state.nodes,
        batches=plan.batches,
        pause_time_s=plan.pause_time_s,
        first_index=plan.first_index,
        deletion=deletion_settings(state),
        complete_url=_complete_url(ctx, spec.cluster_id),
        server_poll_interval_s=ctx.server_poll_interval_s,
        lb=lb_binding(state.policies),
        in_place=plan.in_place,
        changes=plan.changes,
    )
    summary = (
        f"update cluster {spec.name}: {len(state.nodes)} node(s) in {len(plan.batches)} batch(es)"
    )
    return ChildPlan(ClusterUpdateWorkflow.run, arg, summary)


def _complete_url(ctx: ClusterContext, cluster_id: str) -> str:
    """Where apps complete lifecycle hooks of this cluster's removals."""
    return f"{ctx.api_url.rstrip('/')}/v1/clusters/{cluster_id}/actions"


def _scale_in_input(state: ClusterState, op: RunningOperation, ctx: ClusterContext) -> ScaleInInput:
    spec = state.spec
    return ScaleInInput(
        project_id=spec.project_id,
        cluster_id=spec.cluster_id,
        cluster_name=spec.name,
        action_id=op.action_id,
        action_name=op.name,
        victims=nodes_of(state, op.victim_ids),
        deletion=removal_settings(state, op.name, op.params),
        complete_url=_complete_url(ctx, spec.cluster_id),
        server_poll_interval_s=ctx.server_poll_interval_s,
        profile=state.profile,
        lb=lb_binding(state.policies),
    )


def _summary(state: ClusterState, op: RunningOperation, nodes: list[NodeState]) -> str:
    return _SUMMARY[op.name].format(
        name=state.spec.name,
        n=len(nodes),
        verb="remove" if op.victim_ids else "add",
        node=nodes[0].name if nodes else "?",
    )
