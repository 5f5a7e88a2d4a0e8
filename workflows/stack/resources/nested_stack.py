"""`OS::Heat::Stack`: the physical resource is a nested stack with its own workflow.

Every step is a request to that stack (`workflows/stack/nested.py`); its failure
becomes this resource's failure with the nested stack's reason. A resource with a
`context` is a remote stack instead, and its steps are `RemoteStack`'s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.state import ResourceState, StackAction, StackLock
    from domain.stack.types.nested_stack import is_remote
    from workflows.stack.nested import (
        NestedContext,
        NestedFailed,
        act_on_nested,
        create_nested,
        delete_nested,
        update_nested,
    )
    from workflows.stack.resources.base import Applied, ResourceFailed, ResourceHandler
    from workflows.stack.resources.remote_stack import RemoteStack

_REMOTE = RemoteStack()


def nested_reason(err: NestedFailed) -> str:
    """Why the nested stack's operation failed, for the parent's resource."""
    status = f" is {err.outcome.stack_status}" if err.outcome.stack_status else ""
    return f"Nested stack {err.outcome.stack_id}{status}: {err.outcome.reason}"


class NestedStackHandler(ResourceHandler):
    """A nested stack; check, suspend, resume, lock and unlock reach it too."""

    pure: ClassVar[bool] = False
    nested: ClassVar[bool] = True

    async def _create_stack(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> dict[str, Any]:
        return await create_nested(ctx, name, props, resource_id)

    async def _update_stack(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> dict[str, Any]:
        return await update_nested(ctx, current, props)

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Start the nested stack (its id is the resource id) and wait for its CREATE."""
        if is_remote(props):
            return await _REMOTE.create(ctx, name, props, resource_id)
        try:
            attributes = await self._create_stack(ctx, name, props, resource_id)
        except NestedFailed as err:
            raise ResourceFailed(nested_reason(err), resource_id) from err
        return Applied(physical_id=resource_id, reference=resource_id, attributes=attributes)

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Update the nested stack (replacing its failed members)."""
        if is_remote(props):
            return await _REMOTE.update(ctx, current, props)
        try:
            attributes = await self._update_stack(ctx, current, props)
        except NestedFailed as err:
            raise ResourceFailed(nested_reason(err)) from err
        return Applied(
            physical_id=current.physical_id, reference=current.reference, attributes=attributes
        )

    async def delete_resource(self, ctx: NestedContext, current: ResourceState) -> None:
        """Delete the nested (or remote) stack."""
        if is_remote(current.resolved):
            await _REMOTE.delete(ctx, current)
        else:
            await self.delete(ctx, current.physical_id, current.resolved)

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Delete the nested stack."""
        if not physical_id:
            return
        try:
            await delete_nested(ctx, physical_id)
        except NestedFailed as err:
            raise ResourceFailed(nested_reason(err)) from err

    async def _act(
        self,
        ctx: NestedContext,
        current: ResourceState,
        action: StackAction,
        lock: StackLock | None = None,
    ) -> None:
        if not current.physical_id:
            return
        if is_remote(current.resolved):
            if action in (StackAction.CHECK, StackAction.SUSPEND, StackAction.RESUME):
                await _REMOTE.act(ctx, current, action.value)
            return  # a remote stack is locked by its own Heat, not this one
        try:
            await act_on_nested(ctx, current, action, lock)
        except NestedFailed as err:
            failed = f" (failed: {', '.join(err.outcome.failed)})" if err.outcome.failed else ""
            raise ResourceFailed(nested_reason(err) + failed) from err

    async def check(self, ctx: NestedContext, current: ResourceState) -> None:
        """Check the nested stack; its failed members are named in the reason."""
        await self._act(ctx, current, StackAction.CHECK)

    async def suspend(self, ctx: NestedContext, current: ResourceState) -> None:
        """Suspend the nested stack."""
        await self._act(ctx, current, StackAction.SUSPEND)

    async def resume(self, ctx: NestedContext, current: ResourceState) -> None:
        """Resume the nested stack."""
        await self._act(ctx, current, StackAction.RESUME)

    async def lock(
        self, ctx: NestedContext, current: ResourceState, lock: StackLock | None
    ) -> None:
        """Lock the nested stack with the same lock."""
        await self._act(ctx, current, StackAction.LOCK, lock)

    async def unlock(self, ctx: NestedContext, current: ResourceState) -> None:
        """Unlock the nested stack."""
        await self._act(ctx, current, StackAction.UNLOCK)

    def has_lock_state(self, current: ResourceState) -> bool:
        """A created nested stack is locked and unlocked (a remote one is not)."""
        return bool(current.physical_id) and not is_remote(current.resolved)
