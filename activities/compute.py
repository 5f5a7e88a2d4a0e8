"""Compute activities: servers for cluster nodes and stack resources."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cloud.compute import ComputeClient
from domain.errors import BackendNotFound, WardenError
from domain.servers import ServerInfo, ServerRequest, ServerStatuses

#: Server statuses from which waiting for ACTIVE is pointless.
_DEAD_END = frozenset({"ERROR", "DELETED", "SHUTOFF"})


class ServerNotReady(Exception):
    """Raised while a server is still building; Temporal retries the activity."""


def _to_application_error(error: WardenError) -> ApplicationError:
    # Translated once here: Temporal retries only what the domain calls retryable.
    return ApplicationError(
        error.message, type=type(error).__name__, non_retryable=not error.retryable
    )


class ComputeActivities:
    """Activities over one long-lived compute client."""

    def __init__(self, compute: ComputeClient) -> None:
        self._compute = compute

    @activity.defn(name="create_server")
    async def create_server(self, request: ServerRequest) -> ServerInfo:
        """Create a server, or find the one a previous attempt created."""
        try:
            server = await self._compute.create_server(
                name=request.name,
                image=request.image,
                flavor=request.flavor,
                metadata=request.metadata,
                request_id=request.request_id,
            )
        except WardenError as err:
            raise _to_application_error(err) from err
        return ServerInfo(
            physical_id=server.id, name=server.name, status=server.status, locked=server.locked
        )

    @activity.defn(name="find_created_server")
    async def find_created_server(self, request: ServerRequest) -> ServerInfo | None:
        """The server a create with this request made, if any (after every attempt failed:
        the last POST may have landed with its answer lost)."""
        try:
            server = await self._compute.find_server(request.name, request.request_id)
        except WardenError as err:
            raise _to_application_error(err) from err
        if server is None:
            return None
        return ServerInfo(
            physical_id=server.id, name=server.name, status=server.status, locked=server.locked
        )

    @activity.defn(name="wait_server_active")
    async def wait_server_active(self, physical_id: str) -> ServerInfo:
        """Return once the server is ACTIVE; retried by Temporal while it builds."""
        try:
            server = await self._compute.get_server(physical_id)
        except WardenError as err:
            raise _to_application_error(err) from err
        status = server.status.upper()
        if status in _DEAD_END:
            raise ApplicationError(
                f"Server {physical_id} went to {status} instead of ACTIVE",
                type="BackendError",
                non_retryable=True,
            )
        if status != "ACTIVE":
            raise ServerNotReady(f"Server {physical_id} is {status}")
        return ServerInfo(
            physical_id=server.id, name=server.name, status=status, locked=server.locked
        )

    @activity.defn(name="delete_server")
    async def delete_server(self, physical_id: str) -> None:
        """Delete a server; one that is already gone counts as deleted."""
        try:
            await self._compute.delete_server(physical_id)
        except BackendNotFound:
            return
        except WardenError as err:
            raise _to_application_error(err) from err

    @activity.defn(name="wait_server_deleted")
    async def wait_server_deleted(self, physical_id: str) -> None:
        """Return once the compute API no longer knows the server."""
        try:
            server = await self._compute.get_server(physical_id)
        except BackendNotFound:
            return
        except WardenError as err:
            raise _to_application_error(err) from err
        raise ServerNotReady(f"Server {physical_id} is still {server.status}")

    @activity.defn(name="get_server_statuses")
    async def get_server_statuses(self, physical_ids: list[str]) -> ServerStatuses:
        """Status of many servers with one `detail` list call."""
        try:
            servers = await self._compute.list_servers()
        except WardenError as err:
            raise _to_application_error(err) from err
        by_id = {server.id: server.status for server in servers}
        return ServerStatuses(statuses={sid: by_id.get(sid) for sid in physical_ids})
