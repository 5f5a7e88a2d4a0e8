"""Warden's engines (its workers) as Heat's and Senlin's service lists: `openstack
orchestration service list` and `openstack cluster service list` (domain/engine_services).

Both are admin-only, as in Heat and Senlin. The list comes from Temporal's view of the
task queue, so it shows every worker of every replica, up or down, wherever it runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from api.auth import CallerDep, Role
from api.deps import TemporalDep
from api.paths import ProjectCaller
from api.schemas.common import ERROR_RESPONSES
from domain.engine_services import engine_services
from domain.errors import Forbidden

router = APIRouter(tags=["services"], responses=ERROR_RESPONSES)


class ServiceList(BaseModel):
    """`{"services": [...]}`, each in its API's own fields."""

    services: list[dict[str, Any]]


def _require_admin(roles: frozenset[Role]) -> None:
    if Role.ADMIN not in roles:
        raise Forbidden("Only an admin may list services.")


@router.get("/v1/{project_id}/services", response_model=ServiceList)
async def heat_services_route(
    caller: ProjectCaller,
    temporal: TemporalDep,
) -> ServiceList:
    """Heat's engines: one per worker polling the task queue, `up` or `down`."""
    _require_admin(caller.roles)
    found = engine_services(await temporal.pollers(), datetime.now(UTC))
    return ServiceList(services=[s.as_heat(temporal.settings.task_queue) for s in found])


@router.get("/v1/services", response_model=ServiceList)
async def senlin_services_route(caller: CallerDep, temporal: TemporalDep) -> ServiceList:
    """Senlin's engines: one per worker polling the task queue, `up` or `down`."""
    _require_admin(caller.roles)
    found = engine_services(await temporal.pollers(), datetime.now(UTC))
    return ServiceList(services=[s.as_senlin(temporal.settings.task_queue) for s in found])
