"""Server actions: the steps a health policy tries on a failed node's server, and the
pause / lock steps of stack suspend and lock (level `all`).

Each step is idempotent, so Temporal's retries are safe: a server already doing what
was asked (rebooting, powering on, …) or already in the goal state counts as done.

| outcome                                             | raised (ApplicationError type) | retried |
|-----------------------------------------------------|--------------------------------|---------|
| cloud API down, 5xx, timeout                        | BackendUnavailable             | yes     |
| 409 while another task runs on the server           | ServerBusy                     | yes     |
| 409 otherwise (locked, a state the action forbids)  | BackendConflict                | no      |
| unknown server                                      | BackendNotFound                | no      |
| fencing not confirmed within `timeout_s`            | FencingTimeout                 | yes     |
| `wait_server_healthy` while the server is changing  | ServerNotReady                 | yes     |
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cloud.collections import CollectionClient, collection
from activities.cloud.compute import ComputeClient, Server
from activities.errors import application_error
from activities.server_boot import IdCache, find_id
from activities.server_networking import release_owned
from domain.cluster.health import FenceRequest
from domain.cluster.recovery import (
    RebootRequest,
    RebuildRequest,
    effective_reboot_type,
    in_transition,
)
from domain.errors import BackendConflict, BackendNotFound, WardenError
from domain.servers import (
    WARDEN_KEY_PREFIX,
    LockServerRequest,
    ResizeRequest,
    ServerMetadataRequest,
    ServerPasswordRequest,
    ServerTagsRequest,
)

#: Fencing polls the server with this backoff (seconds).
FIRST_POLL_S = 0.25
MAX_POLL_S = 2.0

Done = Callable[[Server], bool]
#: Statuses of a server whose resize is under way or waiting to be confirmed.
_RESIZING = frozenset({"RESIZE", "VERIFY_RESIZE"})


def _busy(server: Server) -> bool:
    return in_transition(server.status, server.task_state)


def _describe(server: Server) -> str:
    task = f", task {server.task_state}" if server.task_state else ""
    return f"{server.status.upper()}{task}"


class RecoveryActivities:
    """Recovery steps over one long-lived compute client (Glance to find images)."""

    def __init__(self, compute: ComputeClient, objects: CollectionClient) -> None:
        self._compute = compute
        self._objects = objects
        self._ids = IdCache()

    async def _get(self, physical_id: str) -> Server:
        try:
            return await self._compute.get_server(physical_id)
        except WardenError as err:
            raise application_error(err) from err

    async def _act(self, physical_id: str, call: Awaitable[object], done: Done) -> None:
        """Run a server action; a 409 is fine when the server is already `done`."""
        try:
            await call
        except BackendConflict as err:
            server = await self._get(physical_id)
            if done(server):
                return
            if _busy(server):
                raise ApplicationError(
                    f"Server {physical_id} is busy ({_describe(server)}): {err.message}",
                    type="ServerBusy",
                ) from err
            raise application_error(err) from err
        except WardenError as err:
            raise application_error(err) from err

    @activity.defn(name="reboot_server")
    async def reboot_server(self, request: RebootRequest) -> str:
        """Reboot a server; returns the reboot type used (SOFT becomes HARD unless ACTIVE)."""
        pid = request.physical_id
        server = await self._get(pid)
        reboot_type = effective_reboot_type(request.type, server.status)
        await self._act(
            pid,
            self._compute.reboot(pid, reboot_type.value),
            lambda s: s.status.upper() in ("REBOOT", "HARD_REBOOT"),
        )
        activity.logger.info("Reboot %s of server %s requested", reboot_type, pid)
        return reboot_type.value

    @activity.defn(name="rebuild_server")
    async def rebuild_server(self, request: RebuildRequest) -> None:
        """Rebuild a server from its image (or `request.image`, a name or an id)."""
        pid = request.physical_id
        image = request.image
        if image:
            try:
                image = await find_id(self._objects, "image", image, self._ids)
            except WardenError as err:
                raise application_error(err) from err
        await self._act(
            pid,
            self._compute.rebuild(pid, image, request.user_data),
            lambda s: s.status.upper() == "REBUILD",
        )
        activity.logger.info("Rebuild of server %s requested", pid)

    @activity.defn(name="resize_server")
    async def resize_server(self, request: ResizeRequest) -> bool:
        """Ask Nova to resize the server to `request.flavor` (a name or an id).

        True when a resize is under way or waiting to be confirmed (a retry finds its
        own), False when the server is on that flavor already (nothing to confirm)."""
        pid = request.physical_id
        try:
            flavor = await self._objects.find(collection("flavor"), request.flavor)
        except WardenError as err:
            raise application_error(err) from err
        server = await self._get(pid)
        if server.status.upper() in _RESIZING:
            return True
        if server.flavor in (flavor.get("name"), flavor.get("id")):
            return False
        await self._act(
            pid,
            self._compute.resize(pid, str(flavor["id"])),
            lambda s: s.status.upper() in _RESIZING,
        )
        activity.logger.info("Resize of server %s to %s requested", pid, flavor.get("name"))
        return True

    @activity.defn(name="confirm_server_resize")
    async def confirm_server_resize(self, physical_id: str) -> None:
        """Confirm a resize waiting in VERIFY_RESIZE; one confirmed already is fine."""
        await self._act(
            physical_id,
            self._compute.confirm_resize(physical_id),
            lambda s: s.status.upper() in ("ACTIVE", "SHUTOFF") and s.vm_state != "resized",
        )

    @activity.defn(name="change_server_password")
    async def change_server_password(self, request: ServerPasswordRequest) -> None:
        """Set the server's administrator password (setting it twice is harmless)."""
        await self._act(
            request.physical_id,
            self._compute.change_password(request.physical_id, request.admin_pass),
            lambda s: False,
        )

    @activity.defn(name="update_server_metadata")
    async def update_server_metadata(self, request: ServerMetadataRequest) -> None:
        """Replace the server's metadata with `request.metadata`; Warden's own keys
        (cluster, node, request id) stay, so the server is still traced to its node."""
        pid = request.physical_id
        server = await self._get(pid)
        kept = {k: v for k, v in server.metadata.items() if k.startswith(WARDEN_KEY_PREFIX)}
        call = self._compute.set_metadata(pid, request.metadata | kept)
        await self._act(pid, call, lambda s: False)

    @activity.defn(name="set_server_tags")
    async def set_server_tags(self, request: ServerTagsRequest) -> None:
        """Replace the server's tags (idempotent: the same tags again change nothing)."""
        await self._act(
            request.physical_id,
            self._compute.set_tags(request.physical_id, list(request.tags)),
            lambda s: False,
        )

    @activity.defn(name="start_server")
    async def start_server(self, physical_id: str) -> None:
        """Power a server on; one that is already ACTIVE or powering on is fine."""
        await self._act(
            physical_id,
            self._compute.start(physical_id),
            lambda s: s.status.upper() == "ACTIVE" or s.task_state == "powering-on",
        )

    @activity.defn(name="stop_server")
    async def stop_server(self, physical_id: str) -> None:
        """Power a server off (Senlin's `stop` operation); one already SHUTOFF or powering
        off is fine."""
        await self._act(
            physical_id,
            self._compute.stop(physical_id),
            lambda s: s.status.upper() == "SHUTOFF" or s.task_state == "powering-off",
        )

    @activity.defn(name="unpause_server")
    async def unpause_server(self, physical_id: str) -> None:
        """Unpause a server; one that is already ACTIVE or unpausing is fine."""
        await self._act(
            physical_id,
            self._compute.unpause(physical_id),
            lambda s: s.status.upper() == "ACTIVE" or s.task_state == "unpausing",
        )

    @activity.defn(name="pause_server")
    async def pause_server(self, physical_id: str) -> None:
        """Pause a server (stack suspend); one already PAUSED or pausing is fine."""
        await self._act(
            physical_id,
            self._compute.pause(physical_id),
            lambda s: s.status.upper() == "PAUSED" or s.task_state == "pausing",
        )

    @activity.defn(name="lock_server")
    async def lock_server(self, request: LockServerRequest | str) -> None:
        """Lock a server (stack lock, level `all`) with its reason; locking twice is
        harmless. A bare server id is what workflows sent before reasons were."""
        if isinstance(request, str):
            request = LockServerRequest(physical_id=request)
        pid = request.physical_id
        await self._act(pid, self._compute.lock(pid, request.reason), lambda s: s.locked)

    @activity.defn(name="unlock_server")
    async def unlock_server(self, physical_id: str) -> None:
        """Unlock a server; one already unlocked or gone counts as unlocked."""
        try:
            await self._act(physical_id, self._compute.unlock(physical_id), lambda s: not s.locked)
        except ApplicationError as err:
            if err.type != "BackendNotFound":
                raise

    @activity.defn(name="fence_server")
    async def fence_server(self, request: FenceRequest) -> str:
        """Delete or power off a server and confirm it; returns "DELETED" or "SHUTOFF".

        Raises a retryable `FencingTimeout` when it is not confirmed within `timeout_s`.
        """
        pid = request.physical_id
        deadline = time.monotonic() + request.timeout_s
        delay = FIRST_POLL_S
        seen = "not yet read"
        while True:
            try:
                server = await self._find(pid)
                if server is None:
                    return "DELETED"
                seen = _describe(server)
                if not request.delete and server.status.upper() == "SHUTOFF" and not _busy(server):
                    return "SHUTOFF"
                if not _busy(server) and server.status.upper() != "DELETED":
                    await self._fence_step(server, delete=request.delete)
            except ApplicationError as err:
                # A flaky cloud (5xx, timeouts) must not end the fence early: keep
                # asking until the deadline. Permanent refusals still end it at once.
                if err.non_retryable:
                    raise
                seen = f"unknown ({err.message})"
            activity.heartbeat(f"fencing server {pid}: {seen}")
            left = deadline - time.monotonic()
            if left <= 0:
                goal = "gone" if request.delete else "SHUTOFF"
                raise ApplicationError(
                    f"Server {pid} is still {seen}, not {goal}, after {request.timeout_s}s",
                    type="FencingTimeout",
                )
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, MAX_POLL_S)

    async def _find(self, physical_id: str) -> Server | None:
        try:
            return await self._compute.get_server(physical_id)
        except BackendNotFound:
            return None
        except WardenError as err:
            raise application_error(err) from err

    async def _fence_step(self, server: Server, *, delete: bool) -> None:
        """Ask for deletion or power-off (again: a lost or refused request is repeated)."""
        try:
            if delete:
                await self._compute.delete_server(server.id)
                await release_owned(self._objects, server.id)
            else:
                await self._compute.stop(server.id)
        except BackendConflict as err:
            if server.locked:
                # Someone locked it on purpose; only they can let it be fenced.
                raise application_error(err) from err
            # e.g. PAUSED cannot be stopped: keep polling, the timeout reports it.
            activity.logger.warning("Fencing server %s refused: %s", server.id, err.message)
        except BackendNotFound:
            return
        except WardenError as err:
            raise application_error(err) from err

    @activity.defn(name="wait_server_healthy")
    async def wait_server_healthy(self, physical_id: str) -> str:
        """The server's status once it has settled ("DELETED" when gone).

        Raises a retryable `ServerNotReady` while it is in transition; the workflow
        re-probes with the policy's detection after this returns.
        """
        server = await self._find(physical_id)
        if server is None:
            return "DELETED"
        if _busy(server):
            raise ApplicationError(
                f"Server {physical_id} is {_describe(server)}", type="ServerNotReady"
            )
        return server.status.upper()
