"""The ports and floating IPs Warden makes for a server, as Senlin and Heat make them.

Nova makes a port for a NIC given as a network (and address). A NIC Nova cannot
describe — its own security groups, a `vnic_type`, a subnet, or a floating IP to
carry — gets a port Warden makes first, as Senlin's `_create_ports_from_properties`
does; a floating IP is then made on `floating_network` (or an existing one associated)
for that port. Nova deletes only the ports it made, so Warden tags what it made with
the server's id (`warden-server-<id>`) and deletes them with the server.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any, Final

from activities.attempts import retry_since
from activities.cloud.collections import CollectionClient, collection
from activities.cloud.compute import ComputeClient
from activities.cloud.reads import read
from domain.errors import BackendNotFound, BackendUnavailable
from domain.server_networks import Interface, plan_interfaces
from domain.servers import NetworkRequest, ServerNetworksUpdate, ServerRequest

#: Tag of every port and floating IP Warden made for a server.
OWNED: Final = "warden-owned"
#: How long an interface update waits for Nova to unplug what it detached.
DETACH_WAIT_S: Final = 30.0


def server_tag(server_id: str) -> str:
    """The tag naming the server a port or floating IP was made for."""
    return f"warden-server-{server_id}"


def needs_own_port(nic: NetworkRequest) -> bool:
    """Whether Nova cannot make this NIC's port by itself."""
    extra = nic.security_groups or nic.vnic_type or nic.floating_ip or nic.floating_network
    # Nova takes no subnet: Heat and Senlin make the port on it themselves.
    return not nic.port and bool(extra or nic.subnet)


async def _id(objects: CollectionClient, kind: str, ref: str) -> str:
    return str((await objects.find(collection(kind), ref))["id"])


async def own_port(
    objects: CollectionClient, nic: NetworkRequest, request_id: str, index: int
) -> str:
    """Make (or adopt, on a retry) the port of NIC `index`; its id."""
    body: dict[str, Any] = {"tags": [OWNED]}
    if nic.network:
        body["network_id"] = await _id(objects, "network", nic.network)
    fixed: dict[str, str] = {}
    if nic.subnet:
        subnet = await objects.find(collection("subnet"), nic.subnet)
        fixed["subnet_id"] = str(subnet["id"])
        body.setdefault("network_id", str(subnet["network_id"]))
    if nic.fixed_ip:
        fixed["ip_address"] = nic.fixed_ip
    if fixed:
        body["fixed_ips"] = [fixed]
    if nic.security_groups:
        body["security_groups"] = [
            await _id(objects, "security_group", g) for g in nic.security_groups
        ]
    if nic.vnic_type:
        body["binding:vnic_type"] = nic.vnic_type
    made = await objects.create_once(
        collection("port"), body, f"{request_id}-nic-{index}", retry_since=retry_since()
    )
    return str(made["id"])


async def own_ports(objects: CollectionClient, request: ServerRequest) -> dict[int, str]:
    """NIC index → the port Warden made for it, for the NICs that need one."""
    if not isinstance(request.networks, tuple):
        return {}
    return {
        i: await own_port(objects, nic, request.request_id, i)
        for i, nic in enumerate(request.networks)
        if needs_own_port(nic)
    }


async def attach_floating_ips(
    objects: CollectionClient, request: ServerRequest, ports: dict[int, str], server_id: str
) -> None:
    """Tag the made ports with the server; give each NIC its floating IP."""
    port_coll, fip_coll = collection("port"), collection("floating_ip")
    for port_id in ports.values():
        await objects.action(port_coll, port_id, "PUT", f"/tags/{server_tag(server_id)}", None)
    nics = request.networks if isinstance(request.networks, tuple) else ()
    for i, nic in enumerate(nics):
        if i not in ports:
            continue
        if nic.floating_ip:
            fip = await _floating_ip(objects, nic.floating_ip)
            await objects.update(fip_coll, fip, {"port_id": ports[i]})
        elif nic.floating_network:
            body = {
                "floating_network_id": await _id(objects, "network", nic.floating_network),
                "port_id": ports[i],
                "tags": [OWNED, server_tag(server_id)],
            }
            await objects.create_once(
                fip_coll, body, f"{request.request_id}-fip-{i}", retry_since=retry_since()
            )


async def _floating_ip(objects: CollectionClient, ref: str) -> str:
    """A floating IP by id, or by its address (Senlin takes either)."""
    coll = collection("floating_ip")
    try:
        return str((await objects.show(coll, ref))["id"])
    except BackendNotFound:
        found = await objects.list(coll, {"floating_ip_address": ref})
        if not found:
            raise BackendNotFound(
                f"Unable to find floating IP with id or address '{ref}'"
            ) from None
        return str(found[0]["id"])


async def release_owned(
    objects: CollectionClient, server_id: str, *, wait_s: float = DETACH_WAIT_S
) -> None:
    """Delete the floating IPs and ports Warden made for a (deleted) server.

    Nova unbinds a deleted server's ports as it tears the server down, after its 202;
    until then Neutron refuses a project member the port's delete (403). So each port
    is deleted once it is unbound, waiting up to `wait_s`, then a retryable error.
    """
    tag = server_tag(server_id)
    ports = await read(lambda: objects.list(collection("port"), {"tags": tag}))
    if not ports:
        return  # Warden made no port for it, so no floating IP either (one call)
    for fip in await read(lambda: objects.list(collection("floating_ip"), {"tags": tag})):
        await objects.delete(collection("floating_ip"), str(fip["id"]))
    bound = {str(p["id"]) for p in ports if p.get("device_id") == server_id}
    for port in ports:
        if str(port["id"]) not in bound:
            await objects.delete(collection("port"), str(port["id"]))

    async def still_bound() -> set[str]:
        for port_id in sorted(bound):
            try:
                shown = await read(functools.partial(objects.show, collection("port"), port_id))
            except BackendNotFound:
                shown = {}
            if shown.get("device_id") != server_id:
                bound.discard(port_id)
                if shown:
                    await objects.delete(collection("port"), port_id)
        return bound

    await released(
        still_bound,
        wait_s,
        lambda held: f"Nova has not unbound port(s) {held} of deleted server {server_id}",
    )


async def released(
    held: Callable[[], Awaitable[set[str]]], wait_s: float, waiting: Callable[[str], str]
) -> None:
    """Return once `held()` names no port, asking again with a growing pause; after
    `wait_s`, the retryable error `waiting(<the ports>)` says what Nova still holds."""
    deadline = asyncio.get_running_loop().time() + wait_s
    pause = 0.1
    while still := await held():
        if asyncio.get_running_loop().time() >= deadline:
            names = ", ".join(sorted(still))
            raise BackendUnavailable(f"{waiting(names)} after {wait_s:.0f} s")
        await asyncio.sleep(pause)
        pause = min(pause * 2, 2.0)


async def _with_ids(objects: CollectionClient, nic: NetworkRequest) -> dict[str, str]:
    """A NIC's port, network and subnet by id (its address as it is)."""
    found: dict[str, str] = {}
    for key, kind in (("port", "port"), ("network", "network"), ("subnet", "subnet")):
        value = getattr(nic, key)
        if value:
            found[key] = await _id(objects, kind, value)
    if nic.fixed_ip:
        found["fixed_ip"] = nic.fixed_ip
    return found


async def update_networks(
    compute: ComputeClient, objects: CollectionClient, request: ServerNetworksUpdate
) -> None:
    """Detach the interfaces only the old NICs describe, attach the new NICs nothing
    describes (`plan_interfaces`); a retry, seeing the interfaces as they are now, does
    only what is left. A NIC on a subnet gets a port Warden makes, as Heat's internal
    port, tagged with the server so that it goes with it; detached, such a port is
    deleted, as Heat deletes its internal ports."""
    server_id = request.physical_id
    old = [await _with_ids(objects, nic) for nic in request.old]
    new = [await _with_ids(objects, nic) for nic in request.new]
    listed = await compute.interfaces(server_id)
    plan = plan_interfaces(old, new, [Interface.from_api(i) for i in listed])
    owned = {
        str(p["id"])
        for p in await objects.list(collection("port"), {"tags": server_tag(server_id)})
    }
    for port_id in plan.detach:
        await compute.detach_interface(server_id, port_id)
    await detached(compute, server_id, set(plan.detach))
    for port_id in plan.detach:
        if port_id in owned:
            await objects.delete(collection("port"), port_id)
    for index, nic in enumerate(plan.attach):
        await compute.attach_interface(
            server_id, await _attachment(objects, nic, request.request_id, index, server_id)
        )


async def detached(
    compute: ComputeClient, server_id: str, ports: set[str], *, wait_s: float = DETACH_WAIT_S
) -> None:
    """Return once none of `ports` is among the server's interfaces.

    Nova answers a detach with 202 and unplugs later; until it has, the port is still
    the server's, and Neutron refuses a project member its delete (403
    "rule:delete_port is disallowed by policy"). Heat polls the same way
    (`check_interface_detach`). After `wait_s`, a retryable error: Temporal tries the
    activity again, which re-plans from the interfaces as they are then.
    """
    if not ports:
        return

    async def still_plugged() -> set[str]:
        listed = {str(i.get("port_id")) for i in await compute.interfaces(server_id)}
        return ports & listed

    await released(
        still_plugged,
        wait_s,
        lambda held: f"Nova has not detached port(s) {held} from server {server_id}",
    )


async def _attachment(
    objects: CollectionClient, nic: dict[str, str], request_id: str, index: int, server_id: str
) -> dict[str, Any]:
    if "port" in nic:
        return {"port_id": nic["port"]}
    if "subnet" in nic:
        wanted = NetworkRequest(
            network=nic.get("network"), subnet=nic["subnet"], fixed_ip=nic.get("fixed_ip")
        )
        port_id = await own_port(objects, wanted, request_id, index)
        await objects.action(
            collection("port"), port_id, "PUT", f"/tags/{server_tag(server_id)}", None
        )
        return {"port_id": port_id}
    attachment: dict[str, Any] = {}
    if "network" in nic:
        attachment["net_id"] = nic["network"]
    if "fixed_ip" in nic:
        attachment["fixed_ips"] = [{"ip_address": nic["fixed_ip"]}]
    return attachment
