"""Load balancers: a VIP on a simcloud network, with listeners and pools below it.

A create is PENDING_CREATE (operating OFFLINE) for `lb_latency_ms`, then ACTIVE and
ONLINE; its VIP is a Neutron port (see `vip`). The `amphora` provider (or its alias
`octavia`) is the only one; simcloud has no Octavia flavors, availability zones or
QoS, so a create naming one answers 400 as such a deployment would. A load balancer
with listeners or pools is deleted only with `?cascade=true`.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.identity import AuthToken
from simcloud.octavia.bodies import (
    Description,
    IpAddress,
    Name,
    Tags,
    Uuid,
    apply_changes,
    changes_of,
    read_body,
)
from simcloud.octavia.exceptions import fault, validation, visible
from simcloud.octavia.listing import list_response
from simcloud.octavia.operating import (
    loadbalancer_status,
)
from simcloud.octavia.pools import pool_operating_status
from simcloud.octavia.provisioning import begin_own, start_create
from simcloud.octavia.quotas import ensure_quota
from simcloud.octavia.state import (
    PENDING_DELETE,
    PENDING_UPDATE,
    LoadBalancerRecord,
    isotime,
)
from simcloud.octavia.status import status_tree
from simcloud.octavia.vip import VipRequest, allocate_vip, check_security_groups, resolve_vip
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2/lbaas/loadbalancers")

PROVIDERS = ("amphora", "octavia")
TRUE_WORDS = frozenset({"1", "t", "true", "on", "y", "yes"})


class AdditionalVip(BaseModel):
    """One of `additional_vips`: another subnet of the VIP network, and its address."""

    model_config = ConfigDict(extra="forbid")

    subnet_id: Uuid
    ip_address: IpAddress | None = None
    port_id: Uuid | None = None


class LoadBalancerUpdate(BaseModel):
    """Octavia's `loadbalancer` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    admin_state_up: bool | None = None
    vip_qos_policy_id: Uuid | None = None
    vip_sg_ids: list[Uuid] | None = None
    tags: Tags | None = None


class LoadBalancerCreate(LoadBalancerUpdate):
    """Octavia's `loadbalancer` for create."""

    name: Name = ""
    description: Description = ""
    admin_state_up: bool = True
    vip_address: IpAddress | None = None
    vip_port_id: Uuid | None = None
    vip_subnet_id: Uuid | None = None
    vip_network_id: Uuid | None = None
    additional_vips: list[AdditionalVip] = []
    project_id: Annotated[StrictStr, Field(max_length=36)] | None = None
    listeners: list[dict[str, Any]] = []
    pools: list[dict[str, Any]] = []
    provider: Annotated[StrictStr, Field(max_length=64)] | None = None
    tags: Tags = []
    flavor_id: Uuid | None = None
    availability_zone: Annotated[StrictStr, Field(max_length=255)] | None = None


def loadbalancer_json(state: SimState, loadbalancer: LoadBalancerRecord) -> dict[str, Any]:
    """Octavia's `loadbalancer` object."""
    octavia, attributes = state.octavia, loadbalancer.attributes
    pools = octavia.pools_of(loadbalancer.id)
    pool_statuses = [pool_operating_status(state, p) for p in pools]
    return {
        "id": loadbalancer.id,
        "name": loadbalancer.name,
        "description": loadbalancer.description,
        "provisioning_status": loadbalancer.provisioning_status,
        "operating_status": loadbalancer_status(loadbalancer, pool_statuses),
        "admin_state_up": loadbalancer.admin_state_up,
        "project_id": loadbalancer.project_id,
        "created_at": isotime(loadbalancer.created_at),
        "updated_at": isotime(loadbalancer.updated_at),
        "vip_address": loadbalancer.vip_address,
        "vip_port_id": loadbalancer.vip_port_id,
        "vip_subnet_id": loadbalancer.vip_subnet_id,
        "vip_network_id": loadbalancer.vip_network_id,
        "vip_qos_policy_id": None,
        "vip_sg_ids": list(attributes.get("vip_sg_ids") or []),
        "vip_vnic_type": "normal",
        "additional_vips": [dict(v) for v in attributes.get("additional_vips") or []],
        "listeners": [{"id": li.id} for li in octavia.listeners_of(loadbalancer.id)],
        "pools": [{"id": p.id} for p in pools],
        "provider": loadbalancer.provider,
        "flavor_id": None,
        "availability_zone": None,
        "tags": list(loadbalancer.tags),
    }


def find_loadbalancer(state: SimState, loadbalancer_id: str, project_id: str) -> LoadBalancerRecord:
    """The caller's load balancer, or Octavia's 404."""
    found = state.octavia.loadbalancers.get(loadbalancer_id)
    return visible(found, "Load Balancer", loadbalancer_id, project_id)


def _vip_request(body: LoadBalancerCreate) -> VipRequest:
    return VipRequest(
        port_id=body.vip_port_id,
        subnet_id=body.vip_subnet_id,
        network_id=body.vip_network_id,
        address=body.vip_address,
        qos_policy_id=body.vip_qos_policy_id,
        sg_ids=tuple(body.vip_sg_ids or ()),
        additional=tuple((v.subnet_id, v.ip_address) for v in body.additional_vips),
    )


def _check_options(body: LoadBalancerCreate) -> str:
    """The provider, once flavor, availability zone and graph are known to be absent."""
    if body.flavor_id is not None:
        raise validation("Invalid flavor_id.")
    if body.availability_zone is not None:
        raise validation("Invalid availability zone.")
    provider = body.provider or "amphora"
    if provider not in PROVIDERS:
        raise fault("ProviderNotEnabled", prov=provider)
    if body.listeners or body.pools:
        # Octavia's "fully populated" create; simcloud makes the objects one by one.
        raise validation("simcloud does not create fully populated load balancers.")
    return provider


def create_loadbalancer(
    state: SimState, project_id: str, body: LoadBalancerCreate
) -> LoadBalancerRecord:
    """A new PENDING_CREATE load balancer with its VIP port."""
    if body.project_id not in (None, project_id):
        raise fault("PolicyForbidden")
    vip = resolve_vip(state, project_id, _vip_request(body))
    provider = _check_options(body)
    ensure_quota(state, project_id, "load_balancer")
    loadbalancer_id = str(uuid.uuid4())
    owned = allocate_vip(state, loadbalancer_id, project_id, vip)
    loadbalancer = LoadBalancerRecord(
        id=loadbalancer_id,
        project_id=project_id,
        name=body.name,
        description=body.description,
        admin_state_up=body.admin_state_up,
        tags=list(body.tags),
        provider=provider,
        vip_address=str(vip.address),
        vip_port_id=str(vip.port_id),
        vip_subnet_id=vip.subnet_id,
        vip_network_id=vip.network_id,
        vip_port_owned=owned,
        created_at=state.now(),
        attributes={"additional_vips": vip.additional, "vip_sg_ids": vip.sg_ids},
    )
    state.octavia.loadbalancers[loadbalancer.id] = loadbalancer
    start_create(state, loadbalancer)
    return loadbalancer


def update_loadbalancer(
    state: SimState, loadbalancer: LoadBalancerRecord, body: LoadBalancerUpdate
) -> None:
    """Change name, description, admin_state_up, tags or VIP security groups."""
    changes = changes_of(body)
    if body.vip_qos_policy_id is not None:
        raise validation("VIP QoS policy is not allowed in this deployment.")
    changes.pop("vip_qos_policy_id", None)
    check_security_groups(state, loadbalancer.project_id, body.vip_sg_ids or [])
    begin_own(state, loadbalancer, PENDING_UPDATE)
    resets = {"name": "", "description": "", "admin_state_up": True, "tags": [], "vip_sg_ids": []}
    apply_changes(loadbalancer, {k: resets[k] if v is None else v for k, v in changes.items()})


def delete_loadbalancer(state: SimState, loadbalancer: LoadBalancerRecord, cascade: bool) -> None:
    """Start deleting a load balancer (and, with `cascade`, everything below it)."""
    children = list(state.octavia.objects_of(loadbalancer.id))
    if children and not cascade:
        raise validation(f"Cannot delete Load Balancer {loadbalancer.id} - it has children")
    begin_own(state, loadbalancer, PENDING_DELETE)
    for child in children:
        child.provisioning_status = PENDING_DELETE


@router.get("")
async def list_loadbalancers(request: Request, token: AuthToken) -> Response:
    """The caller's load balancers."""
    state = state_of(request)
    mine = [r for r in state.octavia.loadbalancers.values() if r.project_id == token.project_id]
    return list_response(request, "loadbalancers", [loadbalancer_json(state, r) for r in mine])


@router.get("/{loadbalancer_id}")
async def show_loadbalancer(request: Request, loadbalancer_id: str, token: AuthToken) -> Response:
    """One load balancer."""
    state = state_of(request)
    found = find_loadbalancer(state, loadbalancer_id, token.project_id)
    return JSONResponse({"loadbalancer": loadbalancer_json(state, found)})


@router.get("/{loadbalancer_id}/status")
@router.get("/{loadbalancer_id}/statuses", include_in_schema=False)
async def show_status(request: Request, loadbalancer_id: str, token: AuthToken) -> Response:
    """The status tree (`statuses` is neutron-lbaas's spelling, still served)."""
    state = state_of(request)
    found = find_loadbalancer(state, loadbalancer_id, token.project_id)
    return JSONResponse({"statuses": status_tree(state, found)})


@router.get("/{loadbalancer_id}/stats")
async def show_stats(request: Request, loadbalancer_id: str, token: AuthToken) -> Response:
    """Traffic statistics: simcloud carries no traffic, so all zero."""
    find_loadbalancer(state_of(request), loadbalancer_id, token.project_id)
    counters = ("bytes_in", "bytes_out", "active_connections", "total_connections")
    stats = dict.fromkeys((*counters, "request_errors"), 0)
    return JSONResponse({"stats": stats})


@router.post("", status_code=201)
async def post_loadbalancer(request: Request, token: AuthToken) -> Response:
    """Create a load balancer."""
    state = state_of(request)
    body = await read_body(request, "loadbalancer", LoadBalancerCreate)
    created = create_loadbalancer(state, token.project_id, body)
    return JSONResponse({"loadbalancer": loadbalancer_json(state, created)}, status_code=201)


@router.put("/{loadbalancer_id}")
async def put_loadbalancer(request: Request, loadbalancer_id: str, token: AuthToken) -> Response:
    """Update a load balancer."""
    state = state_of(request)
    body = await read_body(request, "loadbalancer", LoadBalancerUpdate)
    found = find_loadbalancer(state, loadbalancer_id, token.project_id)
    update_loadbalancer(state, found, body)
    return JSONResponse({"loadbalancer": loadbalancer_json(state, found)})


@router.delete("/{loadbalancer_id}", status_code=204)
async def remove_loadbalancer(
    request: Request, loadbalancer_id: str, token: AuthToken, cascade: str = "false"
) -> Response:
    """Delete a load balancer (`?cascade=true`: with its listeners and pools)."""
    state = state_of(request)
    found = find_loadbalancer(state, loadbalancer_id, token.project_id)
    delete_loadbalancer(state, found, cascade.lower() in TRUE_WORDS)
    return Response(status_code=204)
