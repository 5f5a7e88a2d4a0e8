"""Nova compute client: servers and their actions, with idempotent create."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import httpx

from activities.cloud.errors import json_body
from activities.cloud.paging import next_marker
from activities.cloud.reads import read
from domain.errors import BackendError, BackendNotFound, InvalidRequest
from domain.servers import REQUEST_ID_KEY

if TYPE_CHECKING:
    from activities.cloud.requests import CloudRequests

#: Nova microversion asked for: `locked` (2.9), `locked_reason` (2.73).
MICROVERSION = "2.73"
HEADERS = {
    "OpenStack-API-Version": f"compute {MICROVERSION}",
    "X-OpenStack-Nova-API-Version": MICROVERSION,
}
RebootType = Literal["SOFT", "HARD"]
Networks = Literal["auto", "none"] | list[str]


@dataclass(frozen=True)
class Server:
    """A server as Nova reports it."""

    id: str
    name: str
    status: str
    locked: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    #: Network name → IP addresses.
    addresses: dict[str, list[str]] = field(default_factory=dict)
    #: Network name → Nova's address entries as shown (`addr`, `version`, MAC, type).
    address_entries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    image_id: str | None = None
    flavor: str | None = None
    vm_state: str | None = None
    task_state: str | None = None
    power_state: int | None = None
    locked_reason: str | None = None
    created: str | None = None
    updated: str | None = None
    fault: str | None = None

    @property
    def request_id(self) -> str | None:
        """The request id this server was created for, if Warden created it."""
        return self.metadata.get(REQUEST_ID_KEY)

    @property
    def ip_addresses(self) -> list[str]:
        """Every address of the server, network by network."""
        return [ip for ips in self.addresses.values() for ip in ips]

    @classmethod
    def from_api(cls, data: Any) -> Server:
        """Parse Nova's server JSON (any microversion from 2.1 on)."""
        if not isinstance(data, dict) or "id" not in data:
            raise BackendError("compute API returned a server without an id")
        image, flavor, fault = data.get("image"), data.get("flavor"), data.get("fault")
        entries_by_net = {
            str(net): [dict(a) for a in entries if isinstance(a, dict)]
            for net, entries in (data.get("addresses") or {}).items()
            if isinstance(entries, list)
        }
        addresses = {
            net: [str(a.get("addr")) for a in entries] for net, entries in entries_by_net.items()
        }
        return cls(
            id=str(data["id"]),
            name=str(data.get("name", "")),
            status=str(data.get("status", "UNKNOWN")),
            locked=bool(data.get("locked", False)),
            metadata={str(k): str(v) for k, v in (data.get("metadata") or {}).items()},
            addresses=addresses,
            address_entries=entries_by_net,
            image_id=image.get("id") if isinstance(image, dict) else None,
            flavor=(flavor.get("original_name") or flavor.get("id"))
            if isinstance(flavor, dict)
            else None,
            vm_state=data.get("OS-EXT-STS:vm_state"),
            task_state=data.get("OS-EXT-STS:task_state"),
            power_state=data.get("OS-EXT-STS:power_state"),
            locked_reason=data.get("locked_reason"),
            created=data.get("created"),
            updated=data.get("updated"),
            fault=fault.get("message") if isinstance(fault, dict) else None,
        )


def _path(server_id: str, suffix: str = "") -> str:
    if not server_id:
        raise InvalidRequest("a server id is required")
    return f"/servers/{quote(server_id, safe='')}{suffix}"


class ComputeClient:
    """Nova v2.1 servers. Methods raise `domain.errors`, never httpx exceptions."""

    def __init__(self, session: CloudRequests) -> None:
        self._session = session

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> httpx.Response:
        return await self._session.request(
            "compute", method, path, json=json, params=params, headers=HEADERS, timeout_s=timeout_s
        )

    async def ping(self, timeout_s: float) -> None:
        """One small list call at Warden's microversion (Keystone auth included): the
        compute API answers as the activities will need it."""
        await self._call("GET", "/servers/detail", params={"limit": "1"}, timeout_s=timeout_s)

    async def version(self) -> str:
        """The newest microversion the compute API offers (a cheap reachability check)."""
        response = await self._call("GET", "/")
        doc = json_body(response, "compute GET version", "version")
        if not isinstance(doc, dict):
            raise BackendError("compute API answered an unreadable version document")
        return str(doc.get("version") or doc.get("id") or "")

    async def create_server(
        self,
        name: str,
        image: str,
        flavor: str,
        metadata: Mapping[str, str] | None = None,
        request_id: str | None = None,
        networks: Networks = "auto",
        *,
        extra: Mapping[str, Any] | None = None,
        scheduler_hints: Mapping[str, Any] | None = None,
    ) -> Server:
        """Create a server, or return the one an earlier try with `request_id` made.

        The request id is stored in the server's metadata (`warden_request_id`) and
        looked up (by exact name, then metadata) before any POST, so a retry after a
        lost answer (the cloud made the server, then the call failed) adopts that server
        instead of making a second one. It must name what is created (a node, a stack
        resource, a node's recreation by one action), never the attempt. `extra`
        holds the other members of Nova's `server` object (`key_name`, `user_data`,
        explicit `networks`, …) as Nova spells them.
        """
        meta = dict(metadata or {})
        if request_id is not None:
            meta[REQUEST_ID_KEY] = request_id
            existing = await read(lambda: self.find_server(name, request_id))
            if existing is not None:
                return existing
        nets: Any = networks if isinstance(networks, str) else [{"uuid": n} for n in networks]
        server = {"name": name, "imageRef": image, "flavorRef": flavor, "metadata": meta}
        payload: dict[str, Any] = {"server": server | {"networks": nets} | dict(extra or {})}
        if scheduler_hints:
            payload["os:scheduler_hints"] = dict(scheduler_hints)
        response = await self._call("POST", "/servers", json=payload)
        created = json_body(response, "compute POST /servers", "server")
        if not isinstance(created, dict) or "id" not in created:
            raise BackendError("compute API created a server without telling its id")
        # The server is made: a failed read of it must not fail the create.
        return await read(lambda: self.get_server(str(created["id"])))

    async def find_server(self, name: str, request_id: str) -> Server | None:
        """The live server named `name` created for `request_id`, if any; of several
        (a POST answered after the client's timeout made a second), the oldest, so every
        retry adopts the same one."""
        made = [
            server
            for server in await self.list_servers(name=f"^{re.escape(name)}$")
            if server.request_id == request_id and server.status != "DELETED"
        ]
        return min(made, key=lambda s: (s.created or "", s.id), default=None)

    async def get_server(self, server_id: str) -> Server:
        """One server; `BackendNotFound` when it does not exist (any more)."""
        response = await self._call("GET", _path(server_id))
        return Server.from_api(json_body(response, f"compute GET server {server_id}", "server"))

    async def availability_zones(self) -> list[str]:
        """The names of the availability zones Nova says are available."""
        response = await self._call("GET", "/os-availability-zone")
        body = json_body(response, "compute GET /os-availability-zone")
        zones = body.get("availabilityZoneInfo") if isinstance(body, dict) else None
        if not isinstance(zones, list):
            raise BackendError("compute API listed zones without 'availabilityZoneInfo'")
        return [
            str(z.get("zoneName"))
            for z in zones
            if isinstance(z, dict) and (z.get("zoneState") or {}).get("available")
        ]

    async def list_servers(
        self,
        *,
        name: str | None = None,
        status: str | None = None,
        changes_since: datetime | None = None,
        metadata: Mapping[str, str] | None = None,
        page_size: int | None = None,
        **filters: str,
    ) -> list[Server]:
        """Every server matching Nova's filters, following pages.

        Args:
            name: A regular expression (Nova matches it anywhere in the name).
            status: `ACTIVE`, `SHUTOFF`, `ERROR`, ...
            changes_since: Only servers changed since then (deleted ones included).
            metadata: Key/values every returned server must carry (checked here: Nova
                has no metadata filter for servers).
            page_size: `limit` per request; the cloud's own maximum when None.
            **filters: Other Nova filters passed as they are (`image`, `flavor`, `ip`).
        """
        params = dict(filters)
        if name is not None:
            params["name"] = name
        if status is not None:
            params["status"] = status
        if changes_since is not None:
            params["changes-since"] = changes_since.isoformat()
        if page_size is not None:
            params["limit"] = str(page_size)
        servers: list[Server] = []
        while True:
            response = await self._call("GET", "/servers/detail", params=params)
            body = json_body(response, "compute GET /servers/detail")
            page = body.get("servers") if isinstance(body, dict) else None
            if not isinstance(page, list):
                raise BackendError("compute API listed servers without 'servers'")
            servers.extend(Server.from_api(item) for item in page)
            marker = next_marker(body.get("servers_links")) if page else None
            if marker is None:
                break
            params["marker"] = marker
        wanted = dict(metadata or {})
        return [s for s in servers if all(s.metadata.get(k) == v for k, v in wanted.items())]

    async def delete_server(self, server_id: str) -> bool:
        """Delete a server; False when it was already gone (deleting twice is fine)."""
        try:
            await self._call("DELETE", _path(server_id))
        except BackendNotFound:
            return False
        return True

    async def _action(self, server_id: str, body: dict[str, Any]) -> httpx.Response:
        return await self._call("POST", _path(server_id, "/action"), json=body)

    async def reboot(self, server_id: str, reboot_type: RebootType = "SOFT") -> None:
        """Reboot (SOFT needs an ACTIVE server; HARD also works from SHUTOFF, PAUSED and
        ERROR, but only for a server that once ran: Nova refuses a failed build, 409)."""
        await self._action(server_id, {"reboot": {"type": reboot_type}})

    async def rebuild(
        self, server_id: str, image: str | None = None, user_data: str | None = None
    ) -> Server:
        """Rebuild from `image` (default: the server's current image), with new
        `user_data` when given (2.57)."""
        if image is None:
            image = (await self.get_server(server_id)).image_id
            if not image:
                raise InvalidRequest(f"server {server_id} has no image to rebuild from")
        args: dict[str, Any] = {"imageRef": image}
        if user_data is not None:
            args["user_data"] = base64.b64encode(user_data.encode()).decode()
        response = await self._action(server_id, {"rebuild": args})
        return Server.from_api(json_body(response, f"compute rebuild {server_id}", "server"))

    async def start(self, server_id: str) -> None:
        """Power on a SHUTOFF server (`os-start`)."""
        await self._action(server_id, {"os-start": None})

    async def stop(self, server_id: str) -> None:
        """Power off an ACTIVE or ERROR server (`os-stop`)."""
        await self._action(server_id, {"os-stop": None})

    async def pause(self, server_id: str) -> None:
        """Pause an ACTIVE server."""
        await self._action(server_id, {"pause": None})

    async def unpause(self, server_id: str) -> None:
        """Unpause a PAUSED server."""
        await self._action(server_id, {"unpause": None})

    async def lock(self, server_id: str, reason: str | None = None) -> None:
        """Lock a server: every other action then gets 409 until `unlock`."""
        args = {"locked_reason": reason} if reason is not None else None
        await self._action(server_id, {"lock": args})

    async def unlock(self, server_id: str) -> None:
        """Unlock a server."""
        await self._action(server_id, {"unlock": None})

    async def resize(self, server_id: str, flavor_id: str) -> None:
        """Ask Nova to move the server to another flavor (it waits in VERIFY_RESIZE)."""
        await self._action(server_id, {"resize": {"flavorRef": flavor_id}})

    async def confirm_resize(self, server_id: str) -> None:
        """Confirm a resize waiting in VERIFY_RESIZE (Nova answers 204)."""
        await self._action(server_id, {"confirmResize": None})

    async def change_password(self, server_id: str, admin_pass: str) -> None:
        """Set the administrator password (`changePassword`)."""
        await self._action(server_id, {"changePassword": {"adminPass": admin_pass}})

    async def set_metadata(self, server_id: str, metadata: dict[str, str]) -> None:
        """Replace every metadata item of the server."""
        await self._call("PUT", _path(server_id, "/metadata"), json={"metadata": metadata})

    async def set_tags(self, server_id: str, tags: list[str]) -> None:
        """Replace the server's tags (2.26); none removes them all."""
        if tags:
            await self._call("PUT", _path(server_id, "/tags"), json={"tags": tags})
        else:
            await self._call("DELETE", _path(server_id, "/tags"))

    async def interfaces(self, server_id: str) -> list[dict[str, Any]]:
        """The server's `interfaceAttachments` (`os-interface`)."""
        response = await self._call("GET", _path(server_id, "/os-interface"))
        listed = json_body(
            response, f"compute GET interfaces of {server_id}", "interfaceAttachments"
        )
        return [dict(i) for i in listed] if isinstance(listed, list) else []

    async def attach_interface(self, server_id: str, attachment: Mapping[str, Any]) -> None:
        """Attach a port, or a new port on a network (`port_id` / `net_id`, `fixed_ips`)."""
        body = {"interfaceAttachment": dict(attachment)}
        await self._call("POST", _path(server_id, "/os-interface"), json=body)

    async def detach_interface(self, server_id: str, port_id: str) -> None:
        """Detach a port (Nova deletes a port it made); a port already gone is fine."""
        try:
            await self._call("DELETE", _path(server_id, f"/os-interface/{quote(port_id, safe='')}"))
        except BackendNotFound:
            return
