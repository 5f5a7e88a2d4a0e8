"""`OS::Heat::Stack` with a `context`: a remote stack, made through the orchestration API
of the context's region in the Keystone catalog (Heat's `RemoteStack`).

Every step is an idempotent activity of `activities/stack_nodes.py` (the calls
`os.heat.stack` nodes make), and waits poll by activity retries, so a stack that takes
an hour costs no history. The stack is made with Warden's cloud account, as every
physical resource is; Heat makes it with the stack owner's trust.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.stack_nodes import StackNodeActivities
    from domain.cluster.stack_calls import (
        DEFAULT_TIMEOUT_MIN,
        StackActionRequest,
        StackCreateRequest,
        StackRef,
        StackShown,
        StackUpdateRequest,
        StackWaitRequest,
    )
    from domain.stack.state import ResourceState
    from domain.stack.types.api_object import physical_name
    from domain.stack.types.nested_stack import remote_fields, remote_region
    from workflows.cluster.retries import CLOUD_RETRY, POLL_RETRY, REMOVE_TIMEOUT
    from workflows.entity import failure_reason
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import Applied, ResourceFailed

CALL_TIMEOUT = timedelta(seconds=60)


def _name(ctx: NestedContext, resource: str, resource_id: str) -> str:
    """The remote stack's name: Heat's `physical_resource_name()`, the same on every
    attempt (so a create finds what an earlier attempt made)."""
    return physical_name(ctx.parent().name, resource, resource_id)


def _ref(ctx: NestedContext, current: ResourceState) -> StackRef | None:
    """The remote stack of a resource that made one."""
    if not current.physical_id:
        return None
    name = _name(ctx, current.name, current.resource_id)
    return StackRef(name=name, id=current.physical_id, region=remote_region(current.resolved))


def _minutes(props: dict[str, Any]) -> int:
    return int(props.get("timeout") or DEFAULT_TIMEOUT_MIN)


async def _call(activity: Any, arg: Any, summary: str) -> Any:
    try:
        return await workflow.execute_activity_method(
            activity,
            arg,
            start_to_close_timeout=CALL_TIMEOUT,
            retry_policy=CLOUD_RETRY,
            summary=summary,
        )
    except ActivityError as err:
        raise ResourceFailed(failure_reason(err)) from err


async def _settle(ref: StackRef, action: str, minutes: int, since: str | None = None) -> Applied:
    """Wait for the stack's `action` to complete; the resource with its outputs."""
    try:
        await workflow.execute_activity_method(
            StackNodeActivities.wait_node_stack,
            StackWaitRequest(stack=ref, action=action, since=since),
            start_to_close_timeout=CALL_TIMEOUT,
            schedule_to_close_timeout=timedelta(minutes=minutes),
            retry_policy=POLL_RETRY,
            summary=f"wait for stack {ref.name} {action}_COMPLETE",
        )
    except ActivityError as err:
        raise ResourceFailed(failure_reason(err), ref.id) from err
    shown: StackShown = await _call(
        StackNodeActivities.show_node_stack, ref, f"outputs of stack {ref.name}"
    )
    return Applied(physical_id=ref.id, reference=ref.id, attributes=shown.model_dump())


class RemoteStack:
    """The steps of a remote stack; `NestedStackHandler` hands them over when the
    resource has a `context`."""

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create the stack (rollback disabled, as Heat asks) and wait for CREATE_COMPLETE."""
        request = StackCreateRequest(
            name=_name(ctx, name, resource_id),
            fields=remote_fields(props),
            region=remote_region(props),
        )
        ref: StackRef = await _call(
            StackNodeActivities.create_node_stack, request, f"create remote stack {request.name}"
        )
        return await _settle(ref, "CREATE", _minutes(props))

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Update the stack to the new template and parameters (Heat's PUT: its own
        resources decide whether they change)."""
        ref = _ref(ctx, current)
        if ref is None:
            raise ResourceFailed(f"Resource {current.name} has no remote stack to update")
        since: str | None = await _call(
            StackNodeActivities.update_node_stack,
            StackUpdateRequest(stack=ref, fields=remote_fields(props), existing=False),
            f"update remote stack {ref.name}",
        )
        return await _settle(ref, "UPDATE", _minutes(props), since)

    async def delete(self, ctx: NestedContext, current: ResourceState) -> None:
        """Delete the stack and wait until it is gone (gone already is fine)."""
        ref = _ref(ctx, current)
        if ref is None:
            return
        try:
            await workflow.execute_activity_method(
                StackNodeActivities.delete_node_stack,
                ref,
                start_to_close_timeout=CALL_TIMEOUT,
                schedule_to_close_timeout=REMOVE_TIMEOUT,
                retry_policy=POLL_RETRY,
                summary=f"delete remote stack {ref.name}",
            )
        except ActivityError as err:
            raise ResourceFailed(failure_reason(err)) from err

    async def act(self, ctx: NestedContext, current: ResourceState, action: str) -> None:
        """SUSPEND, RESUME or CHECK the stack and wait for it to complete."""
        ref = _ref(ctx, current)
        if ref is None:
            raise ResourceFailed(f"Cannot {action.lower()} {current.name}, resource not found")
        await _call(
            StackNodeActivities.act_on_node_stack,
            StackActionRequest(stack=ref, action=action),
            f"{action.lower()} remote stack {ref.name}",
        )
        await _settle(ref, action, _minutes(current.resolved))
