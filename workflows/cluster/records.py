"""What a cluster workflow writes and shows: action changes, events, UI details."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.cluster.nodes import NodeState
    from domain.cluster.state import ClusterState, RunningOperation
    from domain.events import Event, EventLevel
    from domain.events import node_event as build_node_event
    from workflows import ids
    from workflows.cluster.messages import ClusterOperations
    from workflows.search_attributes import show_status

#: Operations carried out by a `cluster-op:{cluster_id}:{action_id}` child (the rest
#: are done inline by the cluster workflow itself), as the operation table declares them.
CHILD_OPERATIONS = frozenset(ActionName(op.action) for op in ClusterOperations.all() if op.child)


def action_change(
    state: ClusterState,
    op: RunningOperation,
    status: ActionStatus,
    *,
    reason: str = "",
    inputs: dict[str, Any] | None = None,
) -> ActionChange:
    """The action record of a cluster operation, as of now."""
    spec = state.spec
    return ActionChange(
        action_id=op.action_id,
        project_id=spec.project_id,
        name=op.name,
        target=spec.cluster_id,
        status=status,
        status_reason=reason,
        inputs=inputs,
        workflow_id=ids.cluster_operation(spec.cluster_id, op.action_id)
        if op.name in CHILD_OPERATIONS
        else workflow.info().workflow_id,
        at=workflow.now(),
    )


def cluster_event(
    state: ClusterState, action: str, reason: str, level: EventLevel, action_id: str | None
) -> Event:
    """An event about the cluster (id from the workflow's seeded uuid: replay-safe)."""
    spec = state.spec
    return Event(
        event_id=str(workflow.uuid4()),
        project_id=spec.project_id,
        obj_type="cluster",
        obj_id=spec.cluster_id,
        obj_name=spec.name,
        cluster_id=spec.cluster_id,
        action=action,
        status=state.status.value,
        status_reason=reason,
        level=level,
        action_id=action_id,
        at=workflow.now(),
    )


def node_event(state: ClusterState, node: NodeState, action: str, reason: str) -> Event:
    """An event about one of the cluster's nodes (level from its status: `node_event_level`)."""
    spec = state.spec
    return build_node_event(
        event_id=str(workflow.uuid4()),
        at=workflow.now(),
        project_id=spec.project_id,
        cluster_id=spec.cluster_id,
        node_id=node.node_id,
        node_name=node.name,
        action=action,
        status=node.status.value,
        reason=reason,
    )


def show(state: ClusterState) -> None:
    """Keep the UI's current details and WardenStatus true."""
    lock = f" · 🔒 locked by {state.lock.owner or '?'}: {state.lock.reason}" if state.lock else ""
    busy = f" · running {state.busy.name}" if state.busy else ""
    workflow.set_current_details(
        f"Cluster **{state.spec.name}** is {state.status.value} with {len(state.nodes)} "
        f"node(s){busy}{lock}\n\n{state.status_reason}"
    )
    show_status(state.status.value)
