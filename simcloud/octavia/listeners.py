"""Listeners: a protocol and port on a load balancer's VIP, forwarding to a default pool.

Two listeners of one load balancer may not share a port over the same L4 protocol
(409 `DuplicateListenerEntry`); the TLS, header and HSTS rules are in `validate`.
Any change makes the load balancer PENDING_UPDATE until it is provisioned.
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
    Cidr,
    Ciphers,
    Description,
    Name,
    Port,
    Reference,
    Tags,
    Timeout,
    TlsVersion,
    Uuid,
    apply_changes,
    changes_of,
    read_body,
)
from simcloud.octavia.exceptions import fault, not_found, validation, visible
from simcloud.octavia.listing import list_response
from simcloud.octavia.operating import listener_status
from simcloud.octavia.provisioning import begin, ensure_mutable
from simcloud.octavia.quotas import ensure_quota
from simcloud.octavia.state import (
    PENDING_DELETE,
    ListenerRecord,
    LoadBalancerRecord,
    isotime,
)
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2/lbaas/listeners")

Protocol = Literal["HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS", "UDP", "SCTP", "PROMETHEUS"]
#: Listener protocol → the L4 protocol whose ports it takes.
L4_PROTOCOLS = {"UDP": "UDP", "SCTP": "SCTP"}
#: Attribute → what a listener has when it is not given (and what a PUT of null sets).
DEFAULTS: dict[str, Any] = {
    "name": "",
    "description": "",
    "admin_state_up": True,
    "tags": [],
    "connection_limit": -1,
    "default_tls_container_ref": None,
    "sni_container_refs": [],
    "insert_headers": {},
    "timeout_client_data": 50000,
    "timeout_member_connect": 5000,
    "timeout_member_data": 50000,
    "timeout_tcp_inspect": 0,
    "client_ca_tls_container_ref": None,
    "client_authentication": "NONE",
    "client_crl_container_ref": None,
    "allowed_cidrs": None,
    "tls_ciphers": None,
    "tls_versions": None,
    "alpn_protocols": None,
    "hsts_max_age": None,
    "hsts_include_subdomains": False,
    "hsts_preload": False,
}
TLS_DEFAULTS = {
    "tls_ciphers": DEFAULT_CIPHERS,
    "tls_versions": list(DEFAULT_TLS_VERSIONS),
    "alpn_protocols": list(DEFAULT_ALPN),
}


class ListenerUpdate(BaseModel):
    """Octavia's `listener` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None
    connection_limit: Annotated[int, Field(ge=-1)] | None = None
    default_tls_container_ref: Reference | None = None
    sni_container_refs: list[Reference] | None = None
    default_pool_id: Uuid | None = None
    insert_headers: dict[str, Reference] | None = None
    timeout_client_data: Timeout | None = None
    timeout_member_connect: Timeout | None = None
    timeout_member_data: Timeout | None = None
    timeout_tcp_inspect: Timeout | None = None
    tags: Tags | None = None
    client_ca_tls_container_ref: Reference | None = None
    client_authentication: Literal["NONE", "OPTIONAL", "MANDATORY"] | None = None
    client_crl_container_ref: Reference | None = None
    allowed_cidrs: list[Cidr] | None = None
    tls_ciphers: Ciphers | None = None
    tls_versions: list[TlsVersion] | None = None
    alpn_protocols: list[Alpn] | None = None
    hsts_max_age: Annotated[int, Field(ge=0)] | None = None
    hsts_include_subdomains: bool | None = None
    hsts_preload: bool | None = None


class ListenerCreate(ListenerUpdate):
    """Octavia's `listener` for create."""

    loadbalancer_id: Uuid
    protocol: Protocol
    protocol_port: Port
    project_id: Annotated[StrictStr, Field(max_length=36)] | None = None


def listener_json(state: SimState, listener: ListenerRecord) -> dict[str, Any]:
    """Octavia's `listener` object."""
    shown = {key: listener.attributes.get(key, DEFAULTS[key]) for key in DEFAULTS}
    return shown | {
        "id": listener.id,
        "name": listener.name,
        "description": listener.description,
        "admin_state_up": listener.admin_state_up,
        "tags": list(listener.tags),
        "provisioning_status": listener.provisioning_status,
        "operating_status": listener_status(state, listener),
        "protocol": listener.protocol,
        "protocol_port": listener.protocol_port,
        "project_id": listener.project_id,
        "default_pool_id": listener.default_pool_id,
        "l7policies": [],
        "loadbalancers": [{"id": listener.loadbalancer_id}],
        "created_at": isotime(listener.created_at),
        "updated_at": isotime(listener.updated_at),
    }


def find_listener(state: SimState, listener_id: str, project_id: str) -> ListenerRecord:
    """The caller's listener, or Octavia's 404."""
    found = state.octavia.listeners.get(listener_id)
    return visible(found, "Listener", listener_id, project_id)


def _check_pool(state: SimState, loadbalancer_id: str, pool_id: str, protocol: str) -> None:
    pool = state.octavia.pools.get(pool_id)
    if protocol == "PROMETHEUS":
        raise fault("ListenerNoChildren", protocol=protocol)
    if pool is None or pool.loadbalancer_id != loadbalancer_id:
        raise not_found("Pool", pool_id)
    if pool.protocol not in validate.LISTENER_POOL_PROTOCOLS[protocol]:
        raise validation(
            f"The pool protocol '{pool.protocol}' is invalid while the listener protocol "
            f"is '{protocol}'."
        )


def _check_port(state: SimState, loadbalancer_id: str, protocol: str, port: int) -> None:
    l4 = L4_PROTOCOLS.get(protocol, "TCP")
    for other in state.octavia.listeners_of(loadbalancer_id):
        if other.protocol_port == port and L4_PROTOCOLS.get(other.protocol, "TCP") == l4:
            raise fault("DuplicateListenerEntry", protocol=other.protocol, port=port)


def _vips(loadbalancer: LoadBalancerRecord) -> list[str]:
    extra = loadbalancer.attributes.get("additional_vips") or []
    return [loadbalancer.vip_address, *(v["ip_address"] for v in extra if v["ip_address"])]


def create_listener(state: SimState, project_id: str, body: ListenerCreate) -> ListenerRecord:
    """A new PENDING_CREATE listener; its load balancer goes PENDING_UPDATE."""
    loadbalancer = state.octavia.loadbalancers.get(body.loadbalancer_id)
    loadbalancer = visible(loadbalancer, "Load Balancer", body.loadbalancer_id, project_id)
    if body.project_id not in (None, project_id):
        raise fault("PolicyForbidden")
    ensure_quota(state, project_id, "listener")
    if body.default_pool_id:
        _check_pool(state, loadbalancer.id, body.default_pool_id, body.protocol)
    ensure_mutable(loadbalancer)
    given = body.model_dump(exclude={"loadbalancer_id", "protocol", "protocol_port", "project_id"})
    attributes = {k: DEFAULTS[k] if v is None else v for k, v in given.items() if k in DEFAULTS}
    if body.protocol == "TERMINATED_HTTPS":
        attributes |= {k: attributes[k] or v for k, v in TLS_DEFAULTS.items()}
    validate.check_headers(body.insert_headers, body.protocol)
    validate.check_tls(attributes, body.protocol)
    _check_port(state, loadbalancer.id, body.protocol, body.protocol_port)
    validate.check_cidrs(body.allowed_cidrs, _vips(loadbalancer))
    validate.check_hsts(attributes, body.protocol)
    begin(state, loadbalancer)
    listener = ListenerRecord(
        id=str(uuid.uuid4()),
        project_id=project_id,
        loadbalancer_id=loadbalancer.id,
        protocol=body.protocol,
        protocol_port=body.protocol_port,
        default_pool_id=body.default_pool_id,
        created_at=state.now(),
    )
    apply_changes(listener, attributes)
    state.octavia.listeners[listener.id] = listener
    return listener


def update_listener(state: SimState, listener: ListenerRecord, body: ListenerUpdate) -> None:
    """Change a listener's attributes; null resets one to its default."""
    changes = {k: DEFAULTS.get(k) if v is None else v for k, v in changes_of(body).items()}
    if listener.protocol == "TERMINATED_HTTPS":
        changes |= {k: v for k, v in TLS_DEFAULTS.items() if k in changes and not changes[k]}
    given, protocol = changes_of(body), listener.protocol
    validate.check_tls_update(listener.attributes, given, protocol)
    validate.check_headers(body.insert_headers, protocol)
    validate.check_cidrs(body.allowed_cidrs, _vips(_loadbalancer(state, listener)))
    validate.check_hsts_update(listener.attributes, given, protocol)
    if body.default_pool_id:
        _check_pool(state, listener.loadbalancer_id, body.default_pool_id, protocol)
    begin(state, _loadbalancer(state, listener), (listener,))
    apply_changes(listener, changes)


def _loadbalancer(state: SimState, listener: ListenerRecord) -> LoadBalancerRecord:
    return state.octavia.loadbalancers[listener.loadbalancer_id]


def delete_listener(state: SimState, listener: ListenerRecord) -> None:
    """Start deleting a listener (its default pool stays, serving no longer)."""
    begin(state, _loadbalancer(state, listener), (listener,), status=PENDING_DELETE)


@router.get("")
async def list_listeners(request: Request, token: AuthToken) -> Response:
    """The caller's listeners."""
    state = state_of(request)
    found = [li for li in state.octavia.listeners.values() if li.project_id == token.project_id]
    return list_response(request, "listeners", [listener_json(state, li) for li in found])


@router.get("/{listener_id}")
async def show_listener(request: Request, listener_id: str, token: AuthToken) -> Response:
    """One listener."""
    state = state_of(request)
    listener = find_listener(state, listener_id, token.project_id)
    return JSONResponse({"listener": listener_json(state, listener)})


@router.post("", status_code=201)
async def post_listener(request: Request, token: AuthToken) -> Response:
    """Create a listener."""
    state = state_of(request)
    body = await read_body(request, "listener", ListenerCreate)
    listener = create_listener(state, token.project_id, body)
    return JSONResponse({"listener": listener_json(state, listener)}, status_code=201)


@router.put("/{listener_id}")
async def put_listener(request: Request, listener_id: str, token: AuthToken) -> Response:
    """Update a listener."""
    state = state_of(request)
    body = await read_body(request, "listener", ListenerUpdate)
    listener = find_listener(state, listener_id, token.project_id)
    update_listener(state, listener, body)
    return JSONResponse({"listener": listener_json(state, listener)})


@router.delete("/{listener_id}", status_code=204)
async def remove_listener(request: Request, listener_id: str, token: AuthToken) -> Response:
    """Delete a listener."""
    state = state_of(request)
    delete_listener(state, find_listener(state, listener_id, token.project_id))
    return Response(status_code=204)
