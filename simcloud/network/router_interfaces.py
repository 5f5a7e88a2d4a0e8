"""Router interfaces, and which router carries a floating IP to a port.

`add_router_interface` with a `subnet_id` makes a port holding the subnet's gateway
address; with a `port_id` it adopts a free port. Either way the port's
`device_owner` is `network:router_interface`. An interface whose subnet a floating
IP reaches through this router cannot be removed (`l3_db` `_check_router_interface_
not_in_use`), and a floating IP needs such a router with a gateway on its network.
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.identity import AuthToken
from simcloud.network.bodies import read_json
from simcloud.network.exceptions import bad_request, fault
from simcloud.network.ports import PortSpec, create_port, delete_port, set_device
from simcloud.network.records import find, owned, touch
from simcloud.network.routers import INTERFACE_OWNER, ports_of
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/routers")


def _interface_info(body: Any, *, removal: bool) -> tuple[str | None, str | None]:
    """(port_id, subnet_id) as `_validate_interface_info` accepts them."""
    info = body if isinstance(body, dict) else {}
    port_id, subnet_id = info.get("port_id"), info.get("subnet_id")
    if port_id is None and subnet_id is None:
        raise bad_request("router", "Either subnet_id or port_id must be specified")
    for value in (port_id, subnet_id):
        if value is not None and not _is_uuid(value):
            raise bad_request("router", f"'{value}' is not a valid UUID")
    if not removal and port_id is not None and subnet_id is not None:
        raise bad_request("router", "Cannot specify both subnet-id and port-id")
    return port_id, subnet_id


def _is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def _router_subnets(state: SimState, router_record: Record) -> list[Record]:
    """Subnets the router reaches: its interfaces' and its external network's."""
    net = state.network
    subnets = [
        net.subnets[ip["subnet_id"]]
        for port in ports_of(state, router_record["id"], INTERFACE_OWNER)
        for ip in port["fixed_ips"]
    ]
    gateway = router_record["external_gateway_info"]
    if gateway is not None:
        subnets += [net.subnets[s] for s in net.networks[gateway["network_id"]]["subnets"]]
    return subnets


def _check_new_subnets(state: SimState, router_record: Record, new: list[Record]) -> None:
    """No second port on a subnet, no overlapping CIDRs (`_check_for_dup_router_subnets`)."""
    attached = _router_subnets(state, router_record)
    interface_ids = {
        ip["subnet_id"]
        for port in ports_of(state, router_record["id"], INTERFACE_OWNER)
        for ip in port["fixed_ips"]
    }
    for subnet in new:
        if subnet["id"] in interface_ids:
            raise bad_request("router", f"Router already has a port on subnet {subnet['id']}")
        for other in attached:
            if ipaddress.ip_network(other["cidr"]).overlaps(ipaddress.ip_network(subnet["cidr"])):
                raise bad_request(
                    "router",
                    f"Cidr {subnet['cidr']} of subnet {subnet['id']} overlaps with cidr "
                    f"{other['cidr']} of subnet {other['id']}",
                )


def add_by_subnet(state: SimState, router_record: Record, subnet_id: str) -> Record:
    """A new interface port holding the subnet's gateway address."""
    project_id = router_record["project_id"]
    subnet = find(state, "subnets", subnet_id, project_id)
    if subnet["gateway_ip"] is None:
        raise bad_request("router", "Subnet for router interface must have a gateway IP")
    if subnet["project_id"] != project_id:
        raise bad_request(
            "router",
            f"Cannot add interface to router because subnet {subnet_id} is not owned by "
            "project making the request",
        )
    _check_new_subnets(state, router_record, [subnet])
    spec = PortSpec(
        network_id=subnet["network_id"],
        project_id=project_id,
        fixed_ips=[{"subnet_id": subnet_id, "ip_address": subnet["gateway_ip"]}],
        device_id=router_record["id"],
        device_owner=INTERFACE_OWNER,
    )
    return create_port(state, spec)


def add_by_port(state: SimState, router_record: Record, port_id: str) -> Record:
    """Adopt a free port with addresses on one IPv4 subnet at most."""
    port = find(state, "ports", port_id, router_record["project_id"])
    if port["device_id"]:
        raise fault(
            "PortInUse", port_id=port_id, net_id=port["network_id"], device_id=port["device_id"]
        )
    if not port["fixed_ips"]:
        raise bad_request("router", "Router port must have at least one fixed IP")
    subnets = [state.network.subnets[ip["subnet_id"]] for ip in port["fixed_ips"]]
    _check_new_subnets(state, router_record, subnets)
    if len([s for s in subnets if s["ip_version"] == 4]) > 1:
        raise bad_request("router", "Cannot have multiple IPv4 subnets on router port")
    set_device(state, port, router_record["id"], INTERFACE_OWNER)
    return port


def _check_not_used_by_floating_ips(state: SimState, router_id: str, subnet: Record) -> None:
    net = state.network
    cidr = ipaddress.ip_network(subnet["cidr"])
    holders = set(net.allocations.get(subnet["id"], {}).values())
    for fip in net.floatingips.values():
        fixed = fip["fixed_ip_address"]
        if (
            fip["router_id"] == router_id
            and fixed is not None
            and ipaddress.ip_address(fixed) in cidr
            and fip["port_id"] in holders
        ):
            raise fault(
                "RouterInterfaceInUseByFloatingIP", router_id=router_id, subnet_id=subnet["id"]
            )


def remove_interface(
    state: SimState, router_record: Record, port_id: str | None, subnet_id: str | None
) -> tuple[Record, list[Record]]:
    """Remove an interface by port or by subnet; (its port, the subnets it served)."""
    interfaces = ports_of(state, router_record["id"], INTERFACE_OWNER)
    if port_id is not None:
        port = next((p for p in interfaces if p["id"] == port_id), None)
        if port is None:
            raise fault("RouterInterfaceNotFound", router_id=router_record["id"], port_id=port_id)
        subnet_ids = [ip["subnet_id"] for ip in port["fixed_ips"]]
        if subnet_id is not None and subnet_id not in subnet_ids:
            raise fault("SubnetMismatchForPort", port_id=port_id, subnet_id=subnet_id)
    else:
        subnet = find(state, "subnets", str(subnet_id), router_record["project_id"])
        port = next(
            (p for p in interfaces if any(ip["subnet_id"] == subnet_id for ip in p["fixed_ips"])),
            None,
        )
        if port is None:
            raise fault(
                "RouterInterfaceNotFoundForSubnet",
                router_id=router_record["id"],
                subnet_id=subnet["id"],
            )
        subnet_ids = [str(subnet_id)]
    subnets = [state.network.subnets[s] for s in subnet_ids]
    for subnet in subnets:
        _check_not_used_by_floating_ips(state, router_record["id"], subnet)
    delete_port(state, port)
    return port, subnets


def router_for_floatingip(
    state: SimState, port: Record, subnet_id: str, external_network_id: str
) -> str:
    """The router joining the port's subnet to the external network (`l3_db`).

    Among routers with an interface on the subnet and a gateway on the external
    network, the one holding the subnet's gateway address wins.
    """
    net = state.network
    gateway_ip = net.subnets[subnet_id]["gateway_ip"]
    found: list[tuple[bool, str]] = []
    for candidate_id in net.network_ports.get(port["network_id"], ()):
        candidate = net.ports[candidate_id]
        router_record = net.routers.get(candidate["device_id"])
        if candidate["device_owner"] != INTERFACE_OWNER or router_record is None:
            continue
        gateway = router_record["external_gateway_info"] or {}
        addresses = [
            ip["ip_address"] for ip in candidate["fixed_ips"] if ip["subnet_id"] == subnet_id
        ]
        if addresses and gateway.get("network_id") == external_network_id:
            found.append((gateway_ip not in addresses, router_record["id"]))
    if not found:
        raise fault(
            "ExternalGatewayForFloatingIPNotFound",
            external_network_id=external_network_id,
            subnet_id=subnet_id,
            port_id=port["id"],
        )
    return min(found)[1]


def _info(router_record: Record, port: Record, subnets: list[Record]) -> dict[str, Any]:
    return {
        "id": router_record["id"],
        "network_id": port["network_id"],
        "port_id": port["id"],
        "subnet_id": subnets[-1]["id"] if subnets else None,
        "subnet_ids": [s["id"] for s in subnets],
        "project_id": port["project_id"],
        "tenant_id": port["project_id"],
        "tags": list(router_record["tags"]),
    }


@router.put("/{router_id}/add_router_interface")
async def add_router_interface(request: Request, router_id: str, token: AuthToken) -> Response:
    """Neutron's add_router_interface with `subnet_id` or `port_id`."""
    state = state_of(request)
    record = owned(state, "routers", router_id, token.project_id, "add_router_interface")
    port_id, subnet_id = _interface_info(await read_json(request), removal=False)
    if port_id is not None:
        port = add_by_port(state, record, port_id)
    else:
        port = add_by_subnet(state, record, str(subnet_id))
    subnets = [state.network.subnets[ip["subnet_id"]] for ip in port["fixed_ips"]]
    touch(state, record)
    return JSONResponse(_info(record, port, subnets))


@router.put("/{router_id}/remove_router_interface")
async def remove_router_interface(request: Request, router_id: str, token: AuthToken) -> Response:
    """Neutron's remove_router_interface; 409 while a floating IP needs it."""
    state = state_of(request)
    record = owned(state, "routers", router_id, token.project_id, "remove_router_interface")
    port_id, subnet_id = _interface_info(await read_json(request), removal=True)
    port, subnets = remove_interface(state, record, port_id, subnet_id)
    touch(state, record)
    return JSONResponse(_info(record, port, subnets))
