"""`OS::Heat::Value`: no physical side; its value is worked out in the workflow."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.errors import InvalidRequest
    from domain.stack.state import ResourceState
    from domain.stack.types.api_object import physical_name
    from domain.stack.types.value import typed_value
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import Applied, ResourceFailed, ResourceHandler


def _value(props: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"value": typed_value(props)}
    except InvalidRequest as err:
        raise ResourceFailed(f"Property error: {err.message}") from None


class ValueHandler(ResourceHandler):
    """A value; updated in place (both its properties may change)."""

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Its id is Heat's physical name; its attribute the typed value."""
        physical = physical_name(ctx.parent().name, name, resource_id)
        return Applied(physical_id=physical, reference=physical, attributes=_value(props))

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """The new value, on the same resource."""
        return Applied(
            physical_id=current.physical_id, reference=current.reference, attributes=_value(props)
        )
