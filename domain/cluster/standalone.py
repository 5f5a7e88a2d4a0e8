"""Standalone nodes: Senlin's orphan nodes, made with `POST /v1/nodes` and no cluster.

Such a node is its own entity (`NodeWorkflow`, `node:{node_id}`): it is created,
checked, recovered, updated and deleted on its own, until `add_nodes` hands it to a
cluster (the node's entity then ends and the cluster's takes it over). Its operations
reuse the cluster's node children, planned on `as_cluster()`: a one-node view of it.
Pure, no Temporal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.actions import ActionName
from domain.cluster.membership import plan_recover
from domain.cluster.nodes import MARKED_UNHEALTHY, NodeState, NodeStatus
from domain.cluster.requests import ClusterOperationRequest
from domain.cluster.state import ClusterSpec, ClusterState, ClusterStatus, RunningOperation
from domain.errors import Conflict, InvalidRequest, NotFound
from domain.guards import ensure_idle

#: A standalone node's `cluster_id`, as Senlin shows an orphan's.
NO_CLUSTER = ""


class StandaloneNode(BaseModel):
    """A standalone node as its entity workflow knows it (the source of truth)."""

    project_id: str
    #: The profile's spec (`{"type", "version", "properties"}`): no database reads later.
    profile: dict[str, Any] = Field(default_factory=dict)
    node: NodeState
    busy: RunningOperation | None = None
    created: bool = False
    deleted: bool = False
    #: The cluster the node was handed to (`add_nodes`): its entity ends with that.
    joined_cluster: str | None = None


class NodeUpdateRequest(BaseModel):
    """`PATCH /v1/nodes/{id}` of a standalone node: name, role, metadata (None = keep)."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    name: str | None = None
    role: str | None = None
    metadata: dict[str, Any] | None = None
    #: Senlin 1.13: the first victim of a scale-in once the node is in a cluster.
    tainted: bool | None = None


class JoinRequest(BaseModel):
    """A cluster's `add_nodes` child asks the node to join: the node answers by signal
    (`joined` or `join_refused`) to `reply_to`, the child's workflow id."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    cluster_id: str
    reply_to: str
    #: The node's index in the cluster (reserved when the cluster accepted `add_nodes`).
    index: int


class JoinAnswer(BaseModel):
    """The node's answer to a `JoinRequest`: its state when it joined, or why not."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    node: NodeState | None = None
    refused: str = ""


def gone(state: StandaloneNode) -> bool:
    """Whether the node's entity is over (deleted, or handed to a cluster)."""
    return state.deleted or state.joined_cluster is not None


def as_cluster(state: StandaloneNode) -> ClusterState:
    """A one-node cluster view of the node (no cluster, no policy): the cluster's pure
    planning (`plan_recover`, `checked_nodes`) and children run on it unchanged."""
    node = state.node
    spec = ClusterSpec(
        cluster_id=NO_CLUSTER,
        project_id=state.project_id,
        name=node.name,
        profile_id=node.profile_id,
        desired_capacity=1,
    )
    return ClusterState(
        spec=spec,
        profile=state.profile,
        status=ClusterStatus.ACTIVE,
        status_reason="",
        desired_capacity=1,
        nodes=[node],
        created=state.created,
    )


def ensure_node_can_run(
    name: ActionName,
) -> Callable[[StandaloneNode, ClusterOperationRequest], None]:
    """The rule of an operation a `node-op` child carries out (create, delete, …)."""

    def ensure_can_run_it(state: StandaloneNode, req: ClusterOperationRequest) -> None:
        node = state.node
        if name == ActionName.NODE_CREATE:
            if state.created:
                raise Conflict(f"Node {node.name} already exists.")
            return
        ensure_node_idle(state)
        if name == ActionName.NODE_UPDATE:
            profile = req.params.get("profile")
            if not req.params.get("profile_id") or not isinstance(profile, dict):
                raise InvalidRequest("profile_id: the new profile and its spec are required")
            if profile.get("type") != state.profile.get("type"):
                raise InvalidRequest(
                    "Cannot update a node to a different profile type, operation aborted."
                )
        if name == ActionName.NODE_RECOVER:
            plan_recover(as_cluster(state), {**req.params, "nodes": [node.node_id]})

    return ensure_can_run_it


def ensure_node_idle(state: StandaloneNode, _req: object = None) -> None:
    """Refuse while the node is gone, being created, or busy with another action."""
    node = state.node
    if gone(state):
        raise NotFound(f"The node '{node.node_id}' could not be found.")
    if not state.created:
        raise Conflict(f"Node {node.name} is still being created.")
    ensure_idle("Node", node.name, state.busy.name if state.busy else None)


def ensure_can_update(state: StandaloneNode, req: NodeUpdateRequest) -> None:
    """A node update changes something, on an idle node."""
    ensure_node_idle(state)
    if req.name is None and req.role is None and req.metadata is None and req.tainted is None:
        raise InvalidRequest("No property needs an update.")


def updated(state: StandaloneNode, req: NodeUpdateRequest, now: Any) -> StandaloneNode:
    """The node with the request's name, role and metadata."""
    node = state.node
    changes: dict[str, Any] = {"updated_at": now}
    if req.name is not None:
        changes["name"] = req.name
    if req.role is not None:
        changes["role"] = req.role
    if req.metadata is not None:
        changes["metadata"] = dict(req.metadata)
    if req.tainted is not None:
        data = {k: v for k, v in node.data.items() if k != MARKED_UNHEALTHY}
        changes["data"] = {**data, MARKED_UNHEALTHY: True} if req.tainted else data
    return state.model_copy(update={"node": node.model_copy(update=changes)})


def join_refusal(state: StandaloneNode, req: JoinRequest) -> str:
    """Why the node cannot join `req.cluster_id` now ("" when it can)."""
    node = state.node
    if state.joined_cluster == req.cluster_id:
        return ""  # a retried request: answered again with the node as it joined
    if gone(state):
        return f"Node {node.node_id} is not an orphan node."
    if not state.created or state.busy is not None:
        return f"Node {node.name} is busy."
    if node.status != NodeStatus.ACTIVE:
        return f"Node {node.name} is not in ACTIVE status."
    return ""
