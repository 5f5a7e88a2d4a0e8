"""Senlin's rules for which operations a cluster allows now: pure, no Temporal.

Every rule is `ensure_can_<operation>(state, request)` and raises a `WardenError`
(409 Conflict, 400, 404) to refuse. The `ClusterWorkflow` applies each in its update's
validator and again under its mutex (`workflows/cluster/messages.py` binds them to
the operations).
"""

from __future__ import annotations

from collections.abc import Callable

from domain.actions import ActionName
from domain.cluster.membership import (
    MEMBERSHIP_OPERATIONS,
    plan_membership,
    plan_recover,
    plan_replace,
)
from domain.cluster.nodes import NodeState, NodeStatus
from domain.cluster.requests import (
    ClusterOperationRequest,
    ClusterPropertiesRequest,
    LockClusterRequest,
    MarkNodeRequest,
    PolicyAttachRequest,
    PolicyDetachRequest,
    PolicyUpdateRequest,
)
from domain.cluster.scale_actions import SCALE_ACTIONS, ensure_out_of_cooldown
from domain.cluster.state import LOCK_GUARDED, ClusterState, ClusterStatus
from domain.cluster.update import plan_update
from domain.errors import Conflict, InvalidRequest, NotFound
from domain.guards import ensure_idle, locked_conflict


def ensure_can_run(name: ActionName) -> Callable[[ClusterState, ClusterOperationRequest], None]:
    """The rule of an operation a `cluster-op` child carries out (create, scale_in, …)."""

    def ensure_can_run_it(state: ClusterState, req: ClusterOperationRequest) -> None:
        if name == ActionName.CLUSTER_CREATE and state.created:
            raise Conflict(f"Cluster {state.spec.name} already exists.")
        ensure_can_start(state, name)
        if name in SCALE_ACTIONS and state.now is not None:
            ensure_out_of_cooldown(state, name, state.now)
        if name in MEMBERSHIP_OPERATIONS:
            plan_membership(state, name, req.params)
        if name == ActionName.CLUSTER_RECOVER:
            plan_recover(state, req.params)
        if name in (ActionName.NODE_CHECK, ActionName.NODE_OPERATION, ActionName.CLUSTER_OPERATION):
            checked_nodes(state, req.params)
        if name == ActionName.CLUSTER_UPDATE:
            plan_update(state, req.params)
        if name == ActionName.CLUSTER_REPLACE_NODES:
            plan_replace(state, req.params)

    return ensure_can_run_it


def ensure_can_start(state: ClusterState, operation: ActionName) -> None:
    """Raise Conflict unless `operation` may start now on this cluster."""
    name = state.spec.name
    _ensure_not_deleting(state)
    if operation != ActionName.CLUSTER_CREATE and not state.created:
        raise Conflict(f"Cluster {name} is still being created.")
    if state.lock is not None and operation in LOCK_GUARDED:
        raise locked_conflict("Cluster", name, state.lock.describe())
    ensure_idle("Cluster", name, state.busy.name if state.busy else None)


def ensure_can_update_properties(state: ClusterState, req: ClusterPropertiesRequest) -> None:
    """Rename the cluster or change its metadata, config or timeout: it exists, is idle
    and not locked."""
    ensure_can_start(state, ActionName.CLUSTER_UPDATE)
    if all(v is None for v in (req.name, req.metadata, req.config, req.timeout)):
        raise InvalidRequest("No property needs an update.")


def ensure_can_lock(state: ClusterState, req: LockClusterRequest | None = None) -> None:
    """Enter maintenance mode: refused while deleting or already locked."""
    _ensure_not_deleting(state)
    if state.lock is not None:
        raise Conflict(f"Cluster {state.spec.name} is already locked{state.lock.describe()}.")


def ensure_can_unlock(state: ClusterState, req: ClusterOperationRequest | None = None) -> None:
    """Leave maintenance mode: only a locked cluster."""
    if state.lock is None:
        raise Conflict(f"Cluster {state.spec.name} is not locked.")


#: Policy types a cluster may have several of (Senlin's `singleton = False`): a scaling
#: policy per event, one for scale-in and one for scale-out.
MANY_PER_CLUSTER = frozenset({"senlin.policy.scaling"})


def ensure_can_attach(state: ClusterState, req: PolicyAttachRequest) -> None:
    """Bind a policy: the cluster idle, one policy per type."""
    _ensure_cluster_idle(state)
    policy = req.policy
    for bound in state.policies:
        if bound.policy_id == policy.policy_id:
            raise Conflict(
                f"Policy {policy.name} is already attached to cluster {state.spec.name}."
            )
        if bound.type == policy.type and policy.type not in MANY_PER_CLUSTER:
            raise Conflict(
                f"Only one instance of policy type ({policy.type}) can be attached to a "
                f"cluster, but {bound.name} is already attached to cluster {state.spec.name}."
            )


def ensure_can_detach(state: ClusterState, req: PolicyDetachRequest | PolicyUpdateRequest) -> None:
    """Unbind (or update the binding of) a policy: it is bound and the cluster idle."""
    _ensure_cluster_idle(state)
    if not any(p.policy_id == req.policy_id for p in state.policies):
        raise InvalidRequest(
            f"The policy '{req.policy_id}' is not attached to the specified cluster "
            f"'{state.spec.cluster_id}'."
        )


def ensure_can_mark(state: ClusterState, req: MarkNodeRequest) -> None:
    """Mark a node unhealthy, or clear the mark: the node exists, members are not changing."""
    _ensure_cluster_idle(state)
    node = next((n for n in state.nodes if n.node_id == req.node_id), None)
    if node is None:
        raise NotFound(f"The node '{req.node_id}' could not be found.")
    if node.status == NodeStatus.DELETING:
        raise Conflict(f"Node {node.name} is being deleted.")


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


def _ensure_not_deleting(state: ClusterState) -> None:
    if state.deleted or state.status == ClusterStatus.DELETING:
        raise Conflict(f"Cluster {state.spec.name} is being deleted.")


def _ensure_cluster_idle(state: ClusterState) -> None:
    _ensure_not_deleting(state)
    ensure_idle("Cluster", state.spec.name, state.busy.name if state.busy else None)
