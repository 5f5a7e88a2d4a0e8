"""Octavia quotas: a project's limits, checked on every create, and `/v2/lbaas/quotas`.

Octavia's own default is unlimited; simcloud's defaults (`DEFAULT_QUOTAS`) may be
replaced with `SimConfig.lb_quotas`. A create past a limit answers 403
`QuotaException` ("Quota has been met for resources: Load Balancer"). Setting quotas
is the admin's (403 here); a member reads its own project's.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.identity import AuthToken
from simcloud.octavia.exceptions import fault
from simcloud.octavia.state import DEFAULT_QUOTAS
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2/lbaas/quotas")

#: Quota resource → the object's name in Octavia's messages (`data_models.*._name()`).
RESOURCE_NAMES = {
    "load_balancer": "Load Balancer",
    "listener": "Listener",
    "pool": "Pool",
    "health_monitor": "Health Monitor",
    "member": "Member",
}


def quota_limits(state: SimState) -> dict[str, int]:
    """The project's limits: simcloud's defaults with those it was started with."""
    configured = state.config.lb_quotas
    return DEFAULT_QUOTAS | {k: v for k, v in configured.items() if k in DEFAULT_QUOTAS}


def ensure_quota(state: SimState, project_id: str, resource: str, count: int = 1) -> None:
    """403 QuotaException when `count` more objects would pass the project's limit."""
    limit = quota_limits(state)[resource]
    if limit >= 0 and state.octavia.used(project_id, resource) + count > limit:
        raise fault("QuotaException", resource=RESOURCE_NAMES[resource])


def _shown(project_id: str, limits: dict[str, int]) -> dict[str, object]:
    # Octavia shows both spellings of two resources (the underscored ones deprecated).
    return {
        "project_id": project_id,
        "load_balancer": limits["load_balancer"],
        "loadbalancer": limits["load_balancer"],
        "listener": limits["listener"],
        "pool": limits["pool"],
        "health_monitor": limits["health_monitor"],
        "healthmonitor": limits["health_monitor"],
        "member": limits["member"],
        "l7policy": -1,
        "l7rule": -1,
    }


def _own(project_id: str, caller: str) -> None:
    if project_id != caller:
        raise fault("PolicyForbidden")


@router.get("")
async def list_quotas(request: Request, token: AuthToken) -> Response:
    """The caller's project quotas (the only ones a member may see)."""
    shown = _shown(token.project_id, quota_limits(state_of(request)))
    return JSONResponse({"quotas": [shown], "quotas_links": []})


@router.get("/{project_id}")
async def show_quota(request: Request, project_id: str, token: AuthToken) -> Response:
    """A project's quotas."""
    _own(project_id, token.project_id)
    return JSONResponse({"quota": _shown(project_id, quota_limits(state_of(request)))})


@router.get("/{project_id}/default")
async def show_default_quota(project_id: str, token: AuthToken) -> Response:
    """simcloud's default quotas."""
    _own(project_id, token.project_id)
    return JSONResponse({"quota": _shown(project_id, dict(DEFAULT_QUOTAS))})


@router.put("/{project_id}")
async def update_quota(project_id: str, _: AuthToken) -> Response:
    """Setting quotas is the admin's."""
    raise fault("PolicyForbidden")


@router.delete("/{project_id}")
async def reset_quota(project_id: str, _: AuthToken) -> Response:
    """Resetting quotas is the admin's."""
    raise fault("PolicyForbidden")
