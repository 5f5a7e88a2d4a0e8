"""`OS::Heat::ScalingPolicy`: only its signal URL; the stack workflow applies the signal."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.types.scaling_policy import policy_attributes
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import Applied, ResourceHandler


class ScalingPolicyHandler(ResourceHandler):
    """A policy has no physical side: create only computes its URLs."""

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """The policy's `signal_url` / `alarm_url`."""
        spec = ctx.parent()
        return Applied(
            physical_id=resource_id,
            reference=resource_id,
            attributes=policy_attributes(spec.project_id, spec.name, spec.stack_id, name),
        )
