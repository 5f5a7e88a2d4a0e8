"""Neutron's `/v2.0/ports`: list (with `fixed_ips=` filters), show, create, update, delete."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.identity import AuthToken
from simcloud.network.bodies import (
    Description,
    DeviceText,
    IpAddress,
    IpOrCidr,
    MacAddress,
    Name,
    Tags,
    Uuid,
    read_create,
    read_update,
)
from simcloud.network.exceptions import action_denied, fault, policy_denied
from simcloud.network.fixed_ips import replace_ips
from simcloud.network.listing import list_response
from simcloud.network.ports import PortSpec, check_deletable, create_port, delete_port, set_device
from simcloud.network.records import ensure_quota, find, owned
from simcloud.network.security_groups import resolve_groups
from simcloud.network.state import Record
from simcloud.network.trunks import check_port_deletable
from simcloud.state import SimState, state_of

#: Owners whose ports only an admin or a service may delete while they are bound.
DEVICE_OWNERS_KEPT = ("compute:", "baremetal:", "manila:")

router = APIRouter(prefix="/v2.0/ports")

VnicType = Literal[
    "normal",
    "direct",
    "macvtap",
    "baremetal",
    "direct-physical",
    "virtio-forwarder",
    "smart-nic",
    "vdpa",
    "remote-managed",
]
#: Port binding attributes only an admin (Nova, with its service token) may set.
ADMIN_ONLY = (("host_id", "binding:host_id"), ("profile", "binding:profile"))


class FixedIpRequest(BaseModel):
    """One `fixed_ips` entry."""

    model_config = ConfigDict(extra="forbid")

    subnet_id: Uuid | None = None
    ip_address: IpAddress | None = None


class AddressPair(BaseModel):
    """One `allowed_address_pairs` entry."""

    model_config = ConfigDict(extra="forbid")

    ip_address: IpOrCidr
    mac_address: MacAddress | None = None


class PortUpdate(BaseModel):
    """Neutron's `port` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None
    fixed_ips: list[FixedIpRequest] | None = None
    device_id: DeviceText | None = None
    device_owner: DeviceText | None = None
    security_groups: list[Uuid] | None = None
    allowed_address_pairs: list[AddressPair] | None = None
    port_security_enabled: bool | None = None
    mac_address: MacAddress | None = None
    vnic_type: VnicType | None = Field(None, alias="binding:vnic_type")
    host_id: StrictStr | None = Field(None, alias="binding:host_id")
    profile: dict[str, object] | None = Field(None, alias="binding:profile")


class PortCreate(PortUpdate):
    """Neutron's `port` for create."""

    network_id: Uuid
    name: Name = ""
    description: Description = ""
    admin_state_up: bool = True
    device_id: DeviceText = ""
    device_owner: DeviceText = ""
    vnic_type: VnicType = Field("normal", alias="binding:vnic_type")
    tags: Tags = []


def _pairs(pairs: list[AddressPair], mac: str | None) -> list[dict[str, str]]:
    return [{"ip_address": p.ip_address, "mac_address": p.mac_address or mac or ""} for p in pairs]


def _spec(state: SimState, project_id: str, body: PortCreate) -> PortSpec:
    for name, alias in ADMIN_ONLY:
        if name in body.model_fields_set:
            raise policy_denied(f"create_port:{alias}")
    network = find(state, "networks", body.network_id, project_id)
    if network["project_id"] != project_id and not network["shared"]:
        # Neutron hides the network of another project behind a bare 404.
        raise fault("HTTPNotFound", message="The resource could not be found.")
    groups = body.security_groups
    return PortSpec(
        network_id=network["id"],
        project_id=project_id,
        name=body.name,
        description=body.description,
        admin_state_up=body.admin_state_up,
        mac_address=body.mac_address,
        fixed_ips=None if body.fixed_ips is None else [f.model_dump() for f in body.fixed_ips],
        device_id=body.device_id,
        device_owner=body.device_owner,
        security_groups=None if groups is None else resolve_groups(state, groups, project_id),
        allowed_address_pairs=_pairs(body.allowed_address_pairs or [], body.mac_address),
        port_security_enabled=body.port_security_enabled,
        vnic_type=body.vnic_type,
        tags=list(body.tags),
    )


def _security(
    state: SimState, port: Record, body: PortUpdate, project_id: str
) -> tuple[bool, list[str], list[dict[str, str]]]:
    """The port security, groups and address pairs a PUT leaves, checked together."""
    given = body.model_fields_set
    security = port["port_security_enabled"]
    if body.port_security_enabled is not None:
        security = body.port_security_enabled
    groups = port["security_groups"]
    if "security_groups" in given:
        groups = resolve_groups(state, body.security_groups or [], project_id)
    if groups and not security:
        if "security_groups" in given:
            raise fault("PortSecurityAndIPRequiredForSecurityGroups")
        raise fault("PortSecurityPortHasSecurityGroup")
    pairs = port["allowed_address_pairs"]
    if "allowed_address_pairs" in given:
        pairs = _pairs(body.allowed_address_pairs or [], port["mac_address"])
    if pairs and not security:
        raise fault("AddressPairAndPortSecurityRequired")
    return security, groups, pairs


def update_port(state: SimState, port: Record, body: PortUpdate, project_id: str) -> None:
    """Apply a PUT: port security rules first, then addresses, groups and device."""
    given = body.model_fields_set
    for name, alias in (*ADMIN_ONLY, ("mac_address", "mac_address")):
        if name in given:
            raise policy_denied(f"update_port:{alias}")
    security, groups, pairs = _security(state, port, body, project_id)
    if "fixed_ips" in given:
        replace_ips(state.network, port, [f.model_dump() for f in body.fixed_ips or []])
    state.network.unindex_port(port)
    port.update(security_groups=groups, allowed_address_pairs=pairs, port_security_enabled=security)
    for key in ("name", "description", "admin_state_up"):
        if getattr(body, key) is not None:
            port[key] = getattr(body, key)
    if body.vnic_type is not None:
        port["binding:vnic_type"] = body.vnic_type
    state.network.index_port(port)
    device_id = port["device_id"] if body.device_id is None else body.device_id
    device_owner = port["device_owner"] if body.device_owner is None else body.device_owner
    set_device(state, port, device_id, device_owner)


@router.get("")
async def list_ports(request: Request, token: AuthToken) -> Response:
    """Neutron port list."""
    return list_response(request, state_of(request), "ports", token.project_id)


@router.get("/{port_id}")
async def show_port(request: Request, port_id: str, token: AuthToken) -> Response:
    """Neutron port show."""
    port = find(state_of(request), "ports", port_id, token.project_id)
    return JSONResponse({"port": dict(port)})


@router.post("", status_code=201)
async def post_port(request: Request, token: AuthToken) -> Response:
    """Neutron port create: addresses from the pools, the `default` group if none given."""
    state = state_of(request)
    body = await read_create(request, "port", PortCreate, token.project_id)
    ensure_quota(state, token.project_id, "port")
    port = create_port(state, _spec(state, token.project_id, body))
    return JSONResponse({"port": dict(port)}, status_code=201)


@router.put("/{port_id}")
async def put_port(request: Request, port_id: str, token: AuthToken) -> Response:
    """Neutron port update."""
    state = state_of(request)
    port = owned(state, "ports", port_id, token.project_id, "update")
    body = await read_update(request, "port", PortUpdate, PortCreate, port)
    update_port(state, port, body, token.project_id)
    return JSONResponse({"port": dict(port)})


@router.delete("/{port_id}", status_code=204)
async def delete_port_route(request: Request, port_id: str, token: AuthToken) -> Response:
    """Neutron port delete; a router's or floating IP's port answers 409, and a port a
    server (or a bare-metal node, a Manila share) still holds is not a member's to
    delete (Neutron 29's `delete_port` rule: `not rule:compute_device`)."""
    state = state_of(request)
    port = owned(state, "ports", port_id, token.project_id, "delete")
    check_deletable(state, port)
    check_port_deletable(state, port)
    if str(port["device_owner"]).startswith(DEVICE_OWNERS_KEPT):
        raise action_denied("delete_port")
    delete_port(state, port)
    return Response(status_code=204)
