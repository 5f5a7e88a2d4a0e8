"""Pool members: added through the API, or joined by servers through their metadata.

A server created with metadata `lb_pool_id` (and optionally `lb_protocol_port`, 80 by
default) is a member of that pool for as long as it lives, so a template or profile
can put nodes behind a pool without an LB policy. A pool id that names no pool made
through `/v2/lbaas/pools` exists from its first member on: such members are ACTIVE at
once and follow their servers (see `operating`). On a pool made through the API, a
member change goes through the load balancer's provisioning like any other.
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.errors import SimError
from simcloud.identity import AuthToken
from simcloud.network.records import find
from simcloud.octavia.bodies import (
    IpAddress,
    Name,
    Port,
    Tags,
    Uuid,
    apply_changes,
    changes_of,
    read_body,
)
from simcloud.octavia.exceptions import fault, not_found, visible
from simcloud.octavia.listing import list_response
from simcloud.octavia.operating import member_status
from simcloud.octavia.provisioning import begin_pool_change
from simcloud.octavia.quotas import ensure_quota
from simcloud.octavia.state import (
    ACTIVE,
    PENDING_CREATE,
    PENDING_DELETE,
    PENDING_UPDATE,
    MemberRecord,
    isotime,
)
from simcloud.state import ServerRecord, SimState, state_of

router = APIRouter(prefix="/v2/lbaas/pools/{pool_id}/members")

#: Octavia's `[networking] reserved_ips`: addresses no member may have.
RESERVED_IPS = frozenset({"169.254.169.254"})
Weight = Annotated[int, Field(ge=0, le=256)]
#: What a PUT of null resets an attribute to.
DEFAULTS: dict[str, Any] = {
    "name": "",
    "weight": 1,
    "admin_state_up": True,
    "backup": False,
    "tags": [],
}


class MemberUpdate(BaseModel):
    """Octavia's `member` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    admin_state_up: bool | None = None
    weight: Weight | None = None
    backup: bool | None = None
    monitor_address: IpAddress | None = None
    monitor_port: Port | None = None
    tags: Tags | None = None


class MemberCreate(BaseModel):
    """Octavia's `member` for create."""

    model_config = ConfigDict(extra="forbid")

    address: IpAddress
    protocol_port: Port
    name: Name = ""
    weight: Weight = 1
    admin_state_up: bool = True
    backup: bool = False
    subnet_id: Uuid | None = None
    monitor_address: IpAddress | None = None
    monitor_port: Port | None = None
    tags: Tags = []
    request_sriov: bool = False
    project_id: Annotated[StrictStr, Field(max_length=36)] | None = None


def pool_members(state: SimState, pool_id: str) -> list[MemberRecord]:
    """API-added members, then members joined through server metadata; 404 if no pool."""
    if pool_id not in state.pool_ids():
        raise not_found("Pool", pool_id)
    members = list(state.octavia.members.get(pool_id, {}).values())
    members.extend(
        _from_server(state, pool_id, r)
        for r in state.servers.values()
        if r.metadata.get("lb_pool_id") == pool_id and r.vm_state != "deleted"
    )
    return members


def _from_server(state: SimState, pool_id: str, record: ServerRecord) -> MemberRecord:
    port = record.metadata.get("lb_protocol_port", "80")
    return MemberRecord(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{pool_id}/{record.id}")),
        project_id=state.project_id,
        pool_id=pool_id,
        name=record.name,
        address=record.address,
        protocol_port=int(port) if port.isdigit() else 80,
        provisioning_status=ACTIVE,
        created_at=record.created_at,
    )


def member_json(state: SimState, member: MemberRecord) -> dict[str, Any]:
    """Octavia's `member` object, with a live `operating_status`."""
    return {
        "id": member.id,
        "name": member.name,
        "address": member.address,
        "protocol_port": member.protocol_port,
        "weight": member.weight,
        "admin_state_up": member.admin_state_up,
        "backup": member.attributes.get("backup", False),
        "provisioning_status": member.provisioning_status,
        "operating_status": member_status(state, member),
        "project_id": member.project_id,
        "created_at": isotime(member.created_at),
        "updated_at": isotime(member.updated_at),
        "subnet_id": member.attributes.get("subnet_id"),
        "monitor_address": member.attributes.get("monitor_address"),
        "monitor_port": member.attributes.get("monitor_port"),
        "tags": list(member.tags),
        "vnic_type": "normal",
    }


def add_member(state: SimState, project_id: str, pool_id: str, body: MemberCreate) -> MemberRecord:
    """Add a member to a pool (an unknown pool id starts a pool known by its members)."""
    pool = state.octavia.pools.get(pool_id)
    if pool is not None:
        visible(pool, "Pool", pool_id, project_id)
    if body.project_id not in (None, project_id):
        raise fault("PolicyForbidden")
    if ipaddress.ip_address(body.address).exploded.upper() in RESERVED_IPS:
        raise fault("InvalidOption", value=body.address, option="member address")
    if body.subnet_id is not None:
        try:
            find(state, "subnets", body.subnet_id, project_id)
        except SimError as exc:
            raise not_found("Subnet", body.subnet_id) from exc
    ensure_quota(state, project_id, "member")
    if body.request_sriov:
        raise fault("MemberSRIOVDisabled")
    siblings = state.octavia.members.get(pool_id, {}).values()
    if any(m.address == body.address and m.protocol_port == body.protocol_port for m in siblings):
        raise fault("DuplicateMemberEntry", ip_address=body.address, port=body.protocol_port)
    if pool is not None:
        begin_pool_change(state, pool)
    member = MemberRecord(
        id=str(uuid.uuid4()),
        project_id=project_id,
        pool_id=pool_id,
        address=body.address,
        protocol_port=body.protocol_port,
        provisioning_status=ACTIVE if pool is None else PENDING_CREATE,
        created_at=state.now(),
    )
    apply_changes(member, body.model_dump(exclude={"request_sriov", "project_id"}))
    state.octavia.members.setdefault(pool_id, {})[member.id] = member
    return member


def _api_member(state: SimState, pool_id: str, member_id: str) -> MemberRecord:
    member = state.octavia.members.get(pool_id, {}).get(member_id)
    if member is None:
        raise not_found("Member", member_id)
    return member


def update_member(state: SimState, member: MemberRecord, body: MemberUpdate) -> None:
    """Change a member's attributes; null resets one to its default."""
    changes = {k: DEFAULTS.get(k) if v is None else v for k, v in changes_of(body).items()}
    pool = state.octavia.pools.get(member.pool_id)
    if pool is not None:
        begin_pool_change(state, pool)
        member.provisioning_status = PENDING_UPDATE
    apply_changes(member, changes)
    member.updated_at = state.now()


def remove_member(state: SimState, member: MemberRecord) -> None:
    """Remove a member: at once from a pool known by its members, else once provisioned."""
    pool = state.octavia.pools.get(member.pool_id)
    if pool is None:
        del state.octavia.members[member.pool_id][member.id]
        return
    begin_pool_change(state, pool)
    member.provisioning_status = PENDING_DELETE


@router.get("")
async def list_members(request: Request, pool_id: str, _: AuthToken) -> Response:
    """Octavia member list with live `operating_status`."""
    state = state_of(request)
    members = [member_json(state, m) for m in pool_members(state, pool_id)]
    return list_response(request, "members", members)


@router.get("/{member_id}")
async def show_member(request: Request, pool_id: str, member_id: str, _: AuthToken) -> Response:
    """Octavia member show."""
    state = state_of(request)
    for member in pool_members(state, pool_id):
        if member.id == member_id:
            return JSONResponse({"member": member_json(state, member)})
    raise not_found("Member", member_id)


@router.post("", status_code=201)
async def create_member(request: Request, pool_id: str, token: AuthToken) -> Response:
    """Octavia member create."""
    state = state_of(request)
    body = await read_body(request, "member", MemberCreate)
    member = add_member(state, token.project_id, pool_id, body)
    return JSONResponse({"member": member_json(state, member)}, status_code=201)


@router.put("/{member_id}")
async def change_member(request: Request, pool_id: str, member_id: str, _: AuthToken) -> Response:
    """Octavia member update (members joined by metadata change with their server)."""
    state = state_of(request)
    body = await read_body(request, "member", MemberUpdate)
    member = _api_member(state, pool_id, member_id)
    update_member(state, member, body)
    return JSONResponse({"member": member_json(state, member)})


@router.delete("/{member_id}", status_code=204)
async def delete_member(request: Request, pool_id: str, member_id: str, _: AuthToken) -> Response:
    """Octavia member delete (members joined by metadata leave with their server)."""
    state = state_of(request)
    remove_member(state, _api_member(state, pool_id, member_id))
    return Response(status_code=204)
