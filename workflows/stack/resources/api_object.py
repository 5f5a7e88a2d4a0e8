"""Resource types that are one cloud object (Neutron, Cinder, Glance): one handler for all.

Create resolves names to ids and creates once (a retry adopts what its first attempt
made, by request id); update sends only the changed fields; delete succeeds on what is
gone; check shows the object and fails on an error status or a 404.
"""

from __future__ import annotations

from typing import Any, ClassVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from domain.cloud_objects import (
        CloudCreate,
        CloudObject,
        CloudRef,
        CloudUpdate,
        CloudWait,
        Lookup,
    )
    from domain.stack.state import ResourceState
    from domain.stack.types.api_object import ApiObjectType, physical_name
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
        unchanged,
    )


class ApiObjectHandler(ResourceHandler):
    """A resource that is one object of a cloud service, described by `api`."""

    pure: ClassVar[bool] = False

    def __init__(self, api: ApiObjectType) -> None:
        self.api = api

    def applied(self, obj: CloudObject) -> Applied:
        """The resource's physical side: its id is the reference, as in Heat."""
        return Applied(
            physical_id=obj.id, reference=obj.id, attributes=self.api.attributes(obj.body)
        )

    async def ready(self, obj: CloudObject) -> CloudObject:
        """The object once its status is ready (at once for kinds that have none)."""
        if not self.api.ready:
            return obj
        wait = CloudWait(
            ref=obj.ref(),
            field=self.api.status_field,
            ready=self.api.ready,
            failed=self.api.failed,
        )
        try:
            found: CloudObject = await call_activity(
                CloudObjectActivities.wait_cloud_object, wait, timeout_s=30, poll=True
            )
        except ResourceFailed as err:
            raise ResourceFailed(err.reason, obj.id) from err
        return found

    def _parent_lookup(self, props: dict[str, Any]) -> Lookup | None:
        if self.api.parent is None:
            return None
        prop, kind = self.api.parent
        return Lookup(path=(), kind=kind, ref=str(props[prop]))

    async def ref(self, physical_id: str, props: dict[str, Any]) -> CloudRef | None:
        """The object's reference; None when the object it lives under is gone."""
        if self.api.parent is None:
            return CloudRef(kind=self.api.kind, id=physical_id)
        prop, kind = self.api.parent
        parent: CloudObject | None = await call_activity(
            CloudObjectActivities.find_cloud_object, CloudRef(kind=kind, id=str(props[prop]))
        )
        if parent is None:
            return None
        return CloudRef(kind=self.api.kind, id=physical_id, parent=parent.id)

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create the object (names looked up), then wait until it is ready."""
        request = self.api.body(props, physical_name(ctx.parent().name, name, resource_id))
        create = CloudCreate(
            kind=self.api.kind,
            body=request.body,
            lookups=request.lookups,
            request_id=resource_id,
            parent=self._parent_lookup(props),
        )
        made: CloudObject = await call_activity(CloudObjectActivities.create_cloud_object, create)
        return self.applied(await self.ready(made))

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Send the changed fields; nothing when no field of the object changes."""
        if not current.physical_id:
            return unchanged(current)
        name = physical_name(ctx.parent().name, current.name, current.resource_id)
        request = self.api.update_request(current.resolved, props, name)
        if not request.body:
            return unchanged(current)
        ref = await self.ref(current.physical_id, current.resolved)
        if ref is None:
            raise ResourceFailed(f"{self.api.kind} {current.physical_id} no longer exists")
        update = CloudUpdate(ref=ref, changes=request.body, lookups=request.lookups)
        updated: CloudObject = await call_activity(
            CloudObjectActivities.update_cloud_object, update
        )
        return self.applied(await self.ready(updated))

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Delete the object and wait until it is gone."""
        if not physical_id:
            return
        ref = await self.ref(physical_id, props)
        if ref is None:
            return  # what it lived under is gone, and it with it
        await call_activity(CloudObjectActivities.delete_cloud_object, ref)
        await call_activity(
            CloudObjectActivities.wait_cloud_object_deleted, ref, timeout_s=30, poll=True
        )

    async def check(self, ctx: NestedContext, current: ResourceState) -> None:
        """The object exists, and is not in a failed status."""
        if not current.physical_id:
            raise ResourceFailed(f"{self.api.rtype.name} was never created")
        ref = await self.ref(current.physical_id, current.resolved)
        found: CloudObject | None = (
            None
            if ref is None
            else await call_activity(CloudObjectActivities.show_cloud_object, ref)
        )
        if found is None:
            raise ResourceFailed(f"{self.api.kind} {current.physical_id} no longer exists")
        status = str(found.body.get(self.api.status_field, ""))
        if status in self.api.failed:
            raise ResourceFailed(f"{self.api.kind} {current.physical_id} is {status}")
