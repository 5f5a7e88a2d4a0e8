"""Nodes: cluster members, each backed by one server."""

from __future__ import annotations

import random
import re
import string
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class NodeStatus(StrEnum):
    """Node statuses as Senlin names them."""

    INIT = "INIT"
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    ERROR = "ERROR"
    WARNING = "WARNING"
    DELETING = "DELETING"
    RECOVERING = "RECOVERING"
    #: A stack node's stack being updated onto a new profile.
    UPDATING = "UPDATING"


#: Key in a node's `data` set by `mark_unhealthy`; cleared by `mark_unhealthy: false`
#: and by a recovery that leaves the node healthy (the failure it reported is over).
MARKED_UNHEALTHY = "marked_unhealthy"


class NodeState(BaseModel):
    """A node as its cluster workflow knows it."""

    node_id: str
    name: str
    index: int
    profile_id: str
    physical_id: str | None = None
    status: NodeStatus = NodeStatus.INIT
    status_reason: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    #: Senlin's node `role` and `metadata`: the user's words, kept as given.
    role: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


def without_mark(node: NodeState) -> NodeState:
    """The node with its unhealthy mark cleared (unchanged when it has none)."""
    if MARKED_UNHEALTHY not in node.data:
        return node
    data = {k: v for k, v in node.data.items() if k != MARKED_UNHEALTHY}
    return node.model_copy(update={"data": data})


#: The cluster config key naming new nodes (Senlin's).
NODE_NAME_FORMAT = "node.name.format"
_DIRECTIVE = re.compile(r"\$(\d{0,8})([rRI])")
_ALPHABET = string.ascii_letters + string.digits


def node_name(
    cluster_name: str, index: int, fmt: str | None = None, rand: random.Random | None = None
) -> str:
    """Node (and server) name: `<cluster>-<index>`, so `{nodename}` URLs work; with a
    `node.name.format`, Senlin's `format_node_name`: `$nI` the index zero-padded to n
    digits, `$nR` n random letters and digits (8 by default; `$nr` in lower case)."""
    if not fmt:
        return f"{cluster_name}-{index}"
    source = rand or random.Random(index)

    def directive(match: re.Match[str]) -> str:
        width, kind = match.group(1), match.group(2)
        if kind == "I":
            return str(index).zfill(int(width)) if width else str(index)
        text = "".join(source.choice(_ALPHABET) for _ in range(int(width or 8)))
        return text.lower() if kind == "r" else text

    return _DIRECTIVE.sub(directive, fmt)


#: Server statuses (compute API) and the node status they mean.
SERVER_STATUS_TO_NODE: dict[str, NodeStatus] = {
    "ACTIVE": NodeStatus.ACTIVE,
    "BUILD": NodeStatus.CREATING,
    "REBOOT": NodeStatus.ACTIVE,
    "HARD_REBOOT": NodeStatus.ACTIVE,
    "REBUILD": NodeStatus.RECOVERING,
    "ERROR": NodeStatus.ERROR,
    "SHUTOFF": NodeStatus.ERROR,
    "PAUSED": NodeStatus.ERROR,
    "SUSPENDED": NodeStatus.ERROR,
    "DELETED": NodeStatus.ERROR,
}


def node_status_from_server(server_status: str | None) -> tuple[NodeStatus, str]:
    """Map a server's status (None = the server is gone) to the node's status and reason."""
    if server_status is None:
        return NodeStatus.ERROR, "Server not found"
    status = SERVER_STATUS_TO_NODE.get(server_status.upper(), NodeStatus.WARNING)
    if status == NodeStatus.ACTIVE:
        return status, ""
    return status, f"Server status is {server_status.upper()}"
