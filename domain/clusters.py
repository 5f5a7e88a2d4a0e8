"""Cluster state and the rules that decide which operations it allows."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.actions import ActionName
from domain.errors import Conflict, InvalidRequest
from domain.nodes import NodeState


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
    ActionName.CLUSTER_SCALE_OUT: ClusterStatus.RESIZING,
    ActionName.CLUSTER_SCALE_IN: ClusterStatus.RESIZING,
    ActionName.CLUSTER_RESIZE: ClusterStatus.RESIZING,
    ActionName.CLUSTER_DEL_NODES: ClusterStatus.RESIZING,
    ActionName.CLUSTER_RECOVER: ClusterStatus.RECOVERING,
}

MAX_CAPACITY = 10_000


class LockInfo(BaseModel):
    """Who put the cluster in maintenance mode, and why."""

    model_config = ConfigDict(frozen=True)

    reason: str = ""
    owner: str = ""
    locked_at: datetime


class RunningOperation(BaseModel):
    """The operation the cluster is busy with."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    name: ActionName


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


def status_after(operation: ActionName, succeeded: bool, previous: ClusterStatus) -> ClusterStatus:
    """The cluster status once `operation` has ended."""
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
