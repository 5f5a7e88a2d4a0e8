"""`OS::Nova::Server` through the idempotent compute activities.

A retried create finds the server its first attempt made, by request id (the
resource id). Suspend pauses, lock level "all" locks the server in Nova.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from activities.compute import ComputeActivities
    from activities.recovery import RecoveryActivities
    from activities.software_configs import SoftwareConfigActivities
    from domain.cloud_objects import CloudAction, CloudObject, CloudRef
    from domain.cluster.recovery import RebuildRequest
    from domain.server_networks import attachable_in_place, reduced
    from domain.servers import (
        REQUEST_ID_KEY,
        LockServerRequest,
        NetworkRequest,
        ResizeRequest,
        ServerInfo,
        ServerNetworksUpdate,
        ServerPasswordRequest,
        ServerRequest,
        ServerTagsRequest,
    )
    from domain.stack.state import LockLevel, ResourceState, StackLock
    from domain.stack.types.server import (
        names_config,
        needs_rebuild,
        server_attributes,
        server_request,
        user_ports,
    )
    from domain.stack.types.software_config import ConfigRef, SoftwareConfig
    from workflows.stack.nested import NestedContext
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
        unchanged,
    )


async def _with_config(ctx: NestedContext, props: dict[str, Any]) -> dict[str, Any]:
    """The properties with the config `user_data` names in its place (Heat's
    `get_software_config`: a uuid that names no config is sent as it is)."""
    ref = ConfigRef(project_id=ctx.parent().project_id, id=str(props["user_data"]))
    found: SoftwareConfig | None = await call_activity(
        SoftwareConfigActivities.show_software_config, ref
    )
    if found is None or found.config is None:
        return props
    config = found.config
    return props | {"user_data": config if isinstance(config, str) else json.dumps(config)}


def _applied(info: ServerInfo) -> Applied:
    return Applied(
        physical_id=info.physical_id, reference=info.physical_id, attributes=server_attributes(info)
    )


async def _wait_active(physical_id: str) -> ServerInfo:
    info: ServerInfo = await call_activity(
        ComputeActivities.wait_server_active, physical_id, timeout_s=30, poll=True
    )
    return info


async def _resize(physical_id: str, flavor: str) -> None:
    """Heat's RESIZE: resize, wait for VERIFY_RESIZE, confirm."""
    request = ResizeRequest(physical_id=physical_id, flavor=flavor)
    if await call_activity(RecoveryActivities.resize_server, request):
        await call_activity(
            ComputeActivities.wait_server_resized, physical_id, timeout_s=30, poll=True
        )
        await call_activity(RecoveryActivities.confirm_server_resize, physical_id)


class ServerHandler(ResourceHandler):
    """A Nova server."""

    pure: ClassVar[bool] = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Create the server and wait until it is ACTIVE."""
        spec = ctx.parent()
        if names_config(props):
            props = await _with_config(ctx, props)
        request = server_request(spec.name, spec.stack_id, name, props, resource_id)
        try:
            created: ServerInfo = await call_activity(ComputeActivities.create_server, request)
        except ResourceFailed as err:
            if not workflow.patched("adopt-after-failed-create"):
                raise
            raise ResourceFailed(err.reason, await _lost_server(request)) from err
        if created.status.upper() == "ACTIVE" and workflow.patched("server-active-at-create"):
            return _applied(created)  # no need to wait for what is already there
        try:
            active = await _wait_active(created.physical_id)
        except ResourceFailed as err:
            raise ResourceFailed(err.reason, created.physical_id) from err
        return _applied(active)

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """What changed, in Heat's order: tags, a resize (confirmed once Nova has it), a
        rebuild for a new image or else a new password, a new name or metadata, then
        the interfaces; other updatable changes need no call."""
        pid = current.physical_id
        if not pid:
            return unchanged(current)
        before = current.resolved
        calls = _in_place_calls(ctx, current, props)
        networks = _networks_update(current, props)
        changed = [k for k in ("tags", "flavor", "admin_pass") if before.get(k) != props.get(k)]
        rebuild = needs_rebuild(before, props)
        if not (calls or networks or changed or rebuild):
            return unchanged(current)
        if "tags" in changed:
            tags = tuple(str(t) for t in props.get("tags") or ())
            retagged = ServerTagsRequest(physical_id=pid, tags=tags)
            await call_activity(RecoveryActivities.set_server_tags, retagged)
        if "flavor" in changed:
            await _resize(pid, str(props["flavor"]))
        if rebuild:
            user_data = None
            if props.get("user_data_update_policy") == "REBUILD" and props.get(
                "user_data"
            ) != before.get("user_data"):
                sent = await _with_config(ctx, props) if names_config(props) else props
                user_data = str(sent.get("user_data") or "")
            request = RebuildRequest(
                physical_id=pid, image=str(props["image"]), user_data=user_data
            )
            await call_activity(RecoveryActivities.rebuild_server, request)
        elif "admin_pass" in changed and props.get("admin_pass"):
            password = ServerPasswordRequest(physical_id=pid, admin_pass=props["admin_pass"])
            await call_activity(RecoveryActivities.change_server_password, password)
        for call in calls:
            await call_activity(CloudObjectActivities.act_on_cloud_object, call)
        if networks is not None:
            await call_activity(ComputeActivities.update_server_networks, networks)
        return _applied(await _wait_active(pid))

    async def prepare_for_replace(self, ctx: NestedContext, old: ResourceState) -> None:
        """Detach the ports the template gave the old server, so its replacement can
        bind them (Heat detaches them the same way before it replaces a server)."""
        if not old.physical_id:
            return
        for port in user_ports(old.resolved):
            found: CloudObject | None = await call_activity(
                CloudObjectActivities.find_cloud_object, CloudRef(kind="port", id=port)
            )
            if found is None:
                continue
            detach = CloudAction(
                ref=CloudRef(kind="server", id=old.physical_id),
                method="DELETE",
                suffix=f"/os-interface/{found.id}",
                tolerate=(404,),
            )
            await call_activity(CloudObjectActivities.act_on_cloud_object, detach)

    async def delete(
        self, ctx: NestedContext, physical_id: str | None, props: dict[str, Any]
    ) -> None:
        """Unlock (a locked server cannot be deleted), delete, wait until gone."""
        if not physical_id:
            return
        await call_activity(RecoveryActivities.unlock_server, physical_id)
        await call_activity(ComputeActivities.delete_server, physical_id)
        await call_activity(
            ComputeActivities.wait_server_deleted, physical_id, timeout_s=30, poll=True
        )

    async def check(self, ctx: NestedContext, current: ResourceState) -> None:
        """The server exists and is ACTIVE."""
        pid = current.physical_id
        if not pid:
            raise ResourceFailed("Server was never created")
        statuses = await call_activity(ComputeActivities.get_server_statuses, [pid])
        status = statuses.statuses.get(pid)
        if status is None:
            raise ResourceFailed(f"Server {pid} no longer exists")
        if status.upper() != "ACTIVE":
            raise ResourceFailed(f"Server {pid} is {status.upper()}, not ACTIVE")

    async def suspend(self, ctx: NestedContext, current: ResourceState) -> None:
        """Pause the server."""
        if current.physical_id:
            await call_activity(RecoveryActivities.pause_server, current.physical_id)

    async def resume(self, ctx: NestedContext, current: ResourceState) -> None:
        """Unpause the server."""
        if current.physical_id:
            await call_activity(RecoveryActivities.unpause_server, current.physical_id)

    async def lock(
        self, ctx: NestedContext, current: ResourceState, lock: StackLock | None
    ) -> None:
        """Level "all" locks the server in Nova; a lower level leaves (or makes) it unlocked."""
        if not current.physical_id:
            return
        if lock is not None and lock.level == LockLevel.ALL:
            reason = lock.server_reason(ctx.parent().name)
            await call_activity(
                RecoveryActivities.lock_server,
                LockServerRequest(physical_id=current.physical_id, reason=reason),
            )
        else:
            await call_activity(RecoveryActivities.unlock_server, current.physical_id)

    async def unlock(self, ctx: NestedContext, current: ResourceState) -> None:
        """Unlock the server in Nova."""
        if current.physical_id:
            await call_activity(RecoveryActivities.unlock_server, current.physical_id)

    def has_lock_state(self, current: ResourceState) -> bool:
        """A created server is locked and unlocked."""
        return bool(current.physical_id)


async def _lost_server(request: ServerRequest) -> str | None:
    """The server a create made though every attempt failed (its answer lost), if any:
    named on the failed resource, the stack's delete or next update removes it."""
    try:
        found: ServerInfo | None = await call_activity(
            ComputeActivities.find_created_server, request
        )
    except ResourceFailed:
        return None
    return found.physical_id if found is not None else None


def _in_place_calls(
    ctx: NestedContext, current: ResourceState, props: dict[str, Any]
) -> list[CloudAction]:
    """Nova's rename and metadata calls for what changed. The metadata replaces the
    server's whole set, so it carries Warden's own keys (stack, resource, request id)."""
    assert current.physical_id is not None
    spec = ctx.parent()
    before, after = (
        server_request(spec.name, spec.stack_id, current.name, p, current.resource_id)
        for p in (current.resolved, props)
    )
    server = CloudRef(kind="server", id=current.physical_id)
    calls = []
    if after.name != before.name:
        calls.append(CloudAction(ref=server, suffix="", body={"server": {"name": after.name}}))
    if after.metadata != before.metadata:
        metadata = after.metadata | {REQUEST_ID_KEY: current.resource_id}
        calls.append(CloudAction(ref=server, suffix="/metadata", body={"metadata": metadata}))
    return calls


def _networks_update(current: ResourceState, props: dict[str, Any]) -> ServerNetworksUpdate | None:
    """The interface update of a server whose `networks` changed (in place only for the
    NICs `attachable_in_place` allows: the plan replaced the server otherwise)."""
    before, after = current.resolved.get("networks"), props.get("networks")
    if before == after or not (attachable_in_place(before) and attachable_in_place(after)):
        return None
    assert current.physical_id is not None
    old, new = (
        tuple(NetworkRequest(**reduced(nic)) for nic in nics or ()) for nics in (before, after)
    )
    digest = hashlib.sha256(json.dumps([n.model_dump() for n in new]).encode()).hexdigest()
    return ServerNetworksUpdate(
        physical_id=current.physical_id,
        old=old,
        new=new,
        request_id=f"{current.resource_id}-nics-{digest[:12]}",
    )
