"""`GET /v1/whoami`: the project and roles of the caller's token (what Keystone's token
validation tells an OpenStack client), so clients can build project-scoped URLs."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from api.auth import CallerDep
from api.schemas.common import ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["auth"], responses=ERROR_RESPONSES)


class CallerPublic(BaseModel):
    """Who the token belongs to."""

    project_id: str
    roles: list[str]


@router.get("/whoami", response_model=CallerPublic)
async def whoami_route(caller: CallerDep) -> CallerPublic:
    """The caller's project and roles."""
    return CallerPublic(project_id=caller.project_id, roles=sorted(r.value for r in caller.roles))
