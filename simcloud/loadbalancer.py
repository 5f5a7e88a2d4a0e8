"""Octavia v2 pool members with an `operating_status` that follows the servers.

A member is linked to the server holding its address. Servers created with metadata
`lb_pool_id` (and optionally `lb_protocol_port`) join that pool by themselves, so a
template or profile can put nodes behind a pool without an LB policy.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, IPvAnyAddress, StrictBool, StrictStr

from simcloud.errors import SimError, read_body
from simcloud.identity import AuthToken
from simcloud.servers import settle, status_of
from simcloud.state import MemberRecord, ServerRecord, SimState, isotime, state_of

router = APIRouter(prefix="/load-balancer/v2/lbaas/pools")


class MemberCreate(BaseModel):
    """Octavia's `member` object for create."""

    model_config = ConfigDict(extra="forbid")

    address: IPvAnyAddress
    protocol_port: int = Field(ge=1, le=65535)
    name: Annotated[StrictStr, Field(max_length=255)] = ""
    weight: int = Field(1, ge=0, le=256)
    admin_state_up: StrictBool = True
    subnet_id: StrictStr | None = None
    monitor_address: IPvAnyAddress | None = None
    monitor_port: int | None = Field(None, ge=1, le=65535)
    backup: StrictBool = False
    tags: list[StrictStr] = []


class MemberCreateBody(BaseModel):
    """`POST .../members` body."""

    model_config = ConfigDict(extra="forbid")

    member: MemberCreate


def operating_status(state: SimState, address: str, admin_state_up: bool) -> str:
    """ONLINE for an ACTIVE server; OFFLINE when administratively or fault-wise offline."""
    server_id = state.by_address.get(address)
    record = state.servers.get(server_id) if server_id else None
    if record is None or not settle(state, record, state.now()):
        return "ERROR"
    if not admin_state_up or (record.fault is not None and record.fault.kind == "lb_offline"):
        return "OFFLINE"
    return "ONLINE" if status_of(record) == "ACTIVE" else "ERROR"


def _member_json(state: SimState, member: MemberRecord) -> dict[str, Any]:
    return {
        "id": member.id,
        "name": member.name,
        "pool_id": member.pool_id,
        "address": member.address,
        "protocol_port": member.protocol_port,
        "weight": member.weight,
        "admin_state_up": member.admin_state_up,
        "backup": False,
        "provisioning_status": "ACTIVE",
        "operating_status": operating_status(state, member.address, member.admin_state_up),
        "project_id": state.project_id,
        "created_at": isotime(member.created_at),
        "updated_at": isotime(member.created_at),
        "subnet_id": None,
        "monitor_address": None,
        "monitor_port": None,
        "tags": [],
    }


def _from_server(pool_id: str, record: ServerRecord) -> MemberRecord:
    port = record.metadata.get("lb_protocol_port", "80")
    return MemberRecord(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{pool_id}/{record.id}")),
        pool_id=pool_id,
        name=record.name,
        address=record.address,
        protocol_port=int(port) if port.isdigit() else 80,
        weight=1,
        admin_state_up=True,
        created_at=record.created_at,
    )


def pool_members(state: SimState, pool_id: str) -> list[MemberRecord]:
    """API-added members, then members joined through server metadata; 404 if no pool."""
    if pool_id not in state.pool_ids():
        raise SimError(404, f"Pool {pool_id} not found.", style="octavia")
    members = list(state.members.get(pool_id, {}).values())
    members.extend(
        _from_server(pool_id, r)
        for r in state.servers.values()
        if r.metadata.get("lb_pool_id") == pool_id and r.vm_state != "deleted"
    )
    return members


@router.get("/{pool_id}/members")
async def list_members(request: Request, pool_id: str, _: AuthToken) -> Response:
    """Octavia member list with live `operating_status`."""
    state = state_of(request)
    members = [_member_json(state, m) for m in pool_members(state, pool_id)]
    return JSONResponse({"members": members, "members_links": []})


@router.get("/{pool_id}/members/{member_id}")
async def show_member(request: Request, pool_id: str, member_id: str, _: AuthToken) -> Response:
    """Octavia member show."""
    state = state_of(request)
    for member in pool_members(state, pool_id):
        if member.id == member_id:
            return JSONResponse({"member": _member_json(state, member)})
    raise SimError(404, f"Member {member_id} not found.", style="octavia")


@router.post("/{pool_id}/members", status_code=201)
async def create_member(request: Request, pool_id: str, _: AuthToken) -> Response:
    """Octavia member create; the pool exists from its first member on."""
    state = state_of(request)
    body = (await read_body(request, MemberCreateBody, style="octavia")).member
    pool = state.members.setdefault(pool_id, {})
    address = str(body.address)
    if any(m.address == address and m.protocol_port == body.protocol_port for m in pool.values()):
        raise SimError(
            409,
            f"Another member on this pool is already using ip {address} "
            f"on protocol_port {body.protocol_port}",
            style="octavia",
        )
    member = MemberRecord(
        id=str(uuid.uuid4()),
        pool_id=pool_id,
        name=body.name,
        address=address,
        protocol_port=body.protocol_port,
        weight=body.weight,
        admin_state_up=body.admin_state_up,
        created_at=state.now(),
    )
    pool[member.id] = member
    return JSONResponse({"member": _member_json(state, member)}, status_code=201)


@router.delete("/{pool_id}/members/{member_id}", status_code=204)
async def delete_member(request: Request, pool_id: str, member_id: str, _: AuthToken) -> Response:
    """Octavia member delete (members joined by metadata leave with their server)."""
    state = state_of(request)
    pool = state.members.get(pool_id)
    if pool is None or pool.pop(member_id, None) is None:
        raise SimError(404, f"Member {member_id} not found.", style="octavia")
    return Response(status_code=204)
