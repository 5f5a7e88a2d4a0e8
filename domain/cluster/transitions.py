"""What a cluster operation requires, and the cluster it leaves: pure, no Temporal.

The rules refuse an operation (a `WardenError`: 409 Conflict, 400, 404); the
`ClusterWorkflow` applies each in its update's validator and again under its mutex.
The state functions compute Senlin's cluster after an operation or a health verdict,
so they are unit-tested without a server.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from domain.actions import ActionName
from domain.cluster.membership import MEMBERSHIP_OPERATIONS, plan_membership, plan_recover
from domain.cluster.nodes import NodeState
from domain.cluster.state import (
    ClusterOperationRequest,
    ClusterState,
    ClusterStatus,
    LockClusterRequest,
    LockInfo,
    MarkNodeRequest,
    PolicyAttachRequest,
    PolicyDetachRequest,
    ensure_can_attach,
    ensure_can_detach,
    ensure_can_lock,
    ensure_can_mark,
    ensure_can_start,
    ensure_can_unlock,
    status_after,
)
from domain.cluster.update import plan_update
from domain.errors import Conflict, NotFound

# ---- rules: what an operation requires (raise WardenError to refuse) ----


def may_start(name: ActionName) -> Callable[[ClusterState, ClusterOperationRequest], object]:
    """The rule of an operation a `cluster-op` child carries out (create, scale_in, …)."""

    def rule(state: ClusterState, req: ClusterOperationRequest) -> None:
        if name == ActionName.CLUSTER_CREATE and state.created:
            raise Conflict(f"Cluster {state.spec.name} already exists.")
        ensure_can_start(state, name)
        if name in MEMBERSHIP_OPERATIONS:
            plan_membership(state, name, req.params)
        if name == ActionName.CLUSTER_RECOVER:
            plan_recover(state, req.params)
        if name == ActionName.NODE_CHECK:
            checked_nodes(state, req.params)
        if name == ActionName.CLUSTER_UPDATE:
            plan_update(state, req.params)

    return rule


def may_lock(state: ClusterState, req: LockClusterRequest) -> None:
    """Enter maintenance mode."""
    ensure_can_lock(state)


def may_unlock(state: ClusterState, req: ClusterOperationRequest) -> None:
    """Leave maintenance mode."""
    ensure_can_unlock(state)


def may_attach(state: ClusterState, req: PolicyAttachRequest) -> None:
    """Bind a policy."""
    ensure_can_attach(state, req.policy)


def may_detach(state: ClusterState, req: PolicyDetachRequest) -> None:
    """Unbind a policy."""
    ensure_can_detach(state, req.policy_id)


def may_mark(state: ClusterState, req: MarkNodeRequest) -> None:
    """Mark a node unhealthy, or clear the mark."""
    ensure_can_mark(state, req.node_id)


def checked_nodes(state: ClusterState, params: dict[str, object]) -> list[NodeState]:
    """The nodes a check looks at: those named in `params["nodes"]`, else all (404)."""
    wanted = params.get("nodes")
    if not isinstance(wanted, list) or not wanted:
        return list(state.nodes)
    by_id = {n.node_id: n for n in state.nodes}
    ensure_nodes_known(state, [str(w) for w in wanted])
    return [by_id[str(w)] for w in wanted]


def ensure_nodes_known(state: ClusterState, node_ids: list[str]) -> None:
    """Raise NotFound unless every id names a node of this cluster."""
    known = {n.node_id for n in state.nodes}
    missing = [n for n in node_ids if n not in known]
    if missing:
        raise NotFound(f"Node(s) {', '.join(missing)} are not members of {state.spec.name}.")


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
