"""`OS::Heat::TestResource`: waits are durable timers; `fail` fails the step."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.state import ResourceState
    from domain.stack.types.test_resource import WaitAction, attributes, failure, wait_seconds
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import Applied, ResourceFailed, ResourceHandler


async def _wait_for(action: WaitAction, props: dict[str, Any]) -> None:
    seconds = wait_seconds(action, props)
    if seconds:
        await workflow.sleep(timedelta(seconds=int(seconds)))


class TestResourceHandler(ResourceHandler):
    """Stores `value`; waits after create/update/delete and fails on demand."""

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Wait, then fail or store the value."""
        await _wait_for("create", props)
        if reason := failure(name, props):
            raise ResourceFailed(reason)
        return Applied(physical_id=resource_id, reference=resource_id, attributes=attributes(props))

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Wait, then fail or store the new value."""
        await _wait_for("update", props)
        if reason := failure(current.name, props):
            raise ResourceFailed(reason)
        return Applied(
            physical_id=current.physical_id,
            reference=current.reference,
            attributes=attributes(props),
        )

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Wait; there is nothing else to delete."""
        await _wait_for("delete", props)
