"""`OS::Heat::Stack`: a nested stack is a real stack with its own entity workflow.

The parent's operation starts the nested stack's `StackWorkflow` (parent close policy
ABANDON, so the nested stack outlives the operation that made it) with its CREATE
already pending, and later talks to it through the same signals an app would use,
each carrying `notify`: the nested stack answers with a `nested_finished` signal
when that operation ends, or at once when it refuses it.
"""

from __future__ import annotations

from typing import Any, Protocol

from temporalio import workflow
from temporalio.exceptions import FailureError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain.hot.functions import OUTPUT_ERRORS
    from domain.stack.groups import MEMBERS, GroupSpec, group_size, group_template, member_order
    from domain.stack.requests import (
        LockStackRequest,
        ResourceSignalRequest,
        StackOperationRequest,
    )
    from domain.stack.rules import template_object
    from domain.stack.state import (
        ResourceState,
        StackAction,
        StackLock,
        StackOperation,
        StackSpec,
        StackState,
        Status,
    )
    from domain.stack.types.nested_stack import nested_stack_name
    from workflows import ids
    from workflows.search_attributes import warden_attributes
    from workflows.stack.messages import STACK_WORKFLOW, NestedOutcome, StackInput


class NestedFailed(Exception):
    """The nested stack's operation failed or was refused."""

    def __init__(self, outcome: NestedOutcome) -> None:
        super().__init__(outcome.reason)
        self.outcome = outcome


class NestedContext(Protocol):
    """What the parent's operation offers: its stack and a way to await answers."""

    def parent(self) -> StackSpec:
        """The parent stack."""
        ...

    async def wait_nested(self, action_id: str) -> NestedOutcome:
        """The answer to the request with this action id."""
        ...

    def group_size(self, name: str) -> int | None:
        """The size a scaling signal asked for this group, if any."""
        ...

    def update_policy(self, name: str) -> dict[str, Any]:
        """The `update_policy` of resource `name` in the template being applied."""
        ...

    def stopping(self) -> str:
        """Why the operation is stopping (cancel_update, a failure), or "" if it is not."""
        ...

    def progress(self, name: str, note: str) -> None:
        """Show what resource `name`'s step is doing now (a roll's batch) in the UI."""
        ...

    def breakpoints(self, name: str) -> dict[str, Any]:
        """The breakpoint hooks the nested stack of resource `name` inherits."""
        ...

    def resource_by_reference(self, rtype: str, reference: str) -> ResourceState | None:
        """The resource of type `rtype` whose reference is `reference`, as it is now."""
        ...

    async def next_signal(self, name: str) -> ResourceSignalRequest:
        """The next signal to deployment `name` (waits for one)."""
        ...

    def timeout_mins(self) -> int | None:
        """The operation's timeout, in minutes (None: none)."""
        ...

    def event_sinks(self) -> list[dict[str, Any]]:
        """The stack's event sinks (its nested stacks post to them too, as in Heat)."""
        ...


def nested_name(parent: StackSpec, resource: str, resource_id: str) -> str:
    """Heat-like name of a nested stack: `<parent>-<resource>-<short id>`."""
    return nested_stack_name(parent.name, resource, resource_id)


def _settled(outcome: NestedOutcome) -> dict[str, Any]:
    if not outcome.ok:
        raise NestedFailed(outcome)
    if outcome.output_errors:
        return {"outputs": outcome.outputs, OUTPUT_ERRORS: outcome.output_errors}
    return {"outputs": outcome.outputs}


def group_attributes(outcome: NestedOutcome) -> dict[str, Any]:
    """A group's attributes from its nested stack's outcome (members in index/name order)."""
    if not outcome.ok:
        raise NestedFailed(outcome)
    names = sorted(outcome.refs, key=member_order)
    refs = {name: outcome.refs[name] for name in names}
    return {
        "current_size": outcome.size,
        "refs": [ref for ref in refs.values() if ref],
        "refs_map": refs,
        MEMBERS: {name: outcome.members.get(name, {}) for name in names},
    }


def member_name() -> str:
    """A new group member's name: a short random id, as Heat names them (replay-safe)."""
    rnd = workflow.random()
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(12))


async def create_group(
    ctx: NestedContext, resource: str, props: dict[str, Any], resource_id: str
) -> dict[str, Any]:
    """A scaling group: a nested stack of `desired_capacity` (else `min_size`) members."""
    size = group_size(props, {}, None)
    template = group_template(props["resource"], [member_name() for _ in range(size)])
    outcome = await start_nested(ctx, resource, {"template": template}, resource_id)
    return group_attributes(outcome)


async def update_group(
    ctx: NestedContext, current: ResourceState, props: dict[str, Any]
) -> dict[str, Any]:
    """Resize and/or re-define the members; the group's nested stack picks the victims."""
    asked = ctx.group_size(current.name)
    size = (
        asked
        if asked is not None
        else group_size(props, current.resolved, current.attributes.get("current_size"))
    )
    request = StackOperationRequest(
        existing=True, group=GroupSpec(member=dict(props["resource"]), size=size)
    )
    outcome = await ask_nested(ctx, current.physical_id or "", "update", request)
    return group_attributes(outcome)


def _timeout_mins(ctx: NestedContext, props: dict[str, Any]) -> int | None:
    """The nested stack's timeout: its own `timeout`, else its parent's, as Heat's
    `StackResource` gives it (a nested stack the parent's timeout stops is stopped too)."""
    own = props.get("timeout")
    if own is None and workflow.patched("nested-inherits-timeout"):
        return ctx.timeout_mins()
    return None if own is None else int(own)


async def create_nested(
    ctx: NestedContext, resource: str, props: dict[str, Any], resource_id: str
) -> dict[str, Any]:
    """Start the nested stack (its id is the resource id) and wait for its CREATE."""
    return _settled(await start_nested(ctx, resource, props, resource_id))


async def start_nested(
    ctx: NestedContext, resource: str, props: dict[str, Any], resource_id: str
) -> NestedOutcome:
    parent, now = ctx.parent(), workflow.now()
    action_id = str(workflow.uuid4())
    op = StackOperation(
        action_id=action_id,
        action=StackAction.CREATE,
        template=template_object(props["template"]),
        parameters=dict(props.get("parameters") or {}),
        notify=workflow.info().workflow_id,
    )
    spec = StackSpec(
        stack_id=resource_id,
        project_id=parent.project_id,
        name=nested_name(parent, resource, resource_id),
        parent_id=parent.stack_id,
        parent_resource=resource,
    )
    state = StackState(
        spec=spec,
        timeout_mins=_timeout_mins(ctx, props),
        action=StackAction.CREATE,
        status=Status.IN_PROGRESS,
        status_reason="Stack CREATE started",
        busy=op,
        created_at=now,
        updated_at=now,
        hooks=ctx.breakpoints(resource),
        event_sinks=ctx.event_sinks(),
    )
    try:
        await workflow.start_child_workflow(
            STACK_WORKFLOW,
            StackInput(state=state, pending=op, recent_action_ids=[action_id]),
            id=ids.stack(resource_id),
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"stack {spec.name} (nested in {parent.name})",
            static_details=f"Stack `{resource_id}`, resource `{resource}` of stack "
            f"`{parent.stack_id}`",
            search_attributes=warden_attributes(
                parent.project_id, "stack", resource_id, "CREATE_IN_PROGRESS"
            ),
        )
    except WorkflowAlreadyStartedError:
        workflow.logger.info("nested stack %s already started", resource_id)
    return await ctx.wait_nested(action_id)


async def ask_nested(
    ctx: NestedContext,
    stack_id: str,
    signal: str,
    request: StackOperationRequest | LockStackRequest,
) -> NestedOutcome:
    """Send an operation to a nested stack and wait for how it ends."""
    action_id = str(workflow.uuid4())
    request = request.model_copy(
        update={"action_id": action_id, "notify": workflow.info().workflow_id}
    )
    handle = workflow.get_external_workflow_handle(ids.stack(stack_id))
    try:
        await handle.signal(signal, request)
    except FailureError as err:
        return NestedOutcome(stack_id=stack_id, action_id=action_id, ok=False, reason=str(err))
    return await ctx.wait_nested(action_id)


async def update_nested(
    ctx: NestedContext, current: ResourceState, props: dict[str, Any]
) -> dict[str, Any]:
    """Move the nested stack to the (maybe unchanged) template: its failed members are replaced."""
    request = StackOperationRequest(
        template=template_object(props["template"]),
        parameters=dict(props.get("parameters") or {}),
        timeout_mins=_timeout_mins(ctx, props),
        hooks=ctx.breakpoints(current.name),
        event_sinks=ctx.event_sinks() or None,
    )
    return _settled(await ask_nested(ctx, current.physical_id or "", "update", request))


async def delete_nested(ctx: NestedContext, stack_id: str) -> None:
    """Delete the nested stack (one that no longer exists counts as deleted)."""
    outcome = await ask_nested(ctx, stack_id, "delete", StackOperationRequest())
    if not outcome.ok and "not found" not in outcome.reason.lower():
        raise NestedFailed(outcome)


async def act_on_nested(
    ctx: NestedContext, current: ResourceState, action: StackAction, lock: StackLock | None
) -> None:
    """check / suspend / resume / lock / unlock the nested stack as well."""
    stack_id = current.physical_id or ""
    if action == StackAction.LOCK and lock is not None:
        request: StackOperationRequest | LockStackRequest = LockStackRequest(
            level=lock.level, reason=lock.reason, owner=lock.owner
        )
    else:
        request = StackOperationRequest()
    outcome = await ask_nested(ctx, stack_id, action.value.lower(), request)
    if action == StackAction.UNLOCK and "is not locked" in outcome.reason:
        return  # never got locked (its lock failed): nothing to undo
    if not outcome.ok:
        raise NestedFailed(outcome)
