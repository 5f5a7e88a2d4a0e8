"""A standalone node's messages: the entity's input and its operations.

A leaf the API and apps import (no activities, no store writers), as the cluster's is.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, Field

from domain.actions import ActionName
from domain.cluster.requests import ClusterOperationRequest, OperationAccepted
from domain.cluster.standalone import (
    NodeUpdateRequest,
    StandaloneNode,
    ensure_can_update,
    ensure_node_can_run,
)
from domain.cluster.state import RunningOperation
from workflows.operation import Operation

#: Workflow type of the standalone node entity.
NODE_WORKFLOW = "NodeWorkflow"
#: Workflow type of the short read of servers' details (`workflows/node/details.py`).
NODE_DETAILS_WORKFLOW = "NodeDetailsWorkflow"
#: Signals between a cluster's `add_nodes` child and the nodes it takes over.
JOIN_SIGNAL = "join"
JOINED_SIGNAL = "joined"


class NodeInput(BaseModel):
    """Start (and continue-as-new) input: everything the workflow knows."""

    state: StandaloneNode
    pending: RunningOperation | None = None
    recent_action_ids: list[str] = Field(default_factory=list)
    #: Continue-as-new after this many history events (tests); else when suggested.
    history_limit: int | None = None


def _child(
    name: str, action: ActionName, doc: str, *, signal: bool = True
) -> Operation[StandaloneNode, ClusterOperationRequest, OperationAccepted]:
    """An operation a `node-op` child carries out (answered "READY": accepted)."""
    return Operation(
        name, action, ClusterOperationRequest, OperationAccepted, ensure_node_can_run(action),
        signal=signal, doc=doc,
    )  # fmt: skip


class NodeOperations:
    """Every operation of a standalone node's entity workflow, declared once."""

    create: Final = _child(
        "create", ActionName.NODE_CREATE, "Create the node's server (sent with start).",
        signal=False,
    )  # fmt: skip
    delete: Final = _child("delete", ActionName.NODE_DELETE, "Delete the node and its server.")
    check: Final = _child(
        "check", ActionName.NODE_CHECK, "Refresh the node's status from the cloud."
    )
    recover: Final = _child(
        "recover", ActionName.NODE_RECOVER,
        "Recover the node (`operation`: REBOOT, REBUILD or RECREATE, the default).",
    )  # fmt: skip
    operation: Final = _child(
        "operation", ActionName.NODE_OPERATION,
        "Carry out a profile operation (`params['operation']`: reboot, stop, lock, …).",
    )  # fmt: skip
    update_profile: Final = _child(
        "update_profile", ActionName.NODE_UPDATE,
        "Put the node on another profile of its type (`params`: profile_id, profile): its "
        "server is recreated from it.",
    )  # fmt: skip
    update: Final = Operation(
        "update", ActionName.NODE_UPDATE, NodeUpdateRequest, OperationAccepted,
        ensure_can_update, child=False, doc="Change the node's name, role or metadata.",
    )  # fmt: skip

    @classmethod
    def all(cls) -> list[Operation[Any, Any, OperationAccepted]]:
        """Every operation, in declaration order."""
        return [v for v in vars(cls).values() if isinstance(v, Operation)]
