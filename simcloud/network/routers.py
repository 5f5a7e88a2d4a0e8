"""Routers: CRUD and the external gateway (interfaces are in `router_interfaces`).

Setting `external_gateway_info` gives the router a gateway port on the external
network (project-less, as Neutron's are, so tenants do not list it) with an address
from its subnets; `enable_snat` and `external_fixed_ips` are the admin's to choose.
A gateway that floating IPs rely on cannot be removed or moved, and a router with
interfaces cannot be deleted.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict

from simcloud.identity import AuthToken
from simcloud.network.bodies import Description, Name, Uuid, read_create, read_update
from simcloud.network.exceptions import bad_request, fault, http_bad_request, policy_denied
from simcloud.network.listing import list_response
from simcloud.network.ports import PortSpec, create_port, delete_port
from simcloud.network.records import ensure_quota, find, new_record, owned, touch
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/routers")

GATEWAY_OWNER = "network:router_gateway"
INTERFACE_OWNER = "network:router_interface"


class GatewayInfo(BaseModel):
    """`external_gateway_info`; `{}` removes the gateway."""

    model_config = ConfigDict(extra="forbid")

    network_id: Uuid | None = None
    enable_snat: bool | None = None
    external_fixed_ips: list[dict[str, str]] | None = None


class RouterUpdate(BaseModel):
    """Neutron's `router` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None
    external_gateway_info: GatewayInfo | None = None


class RouterPut(RouterUpdate):
    """A router update may also set the whole set of extra routes (`extraroute`; a
    create may not)."""

    routes: list[Any] | None = None


class RouterCreate(RouterUpdate):
    """Neutron's `router` for create."""

    name: Name = ""
    description: Description = ""
    admin_state_up: bool = True
    availability_zone_hints: list[str] = []


def ports_of(state: SimState, router_id: str, owner: str) -> list[Record]:
    """The router's ports with this `device_owner`, oldest first."""
    net = state.network
    ports = [net.ports[p] for p in net.device_ports.get(router_id, ())]
    return sorted((p for p in ports if p["device_owner"] == owner), key=lambda p: p["created_at"])


def parse_routes(value: Any) -> list[dict[str, str]]:
    """`routes` as Neutron validates them (400 for a malformed entry)."""
    if not isinstance(value, list):
        raise http_bad_request(f"Invalid input for routes. Reason: '{value}' is not a list.")
    routes = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"destination", "nexthop"}:
            raise http_bad_request(
                f"Invalid input for routes. Reason: Validation of dictionary's keys failed. "
                f"Expected keys: {{'destination', 'nexthop'}} Provided keys: {item!r}."
            )
        try:
            destination = str(ipaddress.ip_network(str(item["destination"]), strict=False))
            nexthop = str(ipaddress.ip_address(str(item["nexthop"])))
        except ValueError as exc:
            raise http_bad_request(f"Invalid input for routes. Reason: {exc}.") from exc
        route = {"destination": destination, "nexthop": nexthop}
        if route not in routes:
            routes.append(route)
    return routes


def check_nexthops(state: SimState, router_record: Record, routes: list[dict[str, str]]) -> None:
    """400 `InvalidRoutes` for a next hop on no subnet of the router's interfaces."""
    cidrs = [
        ipaddress.ip_network(state.network.subnets[ip["subnet_id"]]["cidr"])
        for port in ports_of(state, router_record["id"], INTERFACE_OWNER)
        for ip in port["fixed_ips"]
        if ip["subnet_id"] in state.network.subnets
    ]
    for route in routes:
        hop = ipaddress.ip_address(route["nexthop"])
        if not any(hop in cidr for cidr in cidrs):
            raise fault(
                "InvalidRoutes", routes=[route], reason="the nexthop is not connected with router"
            )


def set_gateway(
    state: SimState, router_record: Record, info: GatewayInfo | None, action: str
) -> None:
    """Give the router a gateway on `info.network_id`, or none for `{}` / null."""
    for key in ("enable_snat", "external_fixed_ips"):
        if info is not None and key in info.model_fields_set:
            raise policy_denied(f"{action}_router:external_gateway_info:{key}")
    if info is not None and info.model_fields_set and info.network_id is None:
        raise http_bad_request(
            "Invalid input for external_gateway_info. Reason: Validation of dictionary's "
            "keys failed. Expected keys: {'network_id'}."
        )
    current = router_record["external_gateway_info"]
    network_id = info.network_id if info is not None else None
    if (current or {}).get("network_id") == network_id:
        return
    project_id = router_record["project_id"]
    network = find(state, "networks", network_id, project_id) if network_id else None
    if network is not None and not network["router:external"]:
        raise bad_request("router", f"Network {network_id} is not an external network")
    if current is not None:
        _remove_gateway(state, router_record, current["network_id"])
    if network is not None:
        spec = PortSpec(
            network_id=network["id"],
            project_id="",
            device_id=router_record["id"],
            device_owner=GATEWAY_OWNER,
        )
        port = create_port(state, spec)
        router_record["external_gateway_info"] = {
            "network_id": network["id"],
            "enable_snat": True,
            "external_fixed_ips": [dict(ip) for ip in port["fixed_ips"]],
        }


def _remove_gateway(state: SimState, router_record: Record, network_id: str) -> None:
    net = state.network
    if any(f["router_id"] == router_record["id"] for f in net.floatingips.values()):
        raise fault(
            "RouterExternalGatewayInUseByFloatingIp",
            router_id=router_record["id"],
            net_id=network_id,
        )
    for port in ports_of(state, router_record["id"], GATEWAY_OWNER):
        delete_port(state, port)
    router_record["external_gateway_info"] = None


def create_router(state: SimState, project_id: str, body: RouterCreate) -> Record:
    """Store an ACTIVE router, with its gateway if one is asked for."""
    for zone in body.availability_zone_hints:
        if zone != "nova":
            raise fault("AvailabilityZoneNotFound", availability_zone=zone)
    record = new_record(
        state,
        project_id,
        name=body.name,
        description=body.description,
        admin_state_up=body.admin_state_up,
        status="ACTIVE",
        external_gateway_info=None,
        availability_zone_hints=list(body.availability_zone_hints),
        availability_zones=["nova"],
        routes=[],
    )
    set_gateway(state, record, body.external_gateway_info, "create")
    state.network.add("routers", record)
    return record


def delete_router(state: SimState, router_record: Record) -> None:
    """Delete a router without interfaces, and its gateway port."""
    interfaces = [p["id"] for p in ports_of(state, router_record["id"], INTERFACE_OWNER)]
    if interfaces:
        reason = "has ports still attached: " + ", ".join(interfaces)
        raise fault("RouterInUse", router_id=router_record["id"], reason=reason)
    gateway = router_record["external_gateway_info"]
    if gateway is not None:
        _remove_gateway(state, router_record, gateway["network_id"])
    state.network.drop("routers", router_record["id"])


@router.get("")
async def list_routers(request: Request, token: AuthToken) -> Response:
    """Neutron router list."""
    return list_response(request, state_of(request), "routers", token.project_id)


@router.get("/{router_id}")
async def show_router(request: Request, router_id: str, token: AuthToken) -> Response:
    """Neutron router show."""
    record = find(state_of(request), "routers", router_id, token.project_id)
    return JSONResponse({"router": dict(record)})


@router.post("", status_code=201)
async def post_router(request: Request, token: AuthToken) -> Response:
    """Neutron router create."""
    state = state_of(request)
    body = await read_create(request, "router", RouterCreate, token.project_id)
    ensure_quota(state, token.project_id, "router")
    record = create_router(state, token.project_id, body)
    return JSONResponse({"router": dict(record)}, status_code=201)


@router.put("/{router_id}")
async def put_router(request: Request, router_id: str, token: AuthToken) -> Response:
    """Neutron router update (a gateway set, moved or removed)."""
    state = state_of(request)
    record = owned(state, "routers", router_id, token.project_id, "update")
    body = await read_update(request, "router", RouterPut, RouterCreate, record)
    if "external_gateway_info" in body.model_fields_set:
        set_gateway(state, record, body.external_gateway_info, "update")
    if body.routes is not None:
        routes = parse_routes(body.routes)
        check_nexthops(state, record, routes)
        record["routes"] = routes
    for key in ("name", "description", "admin_state_up"):
        if getattr(body, key) is not None:
            record[key] = getattr(body, key)
    touch(state, record)
    return JSONResponse({"router": dict(record)})


@router.delete("/{router_id}", status_code=204)
async def delete_router_route(request: Request, router_id: str, token: AuthToken) -> Response:
    """Neutron router delete: 409 RouterInUse while interfaces remain."""
    state = state_of(request)
    record = owned(state, "routers", router_id, token.project_id, "delete")
    delete_router(state, record)
    return Response(status_code=204)
