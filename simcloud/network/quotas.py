"""`/v2.0/quotas`: a project's limits (Neutron's defaults) and its usage.

Creates are checked against these limits in `records.ensure_quota`, answering 409
`OverQuota` ("Quota exceeded for resources: ['port']."). Changing quotas is the
admin's (403 here); a member reads only its own project's.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.identity import AuthToken
from simcloud.network.exceptions import policy_denied
from simcloud.network.records import quota_limits
from simcloud.network.state import DEFAULT_QUOTAS
from simcloud.state import state_of

router = APIRouter(prefix="/v2.0/quotas")


def _own(project_id: str, caller: str) -> None:
    if project_id != caller:
        raise policy_denied("get_quota")


@router.get("")
async def list_quotas(_: AuthToken) -> Response:
    """Every project's non-default quotas: an admin's query."""
    raise policy_denied("get_quota")


@router.get("/{project_id}")
async def show_quota(request: Request, project_id: str, token: AuthToken) -> Response:
    """The project's quotas (Neutron's defaults, or those simcloud was started with)."""
    _own(project_id, token.project_id)
    return JSONResponse({"quota": quota_limits(state_of(request))})


@router.get("/{project_id}/default")
async def show_default_quota(project_id: str, token: AuthToken) -> Response:
    """The default quotas."""
    _own(project_id, token.project_id)
    return JSONResponse({"quota": dict(DEFAULT_QUOTAS)})


@router.get("/{project_id}/details")
async def show_quota_details(request: Request, project_id: str, token: AuthToken) -> Response:
    """Limits with what the project uses (`quota_details`)."""
    _own(project_id, token.project_id)
    net = state_of(request).network
    details = {
        resource: {"limit": limit, "used": net.used(project_id, resource), "reserved": 0}
        for resource, limit in quota_limits(state_of(request)).items()
    }
    return JSONResponse({"quota": details})


@router.put("/{project_id}")
async def update_quota(project_id: str, _: AuthToken) -> Response:
    """Setting quotas is the admin's."""
    raise policy_denied("update_quota")


@router.delete("/{project_id}")
async def reset_quota(project_id: str, _: AuthToken) -> Response:
    """Resetting quotas is the admin's."""
    raise policy_denied("delete_quota")
