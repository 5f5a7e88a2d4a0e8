"""What a stack workflow writes and shows: its row, action changes, events, UI details."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.events import Event, EventLevel
    from domain.hot.template import masked_parameters
    from domain.projection import ResourceSnapshot, StackSnapshot
    from domain.stack.state import ResourceState, StackAction, StackSpec, StackState, Status
    from workflows import ids
    from workflows.search_attributes import show_status

#: The action record name of each stack operation.
ACTION_NAMES: dict[StackAction, ActionName] = {
    StackAction.CREATE: ActionName.STACK_CREATE,
    StackAction.UPDATE: ActionName.STACK_UPDATE,
    StackAction.DELETE: ActionName.STACK_DELETE,
    StackAction.CHECK: ActionName.STACK_CHECK,
    StackAction.SUSPEND: ActionName.STACK_SUSPEND,
    StackAction.RESUME: ActionName.STACK_RESUME,
    StackAction.LOCK: ActionName.STACK_LOCK,
    StackAction.UNLOCK: ActionName.STACK_UNLOCK,
    StackAction.ROLLBACK: ActionName.STACK_ROLLBACK,
}
#: Operations done inline by the stack workflow (no `stack-op` child).
INLINE = frozenset({ActionName.STACK_MARK_UNHEALTHY})


def stack_snapshot(state: StackState) -> StackSnapshot:
    """Project a stack's workflow state into its database row."""
    spec, now = state.spec, workflow.now()
    return StackSnapshot(
        stack_id=spec.stack_id,
        project_id=spec.project_id,
        name=spec.name,
        parent_id=spec.parent_id,
        parent_resource=spec.parent_resource,
        action=state.action.value,
        status=state.status.value,
        status_reason=state.status_reason,
        template=state.template,
        parameters=masked_parameters(state.template, state.parameters),
        outputs=state.outputs,
        output_errors=state.output_errors,
        lock=state.lock.model_dump(mode="json") if state.lock else None,
        timeout_mins=state.timeout_mins,
        disable_rollback=state.disable_rollback,
        tags=state.tags,
        created_at=state.created_at or now,
        updated_at=now,
    )


def resource_snapshot(
    spec: StackSpec, resource: ResourceState, required_by: list[str]
) -> ResourceSnapshot:
    """The database row of one resource."""
    return ResourceSnapshot(
        stack_id=spec.stack_id,
        name=resource.name,
        project_id=spec.project_id,
        resource_id=resource.resource_id,
        type=resource.type,
        physical_id=resource.physical_id,
        action=resource.action.value,
        status=resource.status.value,
        status_reason=resource.status_reason,
        required_by=required_by,
        attributes=resource.attributes,
        rsrc_metadata=resource.rsrc_metadata,
        created_at=resource.created_at,
        updated_at=resource.updated_at,
    )


def new_id() -> str:
    """A deterministic v4 UUID, as text: `str(workflow.uuid4())`, cheaper (`ids.uuid_text`)."""
    return ids.uuid_text(workflow.random().getrandbits(128))


def resource_event(
    spec: StackSpec, resource: ResourceState, reason: str, action_id: str | None
) -> Event:
    """An event for a resource's transition (its current action and status)."""
    return Event(
        event_id=new_id(),
        project_id=spec.project_id,
        obj_type="resource",
        obj_id=resource.resource_id,
        obj_name=resource.name,
        stack_id=spec.stack_id,
        action=resource.action.value,
        status=resource.status.value,
        status_reason=reason,
        level=EventLevel.ERROR if resource.status == Status.FAILED else EventLevel.INFO,
        action_id=action_id,
        meta={"physical_id": resource.physical_id, "type": resource.type},
        at=workflow.now(),
    )


def stack_action_change(
    state: StackState,
    action_id: str,
    name: ActionName,
    status: ActionStatus,
    *,
    reason: str = "",
    inputs: dict[str, Any] | None = None,
) -> ActionChange:
    """The action record of a stack operation, as of now."""
    spec = state.spec
    return ActionChange(
        action_id=action_id,
        project_id=spec.project_id,
        name=name,
        target=spec.stack_id,
        status=status,
        status_reason=reason,
        inputs=inputs,
        workflow_id=workflow.info().workflow_id
        if name in INLINE
        else ids.stack_operation(spec.stack_id, action_id),
        at=workflow.now(),
    )


def stack_event(state: StackState, reason: str, action_id: str | None) -> Event:
    """An event for the stack's own state transition."""
    spec = state.spec
    return Event(
        event_id=new_id(),
        project_id=spec.project_id,
        obj_type="stack",
        obj_id=spec.stack_id,
        obj_name=spec.name,
        stack_id=spec.stack_id,
        action=state.action.value,
        status=state.status.value,
        status_reason=reason,
        level=EventLevel.ERROR if state.status == Status.FAILED else EventLevel.INFO,
        action_id=action_id,
        at=workflow.now(),
    )


def show(state: StackState) -> None:
    """Keep the UI's current details and WardenStatus true."""
    lock = ""
    if state.lock is not None and state.locked:
        who = state.lock.owner or "?"
        lock = f" · 🔒 locked ({state.lock.level.value}) by {who}: {state.lock.reason}"
    failed = sorted(r.name for r in state.resources.values() if r.failed)
    unhealthy = f" · {len(failed)} failed resource(s): {', '.join(failed[:5])}" if failed else ""
    workflow.set_current_details(
        f"Stack **{state.spec.name}** is {state.stack_status} with {len(state.resources)} "
        f"resource(s){lock}{unhealthy}\n\n{state.status_reason}"
    )
    show_status(state.stack_status)
