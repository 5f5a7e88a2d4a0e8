"""A cluster's messages: the entity's input and its operations.

A leaf the API and apps import (no activities, no store writers): the operations are
declared here once; `ClusterWorkflow` binds each to its handler.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, Field

from domain.actions import ActionName
from domain.cluster.requests import (
    ClusterOperationRequest,
    ClusterPropertiesRequest,
    LockClusterRequest,
    MarkNodeRequest,
    OperationAccepted,
    PolicyAttachRequest,
    PolicyDetachRequest,
    PolicyUpdateRequest,
)
from domain.cluster.rules import (
    ensure_can_attach,
    ensure_can_detach,
    ensure_can_lock,
    ensure_can_mark,
    ensure_can_run,
    ensure_can_unlock,
    ensure_can_update_properties,
)
from domain.cluster.state import ClusterState, RunningOperation
from workflows.operation import Operation

#: Workflow type of the cluster entity.
CLUSTER_WORKFLOW = "ClusterWorkflow"


class ClusterInput(BaseModel):
    """Start (and continue-as-new) input: everything the workflow knows."""

    state: ClusterState
    pending: RunningOperation | None = None
    recent_action_ids: list[str] = Field(default_factory=list)
    #: Continue-as-new after this many history events (tests); else when suggested.
    history_limit: int | None = None
    #: Where apps complete lifecycle hooks (the API's public URL; set by the API).
    api_url: str = "http://127.0.0.1:8004"
    #: How often servers of nodes waiting on a hook are looked at.
    server_poll_interval_s: int = 30


def _child(
    name: str, action: ActionName, doc: str, *, signal: bool = True
) -> Operation[ClusterState, ClusterOperationRequest, OperationAccepted]:
    """An operation a `cluster-op` child carries out (answered "READY": accepted)."""
    return Operation(
        name, action, ClusterOperationRequest, OperationAccepted, ensure_can_run(action),
        signal=signal, doc=doc,
    )  # fmt: skip


class ClusterOperations:
    """Every operation of a cluster's entity workflow, declared once (docs/ARCHITECTURE.md).

    The workflow binds each to its handler (`workflows/cluster/workflow.py`); the API sends them
    with `TemporalGateway.update(…, ClusterOperations.scale_in, request)`.
    """

    create: Final = _child(
        "create", ActionName.CLUSTER_CREATE,
        "Create the cluster's nodes (the first update, sent with start).", signal=False,
    )  # fmt: skip
    check: Final = _child(
        "check", ActionName.CLUSTER_CHECK, "Refresh node statuses from the cloud."
    )
    update: Final = _child(
        "update", ActionName.CLUSTER_UPDATE,
        "Roll every node onto a new profile, in the batch policy's batches (failed first).",
    )  # fmt: skip
    check_node: Final = _child(
        "check_node", ActionName.NODE_CHECK,
        "Refresh the status of the nodes in `params['nodes']` (Senlin's node check).",
    )  # fmt: skip
    delete: Final = _child(
        "delete", ActionName.CLUSTER_DELETE, "Delete every node, then the cluster."
    )
    scale_out: Final = _child("scale_out", ActionName.CLUSTER_SCALE_OUT, "Add `count` nodes.")
    scale_in: Final = _child(
        "scale_in", ActionName.CLUSTER_SCALE_IN,
        "Remove `count` nodes chosen by the deletion policy (hooks fire).",
    )  # fmt: skip
    resize: Final = _child(
        "resize", ActionName.CLUSTER_RESIZE, "Change capacity and/or size bounds (Senlin's resize)."
    )
    del_nodes: Final = _child(
        "del_nodes", ActionName.CLUSTER_DEL_NODES, "Remove the named nodes (hooks fire)."
    )
    replace_nodes: Final = _child(
        "replace_nodes", ActionName.CLUSTER_REPLACE_NODES,
        "Swap members for standalone nodes (`params['nodes']`: {member: standalone}); "
        "the members leave and live on standalone.",
    )  # fmt: skip
    operation: Final = _child(
        "operation", ActionName.CLUSTER_OPERATION,
        "Carry out a profile operation (`params['operation']`: reboot, stop, lock, …) on "
        "the nodes in `params['nodes']`, else every node.",
    )  # fmt: skip
    node_operation: Final = _child(
        "node_operation", ActionName.NODE_OPERATION,
        "Carry out a profile operation on the one node in `params['nodes']`.",
    )  # fmt: skip
    create_node: Final = _child(
        "create_node", ActionName.NODE_CREATE,
        "Add one node named by the caller (`POST /v1/nodes` with a `cluster_id`).",
    )  # fmt: skip
    add_nodes: Final = _child(
        "add_nodes", ActionName.CLUSTER_ADD_NODES,
        "Take over the standalone nodes in `params['nodes']` (Senlin's add_nodes).",
    )  # fmt: skip
    delete_node: Final = _child(
        "delete_node", ActionName.NODE_DELETE,
        "Remove one node: `DELETE /v1/nodes/{node_id}` (hooks fire).",
    )  # fmt: skip
    recover: Final = _child(
        "recover", ActionName.CLUSTER_RECOVER,
        "Recover nodes (named, else those in ERROR/WARNING) with the policy's actions.",
    )  # fmt: skip
    policy_attach: Final = Operation(
        "policy_attach", ActionName.CLUSTER_ATTACH_POLICY, PolicyAttachRequest, OperationAccepted,
        ensure_can_attach, child=False,
        doc="Bind a policy (the API sends its public copy: no secret in history).",
    )  # fmt: skip
    policy_detach: Final = Operation(
        "policy_detach", ActionName.CLUSTER_DETACH_POLICY, PolicyDetachRequest, OperationAccepted,
        ensure_can_detach, child=False, doc="Unbind a policy.",
    )  # fmt: skip
    update_properties: Final = Operation(
        "update_properties", ActionName.CLUSTER_UPDATE, ClusterPropertiesRequest,
        OperationAccepted, ensure_can_update_properties, child=False,
        doc="Rename the cluster, or change its metadata, config or timeout.",
    )  # fmt: skip
    policy_update: Final = Operation(
        "policy_update", ActionName.CLUSTER_UPDATE_POLICY, PolicyUpdateRequest,
        OperationAccepted, ensure_can_detach, child=False,
        doc="Switch a bound policy on or off (`enabled`); a health policy starts or stops "
        "its manager with it.",
    )  # fmt: skip
    mark_unhealthy: Final = Operation(
        "mark_unhealthy", "NODE_MARK_UNHEALTHY", MarkNodeRequest, OperationAccepted,
        ensure_can_mark, child=False,
        doc="Mark a node unhealthy (ERROR; first victim of the next scale-in) or clear it.",
    )  # fmt: skip
    lock: Final = Operation(
        "lock", ActionName.CLUSTER_LOCK, LockClusterRequest, OperationAccepted, ensure_can_lock,
        child=False, doc="Enter maintenance mode: scaling, deletion and recovery are refused.",
    )  # fmt: skip
    unlock: Final = Operation(
        "unlock", ActionName.CLUSTER_UNLOCK, ClusterOperationRequest, OperationAccepted,
        ensure_can_unlock, child=False, doc="Leave maintenance mode.",
    )  # fmt: skip

    @classmethod
    def all(cls) -> list[Operation[Any, Any, OperationAccepted]]:
        """Every operation, in declaration order."""
        return [v for v in vars(cls).values() if isinstance(v, Operation)]
