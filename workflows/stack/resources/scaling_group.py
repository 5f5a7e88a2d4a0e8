"""`OS::Heat::AutoScalingGroup`: a nested stack whose members the group sizes."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.groups import GroupSpec, group_size, rolling_policy
    from domain.stack.state import ResourceState
    from workflows.stack.group_rolls import roll_group, wants_roll
    from workflows.stack.nested import NestedContext, create_group, group_attributes, update_group
    from workflows.stack.resources.nested_stack import NestedStackHandler


class ScalingGroupHandler(NestedStackHandler):
    """A scaling group: created with its members, updated by resizing or re-defining them."""

    async def _create_stack(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> dict[str, Any]:
        return await create_group(ctx, name, props, resource_id)

    async def _update_stack(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> dict[str, Any]:
        """A new member definition rolls in batches under `rolling_update`; else at once."""
        policy = rolling_policy(ctx.update_policy(current.name))
        resized = ctx.group_size(current.name) is not None
        if (
            policy is None
            or resized
            or not wants_roll(policy, current.resolved.get("resource"), props["resource"])
        ):
            return await update_group(ctx, current, props)
        size = group_size(props, current.resolved, current.attributes.get("current_size"))
        spec = GroupSpec(member=dict(props["resource"]), size=size)
        return group_attributes(await roll_group(ctx, current, spec, policy))
