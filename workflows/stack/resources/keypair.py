"""`OS::Nova::KeyPair`: made once, its key drawn from the workflow's random source."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from activities.keypairs import KeypairActivities
    from domain.cloud_objects import CloudRef
    from domain.stack.state import ResourceState
    from domain.stack.types.nova.keypair import Keypair, keypair_attributes, keypair_request
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
    )


class KeypairHandler(ResourceHandler):
    """A Nova keypair; `get_resource` gives its name, as Heat's does."""

    pure = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create (or adopt the earlier attempt's) keypair."""
        seed = f"{resource_id}:{workflow.random().getrandbits(128):032x}"
        made: Keypair = await call_activity(
            KeypairActivities.create_keypair, keypair_request(props, seed)
        )
        attributes = keypair_attributes(made, bool(props.get("save_private_key")))
        return Applied(physical_id=made.name, reference=made.name, attributes=attributes)

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Delete the keypair (gone already is fine)."""
        if physical_id:
            await call_activity(
                CloudObjectActivities.delete_cloud_object, CloudRef(kind="keypair", id=physical_id)
            )

    async def check(self, ctx: NestedContext, current: ResourceState) -> None:
        """The keypair still exists."""
        if not current.physical_id:
            raise ResourceFailed("Keypair was never created")
        found = await call_activity(
            CloudObjectActivities.show_cloud_object,
            CloudRef(kind="keypair", id=current.physical_id),
        )
        if found is None:
            raise ResourceFailed(f"Keypair {current.physical_id} no longer exists")
