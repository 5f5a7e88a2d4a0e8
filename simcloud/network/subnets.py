"""Subnets: a CIDR on a network, its gateway, allocation pools, DNS servers and routes.

The checks are `NeutronDbPluginV2._validate_subnet` and the IPAM backend's: the CIDR
matches `ip_version` and overlaps no other subnet of the network, the gateway is no
network or broadcast address and lies in no pool, pools sit inside the CIDR apart
from each other. A subnet with addresses in use (but by DHCP ports) cannot go.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr

from simcloud.identity import AuthToken
from simcloud.network import ipam
from simcloud.network.bodies import (
    Description,
    IpAddress,
    Name,
    Uuid,
    read_create,
    read_update,
)
from simcloud.network.exceptions import bad_request, fault, invalid_input
from simcloud.network.listing import list_response
from simcloud.network.ports import AUTO_DELETE_OWNERS
from simcloud.network.records import ensure_quota, find, new_record, owned, touch
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/subnets")

#: neutron.conf's `max_dns_nameservers` and `max_subnet_host_routes`.
MAX_DNS_NAMESERVERS = 5
MAX_HOST_ROUTES = 20
Ipv6Mode = Literal["dhcpv6-stateful", "dhcpv6-stateless", "slaac"]


def _subnet_text(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"'{value}' is not a valid IP subnet") from None
    if "/" not in value:
        raise ValueError(f"'{value}' is not a valid IP subnet")
    return value


def _unique_dns(values: list[str]) -> list[str]:
    for value in values:
        if values.count(value) > 1:
            raise ValueError(f"Duplicate nameserver '{value}'")
    return values


def _ip_version(value: int) -> int:
    if value not in (4, 6):
        raise ValueError(f"{value} is not in [4, 6]")
    return value


class Pool(BaseModel):
    """One `allocation_pools` entry."""

    model_config = ConfigDict(extra="forbid")

    start: IpAddress
    end: IpAddress


class HostRoute(BaseModel):
    """One `host_routes` entry."""

    model_config = ConfigDict(extra="forbid")

    destination: Annotated[StrictStr, AfterValidator(_subnet_text)]
    nexthop: IpAddress


class SubnetUpdate(BaseModel):
    """Neutron's `subnet` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    gateway_ip: IpAddress | None = None
    allocation_pools: list[Pool] | None = None
    dns_nameservers: Annotated[list[IpAddress], AfterValidator(_unique_dns)] | None = None
    host_routes: list[HostRoute] | None = None
    enable_dhcp: bool | None = None


class SubnetCreate(SubnetUpdate):
    """Neutron's `subnet` for create (a CIDR is needed: simcloud has no subnet pools)."""

    network_id: Uuid
    ip_version: Annotated[int, AfterValidator(_ip_version)]
    cidr: Annotated[StrictStr, AfterValidator(_subnet_text)] | None = None
    subnetpool_id: Uuid | None = None
    name: Name = ""
    description: Description = ""
    enable_dhcp: bool = True
    ipv6_address_mode: Ipv6Mode | None = None
    ipv6_ra_mode: Ipv6Mode | None = None


def create_subnet(state: SimState, project_id: str, body: SubnetCreate) -> Record:
    """Check and store a subnet; its network lists it from now on."""
    network = find(state, "networks", body.network_id, project_id)
    if network["project_id"] != project_id and not network["shared"]:
        raise fault("HTTPNotFound", message="The resource could not be found.")
    if body.subnetpool_id is not None:
        raise fault("SubnetPoolNotFound", subnetpool_id=body.subnetpool_id)
    if body.cidr is None:
        msg = "a subnetpool must be specified in the absence of a cidr"
        raise bad_request("subnets", msg)
    net = ipam.parse_cidr(body.cidr, body.ip_version)
    _check_overlap(state, network, net, body.cidr)
    gateway: str | None = ipam.default_gateway(net)
    if "gateway_ip" in body.model_fields_set:
        gateway = body.gateway_ip  # an explicit null means no gateway
    if gateway is not None:
        ipam.check_gateway(net, gateway)
    pools = _pools(net, body.allocation_pools, gateway)
    subnet = new_record(
        state,
        project_id,
        name=body.name,
        description=body.description,
        network_id=network["id"],
        ip_version=body.ip_version,
        cidr=str(net),
        gateway_ip=gateway,
        allocation_pools=pools,
        enable_dhcp=body.enable_dhcp,
        dns_nameservers=list(body.dns_nameservers or []),
        host_routes=[r.model_dump() for r in body.host_routes or []],
        ipv6_address_mode=body.ipv6_address_mode,
        ipv6_ra_mode=body.ipv6_ra_mode,
        subnetpool_id=None,
        **{"router:external": network["router:external"]},
    )
    _check_limits(subnet)
    state.network.add("subnets", subnet)
    state.network.allocations[subnet["id"]] = {}
    network["subnets"].append(subnet["id"])
    touch(state, network)
    return subnet


def _check_overlap(state: SimState, network: Record, net: ipam.Network, cidr: str) -> None:
    for subnet_id in network["subnets"]:
        other = ipaddress.ip_network(state.network.subnets[subnet_id]["cidr"])
        if other.version == net.version and other.overlaps(net):
            raise invalid_input(
                f"Requested subnet with cidr: {cidr} for network: {network['id']} "
                "overlaps with another subnet"
            )


def _pools(
    net: ipam.Network, given: list[Pool] | None, gateway: str | None
) -> list[dict[str, str]]:
    if given is None:
        return ipam.default_pools(net, gateway)
    pools = [p.model_dump() for p in given]
    ipam.check_pools(net, pools, gateway)
    return pools


def _check_limits(subnet: Record) -> None:
    if len(subnet["dns_nameservers"]) > MAX_DNS_NAMESERVERS:
        raise fault("DNSNameServersExhausted", subnet_id=subnet["id"], quota=MAX_DNS_NAMESERVERS)
    if len(subnet["host_routes"]) > MAX_HOST_ROUTES:
        raise fault("HostRoutesExhausted", subnet_id=subnet["id"], quota=MAX_HOST_ROUTES)


def update_subnet(state: SimState, subnet: Record, body: SubnetUpdate) -> None:
    """Apply a PUT; a gateway a router port holds may not move."""
    given = body.model_fields_set
    net = ipaddress.ip_network(subnet["cidr"])
    gateway = subnet["gateway_ip"]
    if "gateway_ip" in given and body.gateway_ip != gateway:
        holder = state.network.allocations[subnet["id"]].get(gateway or "")
        if holder is not None:
            raise fault("GatewayIpInUse", ip_address=gateway, port_id=holder)
        gateway = body.gateway_ip
        if gateway is not None:
            ipam.check_gateway(net, gateway)
    pools = subnet["allocation_pools"]
    if body.allocation_pools is not None:
        pools = [p.model_dump() for p in body.allocation_pools]
    if "gateway_ip" in given or body.allocation_pools is not None:
        ipam.check_pools(net, pools, gateway)
    changes = body.model_dump(exclude_unset=True, exclude={"gateway_ip", "allocation_pools"})
    for key in ("dns_nameservers", "host_routes"):
        if key in changes and changes[key] is None:
            changes[key] = []  # Neutron's convert_none_to_empty_list
    candidate = subnet | {k: v for k, v in changes.items() if v is not None}
    _check_limits(candidate)
    subnet.update(candidate, gateway_ip=gateway, allocation_pools=pools)
    touch(state, subnet)


def drop_subnet(state: SimState, subnet: Record) -> None:
    """Delete a subnet no port but a DHCP one holds an address on."""
    net = state.network
    allocated = net.allocations.get(subnet["id"], {})
    holders = {net.ports[p]["id"]: net.ports[p] for p in allocated.values()}
    if any(p["device_owner"] not in AUTO_DELETE_OWNERS for p in holders.values()):
        raise fault(
            "SubnetInUse",
            subnet_id=subnet["id"],
            reason="One or more ports have an IP allocation from this subnet",
        )
    for port in holders.values():
        net.unindex_port(port)
        port["fixed_ips"] = [ip for ip in port["fixed_ips"] if ip["subnet_id"] != subnet["id"]]
        net.index_port(port)
    network = net.networks[subnet["network_id"]]
    network["subnets"].remove(subnet["id"])
    touch(state, network)
    net.allocations.pop(subnet["id"], None)
    net.cursors.pop(subnet["id"], None)
    net.drop("subnets", subnet["id"])


@router.get("")
async def list_subnets(request: Request, token: AuthToken) -> Response:
    """Neutron subnet list."""
    return list_response(request, state_of(request), "subnets", token.project_id)


@router.get("/{subnet_id}")
async def show_subnet(request: Request, subnet_id: str, token: AuthToken) -> Response:
    """Neutron subnet show."""
    subnet = find(state_of(request), "subnets", subnet_id, token.project_id)
    return JSONResponse({"subnet": dict(subnet)})


@router.post("", status_code=201)
async def post_subnet(request: Request, token: AuthToken) -> Response:
    """Neutron subnet create."""
    state = state_of(request)
    body = await read_create(request, "subnet", SubnetCreate, token.project_id)
    ensure_quota(state, token.project_id, "subnet")
    subnet = create_subnet(state, token.project_id, body)
    return JSONResponse({"subnet": dict(subnet)}, status_code=201)


@router.put("/{subnet_id}")
async def put_subnet(request: Request, subnet_id: str, token: AuthToken) -> Response:
    """Neutron subnet update."""
    state = state_of(request)
    subnet = owned(state, "subnets", subnet_id, token.project_id, "update")
    body = await read_update(request, "subnet", SubnetUpdate, SubnetCreate, subnet)
    update_subnet(state, subnet, body)
    return JSONResponse({"subnet": dict(subnet)})


@router.delete("/{subnet_id}", status_code=204)
async def delete_subnet(request: Request, subnet_id: str, token: AuthToken) -> Response:
    """Neutron subnet delete: 409 SubnetInUse while ports hold addresses on it."""
    state = state_of(request)
    subnet = owned(state, "subnets", subnet_id, token.project_id, "delete")
    drop_subnet(state, subnet)
    return Response(status_code=204)
