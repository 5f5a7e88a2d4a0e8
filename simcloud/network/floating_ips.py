"""Floating IPs: an address on an external network, associated with a port's fixed IP.

The address is held by a project-less `network:floatingip` port on the external
network. Association follows `l3_db`: the port must be the caller's, not Neutron's
own, with one IPv4 address (or the `fixed_ip_address` named), and a router must join
that address's subnet to the external network, else 404
`ExternalGatewayForFloatingIPNotFound`. Associated floating IPs are ACTIVE, others DOWN.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict

from simcloud.errors import SimError
from simcloud.identity import AuthToken
from simcloud.network.bodies import Description, IpAddress, Uuid, read_create, read_update
from simcloud.network.exceptions import bad_request, fault, policy_denied
from simcloud.network.listing import list_response
from simcloud.network.ports import PortSpec, create_port, delete_port
from simcloud.network.records import ensure_quota, find, new_record, owned, touch
from simcloud.network.router_interfaces import router_for_floatingip
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/floatingips")

FLOATING_OWNER = "network:floatingip"


class FloatingIpUpdate(BaseModel):
    """Neutron's `floatingip` for update: `port_id` associates, null disassociates."""

    model_config = ConfigDict(extra="forbid")

    port_id: Uuid | None = None
    fixed_ip_address: IpAddress | None = None
    description: Description | None = None


class FloatingIpCreate(FloatingIpUpdate):
    """Neutron's `floatingip` for create."""

    floating_network_id: Uuid
    floating_ip_address: IpAddress | None = None
    subnet_id: Uuid | None = None
    description: Description = ""


def show(state: SimState, fip: Record) -> Record:
    """A floating IP with `port_details` (the `fip-port-details` extension)."""
    port = state.network.ports.get(fip["port_id"] or "")
    details = None
    if port is not None:
        keys = ("name", "network_id", "mac_address", "admin_state_up", "status", "device_id")
        details = {key: port[key] for key in keys} | {"device_owner": port["device_owner"]}
    return fip | {"port_details": details}


def _fixed_ip(port: Record, fixed_ip_address: str | None) -> dict[str, str]:
    """The port address to associate (`_internal_fip_assoc_data`)."""
    if fixed_ip_address is not None:
        if ipaddress.ip_address(fixed_ip_address).version != 4:
            raise bad_request(
                "floatingip",
                f"Cannot process floating IP association with {fixed_ip_address}, since "
                "that is not an IPv4 address",
            )
        for fixed_ip in port["fixed_ips"]:
            if fixed_ip["ip_address"] == fixed_ip_address:
                return dict(fixed_ip)
        msg = f"Port {port['id']} does not have fixed ip {fixed_ip_address}"
        raise bad_request("floatingip", msg)
    ipv4 = [ip for ip in port["fixed_ips"] if ipaddress.ip_address(ip["ip_address"]).version == 4]
    if not ipv4:
        msg = f"Cannot add floating IP to port {port['id']} that has no fixed IPv4 addresses"
        raise bad_request("floatingip", msg)
    if len(ipv4) > 1:
        raise bad_request(
            "floatingip",
            f"Port {port['id']} has multiple fixed IPv4 addresses.  Must provide a "
            "specific IPv4 address when assigning a floating IP",
        )
    return dict(ipv4[0])


def associate(
    state: SimState, fip: Record, port_id: str | None, fixed_ip_address: str | None
) -> None:
    """Point the floating IP at a port's fixed IP through a router, or at nothing."""
    net = state.network
    if port_id is None:
        if fixed_ip_address is not None:
            msg = "fixed_ip_address cannot be specified without a port_id"
            raise bad_request("floatingip", msg)
        _set(state, fip, None, None, None)
        return
    port = find(state, "ports", port_id, fip["project_id"])
    if port["project_id"] != fip["project_id"]:
        raise bad_request(
            "floatingip",
            f"Cannot process floating IP association with Port {port_id}, since that "
            "port is owned by a different project",
        )
    if port["device_owner"].startswith("network:"):
        raise bad_request("floatingip", f"Port {port_id} is unable to be assigned a floating IP")
    fixed_ip = _fixed_ip(port, fixed_ip_address)
    network_id = fip["floating_network_id"]
    router_id = router_for_floatingip(state, port, fixed_ip["subnet_id"], network_id)
    for other in net.floatingips.values():
        if (
            other["id"] != fip["id"]
            and other["port_id"] == port_id
            and other["floating_network_id"] == network_id
            and other["fixed_ip_address"] == fixed_ip["ip_address"]
        ):
            raise fault(
                "FloatingIPPortAlreadyAssociated",
                floating_ip_address=fip["floating_ip_address"],
                fip_id=fip["id"],
                port_id=port_id,
                fixed_ip=fixed_ip["ip_address"],
                net_id=network_id,
            )
    _set(state, fip, port_id, fixed_ip["ip_address"], router_id)


def _set(
    state: SimState, fip: Record, port_id: str | None, fixed_ip: str | None, router_id: str | None
) -> None:
    index = state.network.port_floatingips
    if fip["port_id"] is not None:
        index.get(fip["port_id"], set()).discard(fip["id"])
    fip.update(port_id=port_id, fixed_ip_address=fixed_ip, router_id=router_id)
    fip["status"] = "ACTIVE" if port_id is not None else "DOWN"
    if port_id is not None:
        index.setdefault(port_id, set()).add(fip["id"])


def create_floating_ip(state: SimState, project_id: str, body: FloatingIpCreate) -> Record:
    """Allocate an address on the external network; associate it if a port is given."""
    if "floating_ip_address" in body.model_fields_set:
        raise policy_denied("create_floatingip:floating_ip_address")
    network = find(state, "networks", body.floating_network_id, project_id)
    if not network["router:external"]:
        msg = f"Network {network['id']} is not a valid external network"
        raise bad_request("floatingip", msg)
    if not any(state.network.subnets[s]["ip_version"] == 4 for s in network["subnets"]):
        msg = f"Network {network['id']} does not contain any IPv4 subnet"
        raise bad_request("floatingip", msg)
    fip = new_record(
        state,
        project_id,
        floating_network_id=network["id"],
        router_id=None,
        port_id=None,
        fixed_ip_address=None,
        status="DOWN",
        description=body.description,
    )
    requested = [{"subnet_id": body.subnet_id}] if body.subnet_id is not None else None
    spec = PortSpec(
        network_id=network["id"],
        project_id="",
        fixed_ips=requested,
        device_id=fip["id"],
        device_owner=FLOATING_OWNER,
        status="N/A",
    )
    port = create_port(state, spec)
    ipv4 = [ip for ip in port["fixed_ips"] if ipaddress.ip_address(ip["ip_address"]).version == 4]
    try:
        if not ipv4:
            raise fault("ExternalIpAddressExhausted", net_id=network["id"])
        fip["floating_ip_address"] = ipv4[0]["ip_address"]
        associate(state, fip, body.port_id, body.fixed_ip_address)
    except SimError:
        delete_port(state, port)
        raise
    state.network.add("floatingips", fip)
    return fip


def delete_floating_ip(state: SimState, fip: Record) -> None:
    """Release the address and forget the floating IP."""
    net = state.network
    _set(state, fip, None, None, None)
    for port_id in list(net.device_ports.get(fip["id"], ())):
        delete_port(state, net.ports[port_id])
    net.drop("floatingips", fip["id"])


@router.get("")
async def list_floating_ips(request: Request, token: AuthToken) -> Response:
    """Neutron floating IP list."""
    state = state_of(request)
    return list_response(request, state, "floatingips", token.project_id, lambda f: show(state, f))


@router.get("/{floatingip_id}")
async def show_floating_ip(request: Request, floatingip_id: str, token: AuthToken) -> Response:
    """Neutron floating IP show."""
    state = state_of(request)
    fip = find(state, "floatingips", floatingip_id, token.project_id)
    return JSONResponse({"floatingip": show(state, fip)})


@router.post("", status_code=201)
async def post_floating_ip(request: Request, token: AuthToken) -> Response:
    """Neutron floating IP create."""
    state = state_of(request)
    body = await read_create(request, "floatingip", FloatingIpCreate, token.project_id)
    ensure_quota(state, token.project_id, "floatingip")
    fip = create_floating_ip(state, token.project_id, body)
    return JSONResponse({"floatingip": show(state, fip)}, status_code=201)


@router.put("/{floatingip_id}")
async def put_floating_ip(request: Request, floatingip_id: str, token: AuthToken) -> Response:
    """Neutron floating IP update: associate (`port_id`) or disassociate (null)."""
    state = state_of(request)
    fip = owned(state, "floatingips", floatingip_id, token.project_id, "update")
    body = await read_update(request, "floatingip", FloatingIpUpdate, FloatingIpCreate, fip)
    given: dict[str, Any] = body.model_dump(exclude_unset=True)
    if "port_id" in given or "fixed_ip_address" in given:
        port_id = given.get("port_id", fip["port_id"])
        associate(state, fip, port_id, body.fixed_ip_address)
    if body.description is not None:
        fip["description"] = body.description
    touch(state, fip)
    return JSONResponse({"floatingip": show(state, fip)})


@router.delete("/{floatingip_id}", status_code=204)
async def delete_floating_ip_route(
    request: Request, floatingip_id: str, token: AuthToken
) -> Response:
    """Neutron floating IP delete."""
    state = state_of(request)
    fip = owned(state, "floatingips", floatingip_id, token.project_id, "delete")
    delete_floating_ip(state, fip)
    return Response(status_code=204)
