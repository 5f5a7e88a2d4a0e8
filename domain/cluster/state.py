"""Cluster state as its entity workflow knows it (Senlin's cluster, nodes, lock, policies).

The rules of which operations it allows are in `domain.cluster.rules`, the requests in
`domain.cluster.requests`.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.actions import ActionName
from domain.cluster.nodes import NodeState


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
        ActionName.CLUSTER_ADD_NODES,
        ActionName.CLUSTER_REPLACE_NODES,
        ActionName.NODE_CREATE,
        ActionName.CLUSTER_RECOVER,
        ActionName.NODE_DELETE,
        ActionName.NODE_RECOVER,
        ActionName.NODE_OPERATION,
        ActionName.CLUSTER_OPERATION,
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
    ActionName.CLUSTER_ADD_NODES: ClusterStatus.RESIZING,
    ActionName.NODE_CREATE: ClusterStatus.RESIZING,
    ActionName.CLUSTER_REPLACE_NODES: ClusterStatus.UPDATING,
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

    def describe(self) -> str:
        """Senlin-style words for refusals: ` by ops (patching)`."""
        parts = [f"by {self.owner}"] if self.owner else []
        if self.reason:
            parts.append(f"({self.reason})")
        return (" " + " ".join(parts)) if parts else ""


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
    #: Why the action fails without running (a scale its policy or the size limits
    #: refuse, as Senlin's action does); empty when it runs.
    refusal: str = ""


class AttachedPolicy(BaseModel):
    """A policy bound to a cluster: a copy of its spec without secrets."""

    model_config = ConfigDict(frozen=True)

    policy_id: str
    name: str
    type: str
    enabled: bool = True
    properties: dict[str, Any] = Field(default_factory=dict)
    #: What attaching it made (Senlin's cluster-policy `data`: a load balancer's ids).
    data: dict[str, Any] = Field(default_factory=dict)
    #: When a scale it checked last ended (Senlin's `last_op`: a scaling policy's cooldown).
    last_op: datetime | None = None


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
    #: Senlin's cluster config, kept as given; `node.name.format` names new nodes.
    config: dict[str, Any] = Field(default_factory=dict)
    #: Senlin's default action timeout of the cluster (seconds), kept and shown; Warden's
    #: waits keep their own limits.
    timeout: int | None = Field(None, ge=0, le=86_400)


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
    #: The workflow's time when a rule judges this state (a scaling policy's cooldown);
    #: set on a copy for the judgement, never stored.
    now: datetime | None = Field(None, exclude=True)
