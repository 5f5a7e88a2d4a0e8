"""`OS::Heat::ResourceGroup`: a nested stack of members "0", "1", … that the group sizes.

The group computes the names never to reuse (`removal_policies`); the nested stack
picks the other victims itself, because it alone knows which members failed.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.groups import GroupSpec, indexed_members, indexed_template, rolling_policy
    from domain.stack.requests import StackOperationRequest
    from domain.stack.state import ResourceState
    from domain.stack.types.resource_group import REMOVED, removal_names
    from workflows.stack.group_rolls import (
        create_in_batches,
        roll_group,
        wants_batch_create,
        wants_roll,
    )
    from workflows.stack.messages import NestedOutcome
    from workflows.stack.nested import NestedContext, ask_nested, group_attributes, start_nested
    from workflows.stack.resources.nested_stack import NestedStackHandler


def group_spec(props: dict[str, Any], skip: list[str]) -> GroupSpec:
    """What the group's nested stack should hold: `count` indexed members, minus `skip`."""
    return GroupSpec(
        member=dict(props["resource_def"]),
        size=int(props["count"]),
        index_var=str(props["index_var"]),
        skip=skip,
    )


class ResourceGroupHandler(NestedStackHandler):
    """A resource group: created with its members (in batches under `batch_create`),
    updated by resizing or re-defining them (in batches under `rolling_update`)."""

    async def _create_stack(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> dict[str, Any]:
        skip = removal_names(props, [], None)
        spec = group_spec(props, skip)

        async def start(first: GroupSpec) -> NestedOutcome:
            names = indexed_members([], first.size, skip)
            template = indexed_template(first.member, names, str(first.index_var))
            return await start_nested(ctx, name, {"template": template}, resource_id)

        policy = rolling_policy(ctx.update_policy(name), "batch_create")
        if policy is not None and wants_batch_create(policy, spec.size):
            outcome = await create_in_batches(ctx, name, spec, policy, start)
        else:
            outcome = await start(spec)
        return {**group_attributes(outcome), REMOVED: skip}

    async def _update_stack(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> dict[str, Any]:
        skipped = list(current.attributes.get(REMOVED) or [])
        skip = removal_names(props, skipped, current.attributes.get("refs_map") or {})
        spec = group_spec(props, skip)
        policy = rolling_policy(ctx.update_policy(current.name))
        if policy is not None and wants_roll(
            policy, current.resolved.get("resource_def"), props["resource_def"]
        ):
            outcome = await roll_group(ctx, current, spec, policy)
        else:
            request = StackOperationRequest(existing=True, group=spec)
            outcome = await ask_nested(ctx, current.physical_id or "", "update", request)
        return {**group_attributes(outcome), REMOVED: skip}
