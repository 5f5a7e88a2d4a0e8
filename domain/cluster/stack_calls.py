"""What the stack activities are asked: the calls an `os.heat.stack` node makes, and an
`OS::Heat::Stack` resource whose stack is remote (in the `region` of the catalog).

Workflows build these from a node and its profile; `activities/stack_nodes.py` carries
them out. Kept apart from the activities so workflow code never imports an activity
module for its types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.cluster.nodes import NodeState, NodeStatus
from domain.cluster.stack_profile import StackHealth, StackVerdict, stack_name

#: Where a node keeps the name of its stack (Heat addresses a stack by name and id).
STACK_NAME_KEY: Final = "stack_name"
#: Senlin's default when the profile sets no `timeout`: its `default_action_timeout`.
DEFAULT_TIMEOUT_MIN: Final = 60


class StackRef(BaseModel):
    """A stack as Heat addresses it, and the region whose Heat has it (None: the
    configured region)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=255)
    id: str = Field(min_length=1, max_length=255)
    region: str | None = None


class StackCreateRequest(BaseModel):
    """Create a node's stack; the same `name` finds the stack an earlier attempt made."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=255)
    #: Heat's create body beside `stack_name`: template, parameters, files, environment,
    #: timeout_mins, disable_rollback.
    fields: dict[str, Any]
    region: str | None = None


class StackWaitRequest(BaseModel):
    """Wait until a stack's `action` (CREATE or UPDATE) completes."""

    model_config = ConfigDict(frozen=True)

    stack: StackRef
    action: str
    #: The stack's `updated_time` before an update was sent: an UPDATE_COMPLETE stamped
    #: with it is the previous update's, not this one's. None: any UPDATE_COMPLETE.
    since: str | None = None


class StackUpdateRequest(BaseModel):
    """Update a stack: in place with its existing template and these `fields` changed
    (Heat's PATCH), or to `fields` alone (`existing` False: Heat's PUT)."""

    model_config = ConfigDict(frozen=True)

    stack: StackRef
    fields: dict[str, Any] = Field(default_factory=dict)
    existing: bool = True


class StackActionRequest(BaseModel):
    """Start one of a stack's actions: SUSPEND, RESUME or CHECK."""

    model_config = ConfigDict(frozen=True)

    stack: StackRef
    action: Literal["SUSPEND", "RESUME", "CHECK"]


class StackShown(BaseModel):
    """What a stack's resource reads of it: its name and outputs."""

    model_config = ConfigDict(frozen=True)

    stack_name: str
    outputs: dict[str, Any] = Field(default_factory=dict)


class StackHealthResult(BaseModel):
    """Each stack's verdict, by stack id."""

    verdicts: dict[str, StackVerdict]


def stack_create_request(
    profile: Mapping[str, Any], node: NodeState, *, request_id: str, cluster_id: str = ""
) -> StackCreateRequest:
    """The stack a node runs as, from its profile, as Senlin's `StackProfile.do_create`
    asks Heat for it, tagged as Senlin tags it: `cluster_node_id=…`, and for a member
    `cluster_id=…` and `cluster_node_index=…`."""
    tags = [f"cluster_node_id={node.node_id}"]
    if cluster_id:
        tags += [f"cluster_id={cluster_id}", f"cluster_node_index={node.index}"]
    fields = stack_fields(profile) | {"tags": ",".join(tags)}
    return StackCreateRequest(name=stack_name(node.name, request_id), fields=fields)


#: The tags of a stack that say which cluster node it is (Senlin's `_refresh_tags`).
CLUSTER_TAG_PREFIXES: Final = ("cluster_id=", "cluster_node_id=", "cluster_node_index=")


class StackRetagRequest(BaseModel):
    """Give a node's stack the tags of its membership (none when it left its cluster)."""

    model_config = ConfigDict(frozen=True)

    stack: StackRef
    node_id: str
    cluster_id: str | None = None
    index: int = -1


def refreshed_tags(current: Sequence[str], request: StackRetagRequest) -> tuple[str, bool]:
    """Senlin's `_refresh_tags`: the stack's own tags, then (for a member) its cluster's;
    the comma-joined list and whether it differs from `current`."""
    tags = [
        tag.strip() for tag in current if not tag.startswith(CLUSTER_TAG_PREFIXES) and tag.strip()
    ]
    if request.cluster_id:
        tags += [
            f"cluster_id={request.cluster_id}",
            f"cluster_node_id={request.node_id}",
            f"cluster_node_index={request.index}",
        ]
    return ",".join(tags), tags != list(current)


def stack_fields(profile: Mapping[str, Any]) -> dict[str, Any]:
    """Heat's create or update body from a profile: its template and settings (an
    update onto a new profile sends them all; Heat leaves what did not change)."""
    props = profile.get("properties", {})
    fields: dict[str, Any] = {
        "template": props.get("template") or {},
        "parameters": props.get("parameters") or {},
        "files": props.get("files") or {},
        "environment": props.get("environment") or {},
        "disable_rollback": props.get("disable_rollback", True),
    }
    if props.get("timeout"):
        fields["timeout_mins"] = props["timeout"]
    return fields


def timeout_minutes(profile: Mapping[str, Any]) -> int:
    """How long a stack operation of this profile may take."""
    return int(profile.get("properties", {}).get("timeout") or DEFAULT_TIMEOUT_MIN)


def stack_of(node: NodeState) -> StackRef | None:
    """The node's stack, None before its create answered."""
    name = node.data.get(STACK_NAME_KEY)
    if not node.physical_id or not isinstance(name, str) or not name:
        return None
    return StackRef(name=name, id=node.physical_id)


def without_stack(data: Mapping[str, Any]) -> dict[str, Any]:
    """A node's data once its stack is gone."""
    return {key: value for key, value in data.items() if key != STACK_NAME_KEY}


def on_stack(node: NodeState, stack: StackRef) -> NodeState:
    """The node, now the stack `stack`."""
    return node.model_copy(
        update={"physical_id": stack.id, "data": {**node.data, STACK_NAME_KEY: stack.name}}
    )


def node_status_from_stack(verdict: StackVerdict | None) -> tuple[NodeStatus, str]:
    """A stack node's status from its stack's verdict (None: the node has no stack).

    A stack busy with an operation (someone's update) keeps its node ACTIVE: nothing
    says it failed.
    """
    if verdict is None:
        return NodeStatus.ERROR, "Node has no stack"
    if verdict.health is StackHealth.UNHEALTHY:
        return NodeStatus.ERROR, verdict.reason
    return NodeStatus.ACTIVE, "" if verdict.health is StackHealth.HEALTHY else verdict.reason


__all__ = [
    "STACK_NAME_KEY",
    "StackActionRequest",
    "StackCreateRequest",
    "StackHealthResult",
    "StackRef",
    "StackShown",
    "StackUpdateRequest",
    "StackWaitRequest",
    "node_status_from_stack",
    "on_stack",
    "stack_create_request",
    "stack_fields",
    "stack_of",
    "timeout_minutes",
    "without_stack",
]
