"""Compute activities: servers for cluster nodes and stack resources."""

from __future__ import annotations

import re
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cloud.collections import CollectionClient, collection
from activities.cloud.compute import ComputeClient, Server
from activities.errors import application_error
from activities.server_boot import IdCache, boot_extras, find_id, image_and_flavor
from activities.server_networking import (
    attach_floating_ips,
    own_ports,
    release_owned,
    update_networks,
)
from domain.cluster.server_details import details_error, flavor_name, server_details
from domain.errors import BackendConflict, BackendNotFound, WardenError
from domain.hot.cloud_lookups import AVAILABILITY_ZONE, FINDERS, ConstraintCheck
from domain.servers import ServerInfo, ServerNetworksUpdate, ServerRequest, ServerStatuses

#: Server statuses from which waiting for ACTIVE is pointless.
_DEAD_END = frozenset({"ERROR", "DELETED", "SHUTOFF"})


def server_info(
    server: Server, status: str, ports: list[dict[str, object]] | None = None
) -> ServerInfo:
    """What workflows keep of a server; with its `ports`, each address names its port
    (Heat's `_add_port_for_address`: matched by MAC)."""
    by_mac = {str(p.get("mac_address")): str(p.get("id")) for p in ports or ()}
    addresses = {
        net: [
            entry | {"port": by_mac[mac]}
            if (mac := str(entry.get("OS-EXT-IPS-MAC:mac_addr"))) in by_mac
            else entry
            for entry in entries
        ]
        for net, entries in server.address_entries.items()
    }
    return ServerInfo(
        physical_id=server.id,
        name=server.name,
        status=status,
        locked=server.locked,
        addresses=addresses,
        networks=server.addresses,
    )


class ServerNotReady(Exception):
    """Raised while a server is still building; Temporal retries the activity."""


class ComputeActivities:
    """Activities over one long-lived compute client (and Glance, Neutron, Cinder, to
    look names up)."""

    def __init__(self, compute: ComputeClient, objects: CollectionClient) -> None:
        self._compute = compute
        self._objects = objects
        self._ids = IdCache()

    @activity.defn(name="create_server")
    async def create_server(self, request: ServerRequest) -> ServerInfo:
        """Create a server (names looked up), or find the one a previous attempt created."""
        try:
            image, flavor = await image_and_flavor(self._objects, request, self._ids)
            ports = await own_ports(self._objects, request)
            extra = await boot_extras(self._objects, request, ports)
            server = await self._compute.create_server(
                name=request.name,
                image=image,
                flavor=flavor,
                metadata=request.metadata,
                request_id=request.request_id,
                extra=extra,
                scheduler_hints=request.scheduler_hints,
            )
            if ports:
                await attach_floating_ips(self._objects, request, ports, server.id)
        except WardenError as err:
            raise application_error(err) from err
        active = server.status.upper() == "ACTIVE"
        device_ports = await self._device_ports(server.id) if active else None
        return server_info(server, server.status, device_ports)

    async def _device_ports(self, server_id: str) -> list[dict[str, object]] | None:
        """The server's ports, to name each address's port as Heat does; None when
        Neutron does not answer (the names are a detail: the server is ACTIVE, and a
        retry of the whole activity on a flaky cloud costs more than they are worth)."""
        try:
            return await self._objects.list(collection("port"), {"device_id": server_id})
        except WardenError as err:
            activity.logger.warning("Ports of server %s not listed: %s", server_id, err)
            return None

    @activity.defn(name="update_server_networks")
    async def update_server_networks(self, request: ServerNetworksUpdate) -> ServerInfo:
        """Change a server's interfaces in place (`update_networks`); the server after."""
        try:
            await update_networks(self._compute, self._objects, request)
            server = await self._compute.get_server(request.physical_id)
        except WardenError as err:
            raise application_error(err) from err
        return server_info(server, server.status, await self._device_ports(server.id))

    @activity.defn(name="find_created_server")
    async def find_created_server(self, request: ServerRequest) -> ServerInfo | None:
        """The server a create with this request made, if any (after every attempt failed:
        the last POST may have landed with its answer lost)."""
        try:
            server = await self._compute.find_server(request.name, request.request_id)
        except WardenError as err:
            raise application_error(err) from err
        if server is None:
            return None
        return server_info(server, server.status)

    @activity.defn(name="wait_server_active")
    async def wait_server_active(self, physical_id: str) -> ServerInfo:
        """Return once the server is ACTIVE; retried by Temporal while it builds."""
        try:
            server = await self._compute.get_server(physical_id)
        except WardenError as err:
            raise application_error(err) from err
        status = server.status.upper()
        if status in _DEAD_END:
            fault = f": {server.fault}" if server.fault else ""
            raise ApplicationError(
                f"Server {physical_id} went to {status} instead of ACTIVE{fault}",
                type="BackendError",
                non_retryable=True,
            )
        if status != "ACTIVE":
            raise ServerNotReady(f"Server {physical_id} is {status}")
        return server_info(server, status, await self._device_ports(physical_id))

    @activity.defn(name="wait_server_resized")
    async def wait_server_resized(self, physical_id: str) -> None:
        """Return once a resize waits to be confirmed (VERIFY_RESIZE), or has been (a
        cloud that confirms by itself); retried by Temporal while it runs."""
        try:
            server = await self._compute.get_server(physical_id)
        except WardenError as err:
            raise application_error(err) from err
        status = server.status.upper()
        if status == "VERIFY_RESIZE" or (status in ("ACTIVE", "SHUTOFF") and not server.task_state):
            return
        if status in ("ERROR", "DELETED"):
            fault = f": {server.fault}" if server.fault else ""
            raise ApplicationError(
                f"Resize of server {physical_id} failed: it went to {status}{fault}",
                type="BackendError",
                non_retryable=True,
            )
        raise ServerNotReady(f"Server {physical_id} is {status}")

    @activity.defn(name="delete_server")
    async def delete_server(self, physical_id: str) -> None:
        """Delete a server (and the ports and floating IPs Warden made for it); one that
        is already gone counts as deleted."""
        try:
            for duplicate in await self._duplicates(physical_id):
                await self._delete(duplicate)
            await self._delete(physical_id)
        except WardenError as err:
            raise application_error(err) from err

    async def _delete(self, physical_id: str) -> None:
        await self._compute.delete_server(physical_id)
        await release_owned(self._objects, physical_id)

    async def _duplicates(self, physical_id: str) -> list[str]:
        """Other live servers of the same create (same name and request id): a POST that
        answered after the client's timeout made one the retry never saw. Deleted first,
        so a retry after a crash still finds them through the server being deleted."""
        try:
            server = await self._compute.get_server(physical_id)
        except BackendNotFound:
            return []
        if server.request_id is None:
            return []
        return [
            other.id
            for other in await self._compute.list_servers(name=f"^{re.escape(server.name)}$")
            if other.id != physical_id
            and other.request_id == server.request_id
            and other.status.upper() != "DELETED"
        ]

    @activity.defn(name="wait_server_deleted")
    async def wait_server_deleted(self, physical_id: str) -> None:
        """Return once the compute API no longer knows the server."""
        try:
            server = await self._compute.get_server(physical_id)
        except BackendNotFound:
            return
        except WardenError as err:
            raise application_error(err) from err
        raise ServerNotReady(f"Server {physical_id} is still {server.status}")

    @activity.defn(name="check_cloud_constraints")
    async def check_cloud_constraints(self, checks: list[ConstraintCheck]) -> str | None:
        """The first check the cloud fails, in the words of the API that asked; None
        when all pass. Each (constraint, value) is looked up once, however many fields
        name it."""
        seen: dict[tuple[str, str], str | None] = {}
        try:
            for check in checks:
                key = (check.constraint, check.value)
                if key not in seen:
                    seen[key] = await self._problem(check)
                problem = seen[key]
                if problem is not None:
                    return check.refusal(problem)
        except WardenError as err:
            raise application_error(err) from err
        return None

    async def _problem(self, check: ConstraintCheck) -> str | None:
        finder = FINDERS[check.constraint]
        if check.constraint == AVAILABILITY_ZONE:
            zones = await self._compute.availability_zones()
            return None if check.value in zones else finder.missing.format(value=check.value)
        try:
            # Found images and flavors are kept a minute (`IdCache`), as Heat keeps its
            # constraint checks; the create that follows finds them there too.
            await find_id(self._objects, finder.kind, check.value, self._ids)
        except BackendNotFound:
            return finder.missing.format(value=check.value)
        except BackendConflict:
            return finder.ambiguous.format(value=check.value)
        return None

    @activity.defn(name="get_server_details")
    async def get_server_details(self, physical_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Senlin's details of each server ({} for one that is gone; an `Error` entry
        for one the cloud would not show)."""
        found: dict[str, dict[str, Any]] = {}
        for physical_id in physical_ids:
            try:
                server = await self._objects.show(collection("server"), physical_id)
                name = flavor_name(server)
                flavor = await self._objects.find(collection("flavor"), name) if name else {}
            except BackendNotFound:
                found[physical_id] = {}
            except WardenError as err:
                found[physical_id] = details_error(500, str(err))
            else:
                found[physical_id] = server_details(server, flavor.get("id"))
        return found

    @activity.defn(name="get_server_statuses")
    async def get_server_statuses(self, physical_ids: list[str]) -> ServerStatuses:
        """Status of many servers with one `detail` list call."""
        try:
            servers = await self._compute.list_servers()
        except WardenError as err:
            raise application_error(err) from err
        by_id = {server.id: server.status for server in servers}
        return ServerStatuses(statuses={sid: by_id.get(sid) for sid in physical_ids})
