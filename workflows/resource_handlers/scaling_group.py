"""`OS::Heat::AutoScalingGroup`: a nested stack whose members the group sizes."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stacks import ResourceState
    from workflows.nested_stacks import NestedContext, create_group, update_group
    from workflows.resource_handlers.nested_stack import NestedStackHandler


class ScalingGroupHandler(NestedStackHandler):
    """A scaling group: created with its members, updated by resizing or re-defining them."""

    async def _create_stack(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> dict[str, Any]:
        return await create_group(ctx, name, props, resource_id)

    async def _update_stack(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> dict[str, Any]:
        return await update_group(ctx, current, props)
