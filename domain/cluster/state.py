"""Cluster state and the rules that decide which operations it allows."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.actions import ActionName
from domain.cluster.nodes import MARKED_UNHEALTHY, NodeState, NodeStatus
from domain.errors import Conflict, InvalidRequest, NotFound


class ClusterStatus(StrEnum):
    """Cluster statuses as Senlin names them."""

    INIT = "INIT"
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    RESIZING = "RESIZING"
    UPDATING = "UPDATING"
    RECOVERING = "RECOVERING"
    WARNING = "WARNING"
    ERROR = "ERROR"
    DELETING = "DELETING"


#: Operations a cluster lock (maintenance mode) refuses.
LOCK_GUARDED = frozenset(
    {
        ActionName.CLUSTER_DELETE,
        ActionName.CLUSTER_UPDATE,
        ActionName.CLUSTER_SCALE_OUT,
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_RESIZE,
        ActionName.CLUSTER_DEL_NODES,
        ActionName.CLUSTER_RECOVER,
        ActionName.NODE_DELETE,
        ActionName.NODE_RECOVER,
    }
)

#: Status a cluster shows while an operation of this kind runs.
RUNNING_STATUS: dict[ActionName, ClusterStatus] = {
    ActionName.CLUSTER_CREATE: ClusterStatus.CREATING,
    ActionName.CLUSTER_DELETE: ClusterStatus.DELETING,
    ActionName.CLUSTER_UPDATE: ClusterStatus.UPDATING,
    ActionName.CLUSTER_SCALE_OUT: ClusterStatus.RESIZING,
    ActionName.CLUSTER_SCALE_IN: ClusterStatus.RESIZING,
    ActionName.CLUSTER_RESIZE: ClusterStatus.RESIZING,
    ActionName.CLUSTER_DEL_NODES: ClusterStatus.RESIZING,
    ActionName.NODE_DELETE: ClusterStatus.RESIZING,
    ActionName.CLUSTER_RECOVER: ClusterStatus.RECOVERING,
}

#: Nodes per cluster. Create and delete run every node in one child history (about
#: 6.6 events per node: 1,000 nodes = 6,617 events, measured); 2,000 keeps that far
#: below Temporal's hard limit of 51,200 until those operations are sharded like scale-in.
MAX_CAPACITY = 2_000


class LockInfo(BaseModel):
    """Who put the cluster in maintenance mode, and why."""

    model_config = ConfigDict(frozen=True)

    reason: str = ""
    owner: str = ""
    locked_at: datetime


class RunningOperation(BaseModel):
    """The operation the cluster is busy with, and the membership change it carries out."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    name: ActionName
    #: Nodes this operation creates (planned at accept time, so they show at once).
    new_node_ids: tuple[str, ...] = ()
    #: Nodes this operation removes (chosen at accept time by the deletion policy).
    victim_ids: tuple[str, ...] = ()
    #: Parameters the child needs again at run time (e.g. `recover`'s operation).
    params: dict[str, Any] = Field(default_factory=dict)


class AttachedPolicy(BaseModel):
    """A policy bound to a cluster: a copy of its spec without secrets."""

    model_config = ConfigDict(frozen=True)

    policy_id: str
    name: str
    type: str
    enabled: bool = True
    properties: dict[str, Any] = Field(default_factory=dict)


class ClusterSpec(BaseModel):
    """What the user asked for when creating the cluster."""

    model_config = ConfigDict(frozen=True)

    cluster_id: str
    project_id: str
    name: str
    profile_id: str
    desired_capacity: int = Field(ge=0, le=MAX_CAPACITY)
    min_size: int = Field(0, ge=0, le=MAX_CAPACITY)
    max_size: int = Field(-1, ge=-1, le=MAX_CAPACITY)
    metadata: dict[str, Any] = Field(default_factory=dict)


class ClusterState(BaseModel):
    """The cluster as its entity workflow knows it (the source of truth)."""

    spec: ClusterSpec
    profile: dict[str, Any] = Field(default_factory=dict)
    status: ClusterStatus = ClusterStatus.INIT
    status_reason: str = "Initializing"
    desired_capacity: int = 0
    lock: LockInfo | None = None
    busy: RunningOperation | None = None
    nodes: list[NodeState] = Field(default_factory=list)
    policies: list[AttachedPolicy] = Field(default_factory=list)
    #: The health manager's current warning (e.g. too many unhealthy nodes), if any.
    health_warning: str = ""
    #: Index of the next node created (names are never reused: `<cluster>-<index>`).
    next_index: int = 1
    created: bool = False
    deleted: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None


def validate_capacity(desired: int, min_size: int, max_size: int) -> None:
    """Reject sizes that contradict each other, with Senlin's wording."""
    if max_size != -1 and min_size > max_size:
        raise InvalidRequest(
            f"The specified min_size ({min_size}) is greater than the specified "
            f"max_size ({max_size})."
        )
    if desired < min_size:
        raise InvalidRequest(
            f"The target capacity ({desired}) is less than the cluster's min_size ({min_size})."
        )
    if max_size != -1 and desired > max_size:
        raise InvalidRequest(
            f"The target capacity ({desired}) is greater than the cluster's max_size ({max_size})."
        )


def ensure_can_start(state: ClusterState, operation: ActionName) -> None:
    """Raise Conflict unless `operation` may start now on this cluster."""
    name = state.spec.name
    if state.deleted or state.status == ClusterStatus.DELETING:
        raise Conflict(f"Cluster {name} is being deleted.")
    if operation != ActionName.CLUSTER_CREATE and not state.created:
        raise Conflict(f"Cluster {name} is still being created.")
    if state.lock is not None and operation in LOCK_GUARDED:
        raise Conflict(f"Cluster {name} is locked{_lock_suffix(state.lock)}; unlock it first.")
    if state.busy is not None:
        raise Conflict(f"Cluster {name} already has an action ({state.busy.name}) in progress.")


def ensure_can_lock(state: ClusterState) -> None:
    """Raise Conflict unless the cluster may enter maintenance mode now."""
    name = state.spec.name
    if state.deleted or state.status == ClusterStatus.DELETING:
        raise Conflict(f"Cluster {name} is being deleted.")
    if state.lock is not None:
        raise Conflict(f"Cluster {name} is already locked{_lock_suffix(state.lock)}.")


def ensure_can_unlock(state: ClusterState) -> None:
    """Raise Conflict unless the cluster is locked."""
    if state.lock is None:
        raise Conflict(f"Cluster {state.spec.name} is not locked.")


def ensure_can_attach(state: ClusterState, policy: AttachedPolicy) -> None:
    """Raise Conflict unless the policy may be bound now (one policy per type)."""
    _ensure_idle(state)
    for bound in state.policies:
        if bound.policy_id == policy.policy_id:
            raise Conflict(
                f"Policy {policy.name} is already attached to cluster {state.spec.name}."
            )
        if bound.type == policy.type:
            raise Conflict(
                f"Only one instance of policy type ({policy.type}) can be attached to a "
                f"cluster, but {bound.name} is already attached to cluster {state.spec.name}."
            )


def ensure_can_detach(state: ClusterState, policy_id: str) -> None:
    """Raise unless the policy is bound and the cluster idle."""
    _ensure_idle(state)
    if not any(p.policy_id == policy_id for p in state.policies):
        raise InvalidRequest(
            f"The policy '{policy_id}' is not attached to the specified cluster "
            f"'{state.spec.name}'."
        )


def ensure_can_mark(state: ClusterState, node_id: str) -> None:
    """Raise unless the node exists and nothing is changing the cluster's members."""
    _ensure_idle(state)
    node = next((n for n in state.nodes if n.node_id == node_id), None)
    if node is None:
        raise NotFound(f"The node '{node_id}' could not be found.")
    if node.status == NodeStatus.DELETING:
        raise Conflict(f"Node {node.name} is being deleted.")


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


def _ensure_idle(state: ClusterState) -> None:
    name = state.spec.name
    if state.deleted or state.status == ClusterStatus.DELETING:
        raise Conflict(f"Cluster {name} is being deleted.")
    if state.busy is not None:
        raise Conflict(f"Cluster {name} already has an action ({state.busy.name}) in progress.")


def status_after(operation: ActionName, succeeded: bool, previous: ClusterStatus) -> ClusterStatus:
    """The cluster status once `operation` has ended."""
    if operation == ActionName.NODE_CHECK:  # one node's check says nothing of the others
        failed = ClusterStatus.ERROR if previous == ClusterStatus.ERROR else ClusterStatus.WARNING
        return previous if succeeded else failed
    if succeeded:
        return ClusterStatus.ACTIVE
    if operation == ActionName.CLUSTER_CHECK:
        return ClusterStatus.WARNING
    if operation == ActionName.CLUSTER_CREATE:
        return ClusterStatus.ERROR
    return ClusterStatus.ERROR if previous == ClusterStatus.ERROR else ClusterStatus.WARNING


def _lock_suffix(lock: LockInfo) -> str:
    parts = []
    if lock.owner:
        parts.append(f"by {lock.owner}")
    if lock.reason:
        parts.append(f"({lock.reason})")
    return (" " + " ".join(parts)) if parts else ""


class ClusterOperationRequest(BaseModel):
    """A request for an operation (check, delete, …); action_id dedups retries."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class LockClusterRequest(BaseModel):
    """`lock`: maintenance mode."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    reason: str = Field("", max_length=255)
    owner: str = Field("", max_length=255)


class OperationAccepted(BaseModel):
    """What an accepted update answers: the action that tracks it."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    status: str


class PolicyAttachRequest(BaseModel):
    """`policy_attach`: the API resolves the policy and sends its public copy."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    policy: AttachedPolicy


class PolicyDetachRequest(BaseModel):
    """`policy_detach {policy_id}`."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    policy_id: str


class MarkNodeRequest(BaseModel):
    """`PATCH /v1/nodes/{node_id}`: mark a node unhealthy (or clear the mark)."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    node_id: str
    mark_unhealthy: bool
    status_reason: str = Field("", max_length=255)
