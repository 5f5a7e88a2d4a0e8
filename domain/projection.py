"""What workflows tell the database: one batch of idempotent writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.actions import ActionChange
from domain.cluster.state import ClusterState
from domain.events import Event


class ClusterSnapshot(BaseModel):
    """The whole projected row of a cluster (an upsert replaces it)."""

    model_config = ConfigDict(frozen=True)

    cluster_id: str
    project_id: str
    name: str
    profile_id: str
    status: str
    status_reason: str
    desired_capacity: int
    min_size: int
    max_size: int
    lock: dict[str, Any] | None = None
    policies: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    timeout: int | None = None
    created_at: datetime
    updated_at: datetime


class NodeSnapshot(BaseModel):
    """The whole projected row of a node."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    project_id: str
    cluster_id: str
    name: str
    index: int
    profile_id: str
    physical_id: str | None
    status: str
    status_reason: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    role: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class StackSnapshot(BaseModel):
    """The whole projected row of a stack."""

    model_config = ConfigDict(frozen=True)

    stack_id: str
    project_id: str
    name: str
    parent_id: str | None = None
    parent_resource: str | None = None
    action: str
    status: str
    status_reason: str = ""
    template: dict[str, Any] = Field(default_factory=dict)
    parameters: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    output_errors: dict[str, str] = Field(default_factory=dict)
    lock: dict[str, Any] | None = None
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: list[str] | None = None
    created_at: datetime
    updated_at: datetime


class ResourceSnapshot(BaseModel):
    """The whole projected row of one stack resource."""

    model_config = ConfigDict(frozen=True)

    stack_id: str
    name: str
    project_id: str
    resource_id: str
    type: str
    physical_id: str | None = None
    action: str
    status: str
    status_reason: str = ""
    required_by: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    rsrc_metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class ResourceKey(BaseModel):
    """Which resource row to delete."""

    model_config = ConfigDict(frozen=True)

    stack_id: str
    name: str


class ChangeSet(BaseModel):
    """Writes applied in one transaction; every part is safe to apply twice."""

    model_config = ConfigDict(frozen=True)

    actions: list[ActionChange] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    clusters: list[ClusterSnapshot] = Field(default_factory=list)
    nodes: list[NodeSnapshot] = Field(default_factory=list)
    deleted_clusters: list[str] = Field(default_factory=list)
    deleted_nodes: list[str] = Field(default_factory=list)
    stacks: list[StackSnapshot] = Field(default_factory=list)
    resources: list[ResourceSnapshot] = Field(default_factory=list)
    deleted_stacks: list[str] = Field(default_factory=list)
    deleted_resources: list[ResourceKey] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """Whether there is nothing to write."""
        return not any(
            (
                self.actions,
                self.events,
                self.clusters,
                self.nodes,
                self.deleted_clusters,
                self.deleted_nodes,
                self.stacks,
                self.resources,
                self.deleted_stacks,
                self.deleted_resources,
            )
        )


def split_by_size(changes: Sequence[ChangeSet], max_bytes: int) -> list[list[ChangeSet]]:
    """`changes` in order, cut into runs whose JSON adds up to at most `max_bytes` (a
    change bigger than that alone makes a run): each run is one write, one activity
    input, far below Temporal's 2 MB payload limit however many changes queued up."""
    runs: list[list[ChangeSet]] = []
    size = max_bytes + 1  # the first change starts a run
    for change in changes:
        grows = len(change.__pydantic_serializer__.to_json(change))
        if size + grows > max_bytes:
            runs.append([])
            size = 0
        runs[-1].append(change)
        size += grows
    return runs


def cluster_snapshot(state: ClusterState, at: datetime) -> ClusterSnapshot:
    """Project a cluster's workflow state into its database row."""
    spec = state.spec
    return ClusterSnapshot(
        cluster_id=spec.cluster_id,
        project_id=spec.project_id,
        name=spec.name,
        profile_id=spec.profile_id,
        status=state.status.value,
        status_reason=state.status_reason,
        desired_capacity=state.desired_capacity,
        min_size=spec.min_size,
        max_size=spec.max_size,
        lock=state.lock.model_dump(mode="json") if state.lock else None,
        policies=[p.model_dump(mode="json") for p in state.policies],
        metadata=spec.metadata,
        config=spec.config,
        timeout=spec.timeout,
        created_at=state.created_at or at,
        updated_at=at,
    )


class NodeRemoval(BaseModel):
    """Delete a node's server (when asked), wait until it is gone, then write `changes`."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    physical_id: str | None
    destroy: bool = True
    changes: ChangeSet
    #: The node's name (its servers'): every other live server made for the node is
    #: deleted too, whatever `destroy` says, since none of them is the node's.
    name: str | None = None
