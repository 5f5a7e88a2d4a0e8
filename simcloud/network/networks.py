"""Networks: CRUD, the MTU, and deletion only once ports other than DHCP's are gone.

Members may not make a network `shared` or `router:external` (admin-only policies),
so the external network is devstack's `public`, seeded by `NetworkState`. Tenant
networks get the MTU of a VXLAN network, 1450.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from simcloud.identity import AuthToken
from simcloud.network.bodies import Description, Name, read_create, read_update
from simcloud.network.exceptions import fault, invalid_input, policy_denied
from simcloud.network.listing import list_response
from simcloud.network.ports import AUTO_DELETE_OWNERS, delete_port
from simcloud.network.records import (
    detached,
    ensure_quota,
    find,
    new_record,
    owned,
    touch,
    visible,
)
from simcloud.network.state import Record
from simcloud.network.subnets import drop_subnet
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/networks")

#: The largest MTU of a tenant (VXLAN) network on a 1500-byte physical network.
MAX_MTU = 1450
AVAILABILITY_ZONES = ("nova",)
Mtu = Annotated[int, Field(ge=68)]


class NetworkUpdate(BaseModel):
    """Neutron's `network` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None
    mtu: Mtu | None = None
    port_security_enabled: bool | None = None
    shared: bool | None = None
    external: bool | None = Field(None, alias="router:external")


class NetworkCreate(NetworkUpdate):
    """Neutron's `network` for create."""

    name: Name = ""
    description: Description = ""
    admin_state_up: bool = True
    mtu: Mtu = MAX_MTU
    port_security_enabled: bool = True
    shared: bool = False
    external: bool = Field(False, alias="router:external")
    availability_zone_hints: list[Annotated[str, Field(max_length=255)]] = []


def _check_policy(action: str, body: NetworkUpdate, network: Record | None = None) -> None:
    """`shared` and `router:external` are the cloud admin's to set."""
    for key, value in (("shared", body.shared), ("router:external", body.external)):
        current = False if network is None else network[key]
        if value is not None and value != current:
            raise policy_denied(f"{action}_network:{key}")
    if body.mtu is not None and body.mtu > MAX_MTU:
        raise invalid_input(f"Requested MTU is too big, maximum is {MAX_MTU}")


def create_network(state: SimState, project_id: str, body: NetworkCreate) -> Record:
    """Store a new ACTIVE network without subnets."""
    _check_policy("create", body)
    for zone in body.availability_zone_hints:
        if zone not in AVAILABILITY_ZONES:
            raise fault("AvailabilityZoneNotFound", availability_zone=zone)
    network = new_record(
        state,
        project_id,
        name=body.name,
        description=body.description,
        admin_state_up=body.admin_state_up,
        status="ACTIVE",
        shared=False,
        mtu=body.mtu,
        port_security_enabled=body.port_security_enabled,
        l2_adjacency=True,
        availability_zone_hints=list(body.availability_zone_hints),
        availability_zones=list(AVAILABILITY_ZONES),
        subnets=[],
        **{"router:external": False},
    )
    state.network.add("networks", network)
    return network


def delete_network(state: SimState, network: Record) -> None:
    """Delete a network, its DHCP ports and its subnets; 409 while other ports remain."""
    net = state.network
    ports = [net.ports[p] for p in sorted(net.network_ports.get(network["id"], ()))]
    busy = [p["id"] for p in ports if p["device_owner"] not in AUTO_DELETE_OWNERS]
    if busy:
        reason = (
            "There are one or more ports still in use on the network, id for these "
            f"ports is: {','.join(busy)}"
        )
        raise fault("NetworkInUse", net_id=network["id"], reason=reason)
    for port in ports:
        delete_port(state, port)
    for subnet_id in list(network["subnets"]):
        drop_subnet(state, net.subnets[subnet_id])
    net.drop("networks", network["id"])


def find_network(state: SimState, name_or_id: str, project_id: str | None = None) -> Record:
    """The network with this id, else the only one with this name (a copy).

    Args:
        state: The simcloud.
        name_or_id: A network id or name, as Nova's `networks` entries may give.
        project_id: Whose view to search (default: the sim's own project).

    Raises:
        SimError: 404 NetworkNotFound, or 409 when several networks bear the name.
    """
    project = project_id or state.project_id
    net = state.network
    if name_or_id in net.networks:
        return detached(find(state, "networks", name_or_id, project))
    named = [
        n
        for n in net.networks.values()
        if n["name"] == name_or_id and visible(net, "networks", n, project)
    ]
    if len(named) > 1:
        raise fault("Conflict", message=f"Multiple networks match '{name_or_id}'")
    if not named:
        raise fault("NetworkNotFound", net_id=name_or_id)
    return detached(named[0])


@router.get("")
async def list_networks(request: Request, token: AuthToken) -> Response:
    """Neutron network list: the caller's, shared and external networks."""
    return list_response(request, state_of(request), "networks", token.project_id)


@router.get("/{network_id}")
async def show_network(request: Request, network_id: str, token: AuthToken) -> Response:
    """Neutron network show."""
    network = find(state_of(request), "networks", network_id, token.project_id)
    return JSONResponse({"network": dict(network)})


@router.post("", status_code=201)
async def post_network(request: Request, token: AuthToken) -> Response:
    """Neutron network create."""
    state = state_of(request)
    body = await read_create(request, "network", NetworkCreate, token.project_id)
    ensure_quota(state, token.project_id, "network")
    network = create_network(state, token.project_id, body)
    return JSONResponse({"network": dict(network)}, status_code=201)


@router.put("/{network_id}")
async def put_network(request: Request, network_id: str, token: AuthToken) -> Response:
    """Neutron network update."""
    state = state_of(request)
    network = owned(state, "networks", network_id, token.project_id, "update")
    body = await read_update(request, "network", NetworkUpdate, NetworkCreate, network)
    _check_policy("update", body, network)
    changes = body.model_dump(exclude_unset=True, exclude={"shared", "external"})
    network.update({k: v for k, v in changes.items() if v is not None})
    touch(state, network)
    return JSONResponse({"network": dict(network)})


@router.delete("/{network_id}", status_code=204)
async def delete_network_route(request: Request, network_id: str, token: AuthToken) -> Response:
    """Neutron network delete: 409 NetworkInUse while ports remain."""
    state = state_of(request)
    network = owned(state, "networks", network_id, token.project_id, "delete")
    delete_network(state, network)
    return Response(status_code=204)
