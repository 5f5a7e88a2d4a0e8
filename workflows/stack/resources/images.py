"""`OS::Glance::WebImage`: create the image record, import its URL, wait for `active`;
then its members and, with `active: false`, Glance's deactivate (Heat's order)."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from domain.cloud_objects import CloudAction, CloudCreate, CloudObject, CloudRef, CloudUpdate
    from domain.stack.state import LockLevel, ResourceState, StackLock
    from domain.stack.types.api_object import physical_name
    from domain.stack.types.glance import web_image
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.api_object import ApiObjectHandler
    from workflows.stack.resources.base import Applied, ResourceFailed, call_activity


class WebImageHandler(ApiObjectHandler):
    """An image Glance downloads from `location` (`web-download` import)."""

    def __init__(self) -> None:
        super().__init__(web_image.API)

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create the image, start its import unless it is past `queued`, wait."""
        request = self.api.body(props, physical_name(ctx.parent().name, name, resource_id))
        create = CloudCreate(
            kind="image", body=request.body, lookups=request.lookups, request_id=resource_id
        )
        made: CloudObject = await call_activity(CloudObjectActivities.create_cloud_object, create)
        if made.body.get("status") == "queued":
            action = CloudAction(
                ref=made.ref(),
                method="POST",
                suffix="/import",
                body=web_image.import_request(props).body,
                tolerate=(409,),
            )
            try:
                await call_activity(CloudObjectActivities.act_on_cloud_object, action)
            except ResourceFailed as err:
                raise ResourceFailed(err.reason, made.id) from err
        ready = await self.ready(made)
        if not workflow.patched("image-members-and-active-at-create"):
            return self.applied(ready)
        try:
            changed = await self._share(made.id, list(props.get("members") or []), [])
            changed |= await self._activate(made.id, web_image.activation(None, props))
        except ResourceFailed as err:
            raise ResourceFailed(err.reason, made.id) from err
        return self.applied(await self._shown(made.id) if changed else ready)

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Heat's order: deactivate first, the image's fields, its members, and
        reactivate last."""
        if not current.physical_id:
            return await super().update(ctx, current, props)
        image_id, before = current.physical_id, current.resolved
        flip = web_image.activation(before, props)
        changed = await self._activate(image_id, flip if flip == "deactivate" else None)
        applied = await super().update(ctx, current, props)
        added, removed = web_image.member_changes(before, props)
        changed |= await self._share(image_id, added, removed)
        changed |= await self._activate(image_id, flip if flip == "reactivate" else None)
        return self.applied(await self._shown(image_id)) if changed else applied

    async def _share(self, image_id: str, added: list[str], removed: list[str]) -> bool:
        """Members added (one there already counts) and removed (one gone counts)."""
        ref = CloudRef(kind="image", id=image_id)
        for member in added:
            action = CloudAction(
                ref=ref, method="POST", suffix="/members", body={"member": member},
                tolerate=(409,),
            )  # fmt: skip
            await call_activity(CloudObjectActivities.act_on_cloud_object, action)
        for member in removed:
            action = CloudAction(
                ref=ref, method="DELETE", suffix=f"/members/{member}", tolerate=(404,)
            )
            await call_activity(CloudObjectActivities.act_on_cloud_object, action)
        return bool(added or removed)

    async def _activate(self, image_id: str, action_name: str | None) -> bool:
        """Glance's deactivate or reactivate (each is a no-op when already done)."""
        if action_name is None:
            return False
        action = CloudAction(
            ref=CloudRef(kind="image", id=image_id),
            method="POST",
            suffix=f"/actions/{action_name}",
        )
        await call_activity(CloudObjectActivities.act_on_cloud_object, action)
        return True

    async def _shown(self, image_id: str) -> CloudObject:
        shown: CloudObject | None = await call_activity(
            CloudObjectActivities.show_cloud_object, CloudRef(kind="image", id=image_id)
        )
        if shown is None:
            raise ResourceFailed(f"image {image_id} no longer exists", image_id)
        return shown

    async def lock(
        self, ctx: NestedContext, current: ResourceState, lock: StackLock | None
    ) -> None:
        """Level "all" protects the image (Glance refuses to delete it); lower levels and
        unlock give it back the `protected` flag its template asks for."""
        if lock is not None and lock.level == LockLevel.ALL:
            await self._protect(current, True)
        else:
            await self.unlock(ctx, current)

    async def unlock(self, ctx: NestedContext, current: ResourceState) -> None:
        """The image's own `protected` property again."""
        await self._protect(current, bool(current.resolved.get("protected")))

    def has_lock_state(self, current: ResourceState) -> bool:
        """A created image is locked and unlocked."""
        return bool(current.physical_id)

    async def _protect(self, current: ResourceState, protected: bool) -> None:
        if not current.physical_id:
            return
        update = CloudUpdate(
            ref=CloudRef(kind="image", id=current.physical_id), changes={"protected": protected}
        )
        await call_activity(CloudObjectActivities.update_cloud_object, update)
