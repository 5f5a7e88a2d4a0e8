"""`OS::Heat::RandomString`: its value comes from `workflow.random()`, so replays agree."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.types.random_string import random_value
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import Applied, ResourceHandler


class RandomStringHandler(ResourceHandler):
    """A random string; its reference is the value itself."""

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Draw the value."""
        value = random_value(props, workflow.random())
        return Applied(physical_id=resource_id, reference=value, attributes={"value": value})
