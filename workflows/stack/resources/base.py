"""The contract of a resource handler: create, update, delete, check, suspend, resume, lock.

The base handler is a type without a physical side (OS::Heat::None): an id on create,
nothing to do otherwise. Types without I/O run in the workflow itself: their waits are
durable timers and their randomness comes from `workflow.random()`, so a replay gives
the same values. Types with a cloud side go through idempotent activities.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from domain.stack.state import ResourceState, StackLock
    from workflows.cluster.retries import CLOUD_RETRY, POLL_RETRY, SERVER_WAIT
    from workflows.entity import failure_reason
    from workflows.stack.nested import NestedContext


class Applied(BaseModel):
    """What a create or update left: the physical resource and its attributes."""

    model_config = ConfigDict(frozen=True)

    physical_id: str | None
    reference: str | None
    attributes: dict[str, Any] = Field(default_factory=dict)


class ResourceFailed(Exception):
    """A step failed; `physical_id` names anything it left behind (to clean up)."""

    def __init__(self, reason: str, physical_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.physical_id = physical_id


def unchanged(current: ResourceState) -> Applied:
    """The resource as it is: an update with nothing to apply."""
    return Applied(
        physical_id=current.physical_id, reference=current.reference, attributes=current.attributes
    )


async def call_activity(activity: Any, arg: Any, *, timeout_s: int = 60, poll: bool = False) -> Any:
    """Run a cloud activity; its failure becomes ResourceFailed with the cloud's reason."""
    try:
        return await workflow.execute_activity_method(
            activity,
            arg,
            start_to_close_timeout=timedelta(seconds=timeout_s),
            schedule_to_close_timeout=SERVER_WAIT if poll else None,
            retry_policy=POLL_RETRY if poll else CLOUD_RETRY,
        )
    except ActivityError as err:
        raise ResourceFailed(failure_reason(err)) from err


class ResourceHandler:
    """What a stack operation does with one resource type; every step may raise ResourceFailed.

    Override only what the type does; the defaults are those of a type with no
    physical side.
    """

    #: Steps have no cloud side, so cancel_update may stop them at any point.
    pure: ClassVar[bool] = True
    #: The physical resource is a nested stack with its own workflow.
    nested: ClassVar[bool] = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create the physical resource for resource `name`."""
        return Applied(physical_id=resource_id, reference=resource_id, attributes={})

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Apply new properties in place (only those the type's schema allows to change)."""
        return unchanged(current)

    async def replaced_by(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> str:
        """Why an update Heat would make in place replaces the resource instead ("" for
        none): a type whose answer needs the cloud or the store looks there."""
        return ""

    async def prepare_for_replace(self, ctx: NestedContext, old: ResourceState) -> None:
        """Free what the replacement will take over from `old` (Heat's
        `prepare_for_replace`: a server's ports); `old` itself is deleted afterwards."""

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Delete a physical resource and wait until it is gone (gone already is fine)."""

    async def delete_resource(self, ctx: NestedContext, current: ResourceState) -> None:
        """Delete the resource's physical side: `delete` with what it last applied
        (a type that needs more of the resource to find its physical side overrides it)."""
        await self.delete(ctx, current.physical_id, current.resolved)

    async def check(self, ctx: NestedContext, current: ResourceState) -> None:
        """Check that the physical resource is what Warden thinks it is."""

    async def suspend(self, ctx: NestedContext, current: ResourceState) -> None:
        """Suspend the physical resource."""

    async def resume(self, ctx: NestedContext, current: ResourceState) -> None:
        """Resume the physical resource."""

    async def lock(
        self, ctx: NestedContext, current: ResourceState, lock: StackLock | None
    ) -> None:
        """Lock the physical resource at `lock.level`."""

    async def unlock(self, ctx: NestedContext, current: ResourceState) -> None:
        """Unlock the physical resource."""

    def has_lock_state(self, current: ResourceState) -> bool:
        """Whether lock/unlock change this resource's state (and so show as a transition)."""
        return False
