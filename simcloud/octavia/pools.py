"""Pools: made on a load balancer, or on a listener as its default pool.

The checks are `PoolsController`'s: a pool's protocol must suit its listener's
(`VALID_LISTENER_POOL_PROTOCOL_MAP`), session persistence must suit its protocol, and
a listener has one default pool. The amphora provider refuses `SOURCE_IP_PORT` (501).
A pool's `members` and `healthmonitor_id` are those of `members` and `healthmonitors`.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.identity import AuthToken
from simcloud.octavia import validate
from simcloud.octavia.bodies import (
    DEFAULT_ALPN,
    DEFAULT_CIPHERS,
    DEFAULT_TLS_VERSIONS,
    Alpn,
    Ciphers,
    Description,
    Name,
    Reference,
    SessionPersistence,
    SessionPersistenceUpdate,
    Tags,
    TlsVersion,
    Uuid,
    apply_changes,
    changes_of,
    read_body,
)
from simcloud.octavia.exceptions import fault, validation, visible
from simcloud.octavia.listing import list_response
from simcloud.octavia.members import pool_members
from simcloud.octavia.operating import member_status, pool_status
from simcloud.octavia.provisioning import begin
from simcloud.octavia.quotas import ensure_quota
from simcloud.octavia.state import PENDING_DELETE, ListenerRecord, PoolRecord, isotime
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2/lbaas/pools")

Protocol = Literal["HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP", "UDP", "SCTP"]
Algorithm = Literal["ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"]


class PoolUpdate(BaseModel):
    """Octavia's `pool` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None
    lb_algorithm: Algorithm | None = None
    session_persistence: SessionPersistenceUpdate | None = None
    tags: Tags | None = None
    tls_container_ref: Reference | None = None
    ca_tls_container_ref: Reference | None = None
    crl_container_ref: Reference | None = None
    tls_enabled: bool | None = None
    tls_ciphers: Ciphers | None = None
    tls_versions: list[TlsVersion] | None = None
    alpn_protocols: list[Alpn] | None = None


class PoolCreate(PoolUpdate):
    """Octavia's `pool` for create."""

    name: Name = ""
    description: Description = ""
    admin_state_up: bool = True
    listener_id: Uuid | None = None
    loadbalancer_id: Uuid | None = None
    protocol: Protocol
    lb_algorithm: Algorithm
    session_persistence: SessionPersistence | None = None
    tags: Tags = []
    tls_enabled: bool = False
    project_id: Annotated[StrictStr, Field(max_length=36)] | None = None


def pool_operating_status(state: SimState, pool: PoolRecord) -> str:
    """The pool's operating_status, rolled up from its members'."""
    statuses = (member_status(state, m) for m in pool_members(state, pool.id))
    return pool_status(state, pool, statuses)


def pool_json(state: SimState, pool: PoolRecord) -> dict[str, Any]:
    """Octavia's `pool` object."""
    shown: dict[str, Any] = {key: pool.attributes.get(key) for key in _SHOWN_AS_GIVEN}
    shown.update(
        id=pool.id,
        name=pool.name,
        description=pool.description,
        provisioning_status=pool.provisioning_status,
        operating_status=pool_operating_status(state, pool),
        admin_state_up=pool.admin_state_up,
        protocol=pool.protocol,
        lb_algorithm=pool.lb_algorithm,
        project_id=pool.project_id,
        loadbalancers=[{"id": pool.loadbalancer_id}],
        listeners=[{"id": li.id} for li in state.octavia.listeners_using(pool.id)],
        created_at=isotime(pool.created_at),
        updated_at=isotime(pool.updated_at),
        healthmonitor_id=pool.healthmonitor_id,
        members=[{"id": m.id} for m in pool_members(state, pool.id)],
        tags=list(pool.tags),
        tls_enabled=pool.attributes.get("tls_enabled", False),
    )
    return shown


_SHOWN_AS_GIVEN = (
    "session_persistence",
    "tls_container_ref",
    "ca_tls_container_ref",
    "crl_container_ref",
    "tls_ciphers",
    "tls_versions",
    "alpn_protocols",
)


def find_pool(state: SimState, pool_id: str, project_id: str) -> PoolRecord:
    """The caller's pool, or Octavia's 404."""
    return visible(state.octavia.pools.get(pool_id), "Pool", pool_id, project_id)


def _parents(
    state: SimState, project_id: str, body: PoolCreate
) -> tuple[str, ListenerRecord | None]:
    octavia = state.octavia
    if body.loadbalancer_id is None and body.listener_id is None:
        raise validation("Must provide at least one of: loadbalancer_id, listener_id")
    listener = None
    if body.listener_id is not None:
        found = octavia.listeners.get(body.listener_id)
        if found is not None and body.loadbalancer_id not in (None, found.loadbalancer_id):
            found = None  # a listener of another load balancer is not one of this one's
        listener = visible(found, "Listener", body.listener_id, project_id)
    loadbalancer_id = body.loadbalancer_id or (listener.loadbalancer_id if listener else "")
    visible(
        octavia.loadbalancers.get(loadbalancer_id), "Load Balancer", loadbalancer_id, project_id
    )
    return loadbalancer_id, listener


def create_pool(state: SimState, project_id: str, body: PoolCreate) -> PoolRecord:
    """A new PENDING_CREATE pool (the listener's default pool when one is named)."""
    if body.project_id not in (None, project_id):
        raise fault("PolicyForbidden")
    loadbalancer_id, listener = _parents(state, project_id, body)
    validate.check_pool_protocol(listener, body.protocol)
    validate.check_persistence(body.protocol, body.session_persistence)
    validate.check_pool_options(
        body.lb_algorithm, body.crl_container_ref, body.ca_tls_container_ref
    )
    ensure_quota(state, project_id, "pool")
    if listener is not None and listener.default_pool_id is not None:
        raise fault("DuplicatePoolEntry")
    begin(state, state.octavia.loadbalancers[loadbalancer_id], (listener,) if listener else ())
    pool = PoolRecord(
        id=str(uuid.uuid4()),
        project_id=project_id,
        loadbalancer_id=loadbalancer_id,
        protocol=body.protocol,
        lb_algorithm=body.lb_algorithm,
        created_at=state.now(),
    )
    exclude = {"listener_id", "loadbalancer_id", "project_id", "protocol", "lb_algorithm"}
    apply_changes(pool, body.model_dump(exclude=exclude))
    if body.tls_enabled:
        _tls_defaults(pool.attributes)
    state.octavia.pools[pool.id] = pool
    if listener is not None:
        listener.default_pool_id = pool.id
    return pool


def _tls_defaults(attributes: dict[str, Any]) -> None:
    defaults = {
        "tls_ciphers": DEFAULT_CIPHERS,
        "tls_versions": list(DEFAULT_TLS_VERSIONS),
        "alpn_protocols": list(DEFAULT_ALPN),
    }
    for key, value in defaults.items():
        if attributes.get(key) is None:
            attributes[key] = value


def update_pool(state: SimState, pool: PoolRecord, body: PoolUpdate) -> None:
    """Change a pool's attributes; null resets one to its default."""
    changes = changes_of(body)
    if changes.get("lb_algorithm", "") is None:
        del changes["lb_algorithm"]  # a pool always has an algorithm
    persistence = body.session_persistence
    if persistence is not None and persistence.type is None:
        current = pool.attributes.get("session_persistence") or {}
        persistence.type = current.get("type")
    validate.check_persistence(pool.protocol, persistence)
    ca = changes.get("ca_tls_container_ref", pool.attributes.get("ca_tls_container_ref"))
    crl = changes.get("crl_container_ref", pool.attributes.get("crl_container_ref"))
    validate.check_pool_options(body.lb_algorithm, crl, ca)
    loadbalancer = state.octavia.loadbalancers[pool.loadbalancer_id]
    begin(state, loadbalancer, (pool, *state.octavia.listeners_using(pool.id)))
    resets = {"name": "", "description": "", "admin_state_up": True, "tags": []}
    for key, value in changes.items():
        if value is None and key in resets:
            changes[key] = resets[key]
    if persistence is not None:
        changes["session_persistence"] = persistence.model_dump()
    apply_changes(pool, changes)
    if pool.attributes.get("tls_enabled"):
        _tls_defaults(pool.attributes)


def delete_pool(state: SimState, pool: PoolRecord) -> None:
    """Start deleting a pool; its members and health monitor go with it."""
    loadbalancer = state.octavia.loadbalancers[pool.loadbalancer_id]
    begin(state, loadbalancer, tuple(state.octavia.listeners_using(pool.id)))
    pool.provisioning_status = PENDING_DELETE


@router.get("")
async def list_pools(request: Request, token: AuthToken) -> Response:
    """The caller's pools."""
    state = state_of(request)
    pools = [p for p in state.octavia.pools.values() if p.project_id == token.project_id]
    return list_response(request, "pools", [pool_json(state, p) for p in pools])


@router.get("/{pool_id}")
async def show_pool(request: Request, pool_id: str, token: AuthToken) -> Response:
    """One pool."""
    state = state_of(request)
    return JSONResponse({"pool": pool_json(state, find_pool(state, pool_id, token.project_id))})


@router.post("", status_code=201)
async def post_pool(request: Request, token: AuthToken) -> Response:
    """Create a pool."""
    state = state_of(request)
    body = await read_body(request, "pool", PoolCreate)
    pool = create_pool(state, token.project_id, body)
    return JSONResponse({"pool": pool_json(state, pool)}, status_code=201)


@router.put("/{pool_id}")
async def put_pool(request: Request, pool_id: str, token: AuthToken) -> Response:
    """Update a pool."""
    state = state_of(request)
    body = await read_body(request, "pool", PoolUpdate)
    pool = find_pool(state, pool_id, token.project_id)
    update_pool(state, pool, body)
    return JSONResponse({"pool": pool_json(state, pool)})


@router.delete("/{pool_id}", status_code=204)
async def remove_pool(request: Request, pool_id: str, token: AuthToken) -> Response:
    """Delete a pool."""
    state = state_of(request)
    delete_pool(state, find_pool(state, pool_id, token.project_id))
    return Response(status_code=204)
