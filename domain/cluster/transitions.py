"""The cluster an operation, a mark or a health verdict leaves: pure, no Temporal.

What an operation requires is in `domain.cluster.rules`; these functions compute
Senlin's cluster after it, so they are unit-tested without a server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.actions import ActionName
from domain.cluster.nodes import MARKED_UNHEALTHY, NodeState, NodeStatus
from domain.cluster.requests import LockClusterRequest, MarkNodeRequest
from domain.cluster.state import AttachedPolicy, ClusterState, ClusterStatus, LockInfo

# ---- the cluster after an operation ----


def locked(state: ClusterState, req: LockClusterRequest, now: datetime) -> ClusterState:
    """The cluster in maintenance mode."""
    return state.model_copy(
        update={"lock": LockInfo(reason=req.reason, owner=req.owner, locked_at=now)}
    )


def with_node(state: ClusterState, node: NodeState) -> ClusterState:
    """The cluster with one node replaced (e.g. just marked)."""
    return state.model_copy(
        update={"nodes": [node if n.node_id == node.node_id else n for n in state.nodes]}
    )


def finished(
    state: ClusterState, name: ActionName, ok: bool, reason: str, nodes: list[NodeState] | None
) -> ClusterState:
    """Senlin's cluster after operation `name` ended (`nodes`: as the child left them)."""
    deleted = ok and name == ActionName.CLUSTER_DELETE
    status = ClusterStatus.DELETING if deleted else status_after(name, ok, state.status)
    return state.model_copy(
        update={
            **({"nodes": nodes} if nodes is not None and name != ActionName.CLUSTER_DELETE else {}),
            "status": status,
            "status_reason": reason or f"{name} completed",
            "busy": None,
            "deleted": deleted,
            "created": state.created or name == ActionName.CLUSTER_CREATE,
        }
    )


def with_profile(state: ClusterState, profile_id: str, profile: dict[str, Any]) -> ClusterState:
    """The cluster on a new profile (after an update rolled every node onto it)."""
    spec = state.spec.model_copy(update={"profile_id": profile_id})
    return state.model_copy(update={"spec": spec, "profile": profile})


def takes_health_verdict(state: ClusterState) -> bool:
    """Whether a health verdict may change the status: only an idle cluster that is
    ACTIVE or WARNING (an operation's outcome and ERROR are not the manager's to undo)."""
    return state.busy is None and state.status in (ClusterStatus.ACTIVE, ClusterStatus.WARNING)


def with_health_verdict(state: ClusterState, warning: str) -> ClusterState:
    """The health manager's verdict: WARNING with its reason, or ACTIVE when all clear."""
    state = state.model_copy(update={"health_warning": warning})
    if not takes_health_verdict(state):
        return state
    return state.model_copy(
        update={
            "status": ClusterStatus.WARNING if warning else ClusterStatus.ACTIVE,
            "status_reason": warning or "Health checks pass",
        }
    )


def mark_node(state: ClusterState, req: MarkNodeRequest, now: datetime) -> NodeState:
    """The node after a mark (ERROR, first victim) or after clearing it."""
    node = next(n for n in state.nodes if n.node_id == req.node_id)
    data = {k: v for k, v in node.data.items() if k != MARKED_UNHEALTHY}
    if req.mark_unhealthy:
        reason = req.status_reason or "Marked unhealthy by user"
        data[MARKED_UNHEALTHY] = True
        return node.model_copy(
            update={
                "status": NodeStatus.ERROR,
                "status_reason": reason,
                "data": data,
                "updated_at": now,
            }
        )
    status = NodeStatus.ACTIVE if node.physical_id else NodeStatus.INIT
    return node.model_copy(
        update={"status": status, "status_reason": "", "data": data, "updated_at": now}
    )


def status_after(operation: ActionName, succeeded: bool, previous: ClusterStatus) -> ClusterStatus:
    """The cluster status once `operation` has ended."""
    if operation in (ActionName.CLUSTER_ATTACH_POLICY, ActionName.CLUSTER_DETACH_POLICY):
        return previous  # a binding's change leaves the nodes as they were
    if operation in (ActionName.NODE_CHECK, ActionName.NODE_OPERATION):
        # One node's check or operation says nothing of the others.
        failed = ClusterStatus.ERROR if previous == ClusterStatus.ERROR else ClusterStatus.WARNING
        return previous if succeeded else failed
    if succeeded:
        return ClusterStatus.ACTIVE
    if operation == ActionName.CLUSTER_CHECK:
        return ClusterStatus.WARNING
    if operation == ActionName.CLUSTER_CREATE:
        return ClusterStatus.ERROR
    return ClusterStatus.ERROR if previous == ClusterStatus.ERROR else ClusterStatus.WARNING


def rebound(state: ClusterState, name: ActionName, policy: AttachedPolicy) -> ClusterState:
    """The cluster's bindings once a policy attach (`policy` with what it made) or
    detach carried out by a child has succeeded."""
    kept = [p for p in state.policies if p.policy_id != policy.policy_id]
    if name == ActionName.CLUSTER_ATTACH_POLICY:
        kept.append(policy)
    return state.model_copy(update={"policies": kept})
