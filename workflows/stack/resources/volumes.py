"""`OS::Cinder::Volume` (grown with `os-extend`) and `OS::Cinder::VolumeAttachment`
(Nova's `os-volume_attachments`, waiting for the volume to be in use)."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from domain.cloud_objects import CloudAction, CloudObject, CloudRef, CloudWait
    from domain.stack.state import ResourceState
    from domain.stack.types.cinder import volume
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.api_object import ApiObjectHandler
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
    )


async def _wait_volume(volume_id: str, ready: tuple[str, ...]) -> CloudObject:
    wait = CloudWait(ref=CloudRef(kind="volume", id=volume_id), ready=ready, failed=volume.FAILED)
    found: CloudObject = await call_activity(
        CloudObjectActivities.wait_cloud_object, wait, timeout_s=30, poll=True
    )
    return found


async def _act(volume_id: str, body: dict[str, Any]) -> None:
    """A Cinder volume action, then the wait until the volume is usable again."""
    action = CloudAction(
        ref=CloudRef(kind="volume", id=volume_id), method="POST", suffix="/action", body=body
    )
    await call_activity(CloudObjectActivities.act_on_cloud_object, action)
    await _wait_volume(volume_id, ("available", "in-use"))


class VolumeHandler(ApiObjectHandler):
    """A Cinder volume: name, description and metadata in place, a bigger size extends,
    a new type retypes, a new read-only flag is set (the volume detached meanwhile)."""

    def __init__(self) -> None:
        super().__init__(volume.API)

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create; once available, its read-only flag, as Heat's `check_create_complete`
        sets it (Cinder takes it only from an available volume)."""
        applied = await super().create(ctx, name, props, resource_id)
        flag = props.get("read_only")
        if (
            flag is not None
            and applied.physical_id
            and workflow.patched(volume.READ_ONLY_AT_CREATE)
        ):
            await _act(applied.physical_id, _readonly(bool(flag)))
        return applied

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Extend first (Cinder grows an available volume), then retype (Heat's
        `migration_policy: never`), then the read-only flag, then the other fields."""
        size = volume.extend_to(current.resolved, props)
        if current.physical_id and size is not None:
            await _act(current.physical_id, {"os-extend": {"new_size": size}})
        new_type = volume.retype_to(current.resolved, props)
        if current.physical_id and new_type is not None:
            retype = {"new_type": new_type, "migration_policy": "never"}
            await _act(current.physical_id, {"os-retype": retype})
        flag = volume.read_only_to(current.resolved, props)
        if current.physical_id and flag is not None:
            await _set_read_only(current.physical_id, flag)
        return await super().update(ctx, current, props)


def _readonly(flag: bool) -> dict[str, Any]:
    return {"os-update_readonly_flag": {"readonly": flag}}


async def _set_read_only(volume_id: str, flag: bool) -> None:
    """Heat's access-mode update: detach the volume from each server, set the flag on
    the available volume, attach it again at the same device."""
    shown: CloudObject | None = await call_activity(
        CloudObjectActivities.show_cloud_object, CloudRef(kind="volume", id=volume_id)
    )
    attached = [a for a in (shown.body.get("attachments") if shown else None) or () if a]
    for entry in attached:
        await _detach(str(entry["server_id"]), volume_id)
    if attached:
        await _wait_volume(volume_id, ("available",))
    await _act(volume_id, _readonly(flag))
    for entry in attached:
        device = {"device": entry["device"]} if entry.get("device") else {}
        action = CloudAction(
            ref=CloudRef(kind="server", id=str(entry["server_id"])),
            method="POST",
            suffix="/os-volume_attachments",
            body={"volumeAttachment": {"volumeId": volume_id, **device}},
        )
        await call_activity(CloudObjectActivities.act_on_cloud_object, action)
    if attached:
        await _wait_volume(volume_id, ("in-use",))


async def _detach(server_id: str, volume_id: str) -> None:
    action = CloudAction(
        ref=CloudRef(kind="server", id=server_id),
        method="DELETE",
        suffix=f"/os-volume_attachments/{volume_id}",
        tolerate=(404,),
    )
    await call_activity(CloudObjectActivities.act_on_cloud_object, action)


class VolumeAttachmentHandler(ResourceHandler):
    """Attach a volume to a server; delete detaches and waits for `available`."""

    pure = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Attach, then wait until Cinder shows the volume in use."""
        request = volume.attachment_request(props)
        action = CloudAction(
            ref=CloudRef(kind="server", id=str(props["instance_uuid"])),
            method="POST",
            suffix="/os-volume_attachments",
            body=request.body,
            lookups=request.lookups,
            find_target=True,
        )
        done: dict[str, Any] = await call_activity(
            CloudObjectActivities.act_on_cloud_object, action
        )
        attachment = (done.get("answer") or {}).get("volumeAttachment") or {}
        volume_id = str(attachment.get("volumeId") or "")
        if not volume_id:
            raise ResourceFailed("Nova attached the volume without saying which")
        try:
            await _wait_volume(volume_id, ("in-use",))
        except ResourceFailed as err:
            raise ResourceFailed(err.reason, f"{done['target']}:{volume_id}") from err
        rid = f"{done['target']}:{volume_id}"
        return Applied(physical_id=rid, reference=rid, attributes={"show": attachment})

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Detach from the old server, attach as the new properties say (Heat's way)."""
        await self.delete(ctx, current.physical_id, current.resolved)
        return await self.create(ctx, current.name, props, current.resource_id)

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Detach (gone already is fine), then wait until the volume is available."""
        if not physical_id or ":" not in physical_id:
            return
        server_id, volume_id = physical_id.split(":", 1)
        await _detach(server_id, volume_id)
        shown: CloudObject | None = await call_activity(
            CloudObjectActivities.show_cloud_object, CloudRef(kind="volume", id=volume_id)
        )
        if shown is not None:
            await _wait_volume(volume_id, ("available",))
