"""`/v1/{project_id}/software_configs`: Heat's config store, written by the API directly
(a config has no lifecycle: it is stored once, read, and deleted)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response, status
from pydantic import BaseModel, ConfigDict
from sqlmodel import Session

from api.auth import Role
from api.deps import DbDep
from api.heat_params import heat_bool, heat_int
from api.paths import ProjectCaller, ProjectWriter
from api.schemas.common import ERROR_RESPONSES
from domain.errors import InvalidRequest, PlainNotFound
from domain.stack.types.software_config import SoftwareConfig, checked_io, config_view
from store.columns import now_utc
from store.software_configs import delete_config, get_config, list_configs, save_config
from store.software_deployments import config_in_use

router = APIRouter(
    prefix="/v1/{project_id}/software_configs",
    tags=["software configs"],
    responses=ERROR_RESPONSES,
)
ConfigId = Annotated[str, Path(max_length=64)]


class ConfigCreate(BaseModel):
    """`POST …/software_configs`: any field may be left out, as in Heat."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    group: str | None = None
    config: Any = None
    inputs: Any = None
    outputs: Any = None
    options: dict[str, Any] | None = None


def _not_found(config_id: str) -> PlainNotFound:
    return PlainNotFound(f"Software config with id {config_id} not found")


def _delete(session: Session, project_id: str, config_id: str) -> None:
    """Delete a config no deployment uses (Heat's `software_config_delete`)."""
    if get_config(session, project_id, config_id) is None:
        raise _not_found(config_id)
    if config_in_use(session, config_id):
        raise InvalidRequest(
            f"Software config with id {config_id} can not be deleted as it is referenced."
        )
    delete_config(session, project_id, config_id)


@router.get("")
async def list_software_configs_route(
    caller: ProjectCaller,
    db: DbDep,
    limit: Annotated[str | None, Query(max_length=16)] = None,
    marker: Annotated[str | None, Query(max_length=64)] = None,
    global_tenant: Annotated[str | None, Query(max_length=8)] = None,
) -> dict[str, Any]:
    """The project's configs (every project's with `global_tenant=true`, for an admin),
    oldest first, without their config, inputs and outputs."""
    every = global_tenant is not None and heat_bool("global_tenant", global_tenant)
    if every and Role.ADMIN not in caller.roles:
        every = False
    project = None if every else caller.project_id
    found = await db.run(list_configs, project, limit=heat_int("limit", limit), marker=marker)
    if found is None:
        raise _not_found(str(marker))
    views = [config_view(c, detail=False) for c in found]
    if every:
        views = [v | {"project": c.project_id} for v, c in zip(views, found, strict=True)]
    return {"software_configs": views}


@router.post("")
async def create_software_config_route(
    caller: ProjectWriter, db: DbDep, body: ConfigCreate
) -> dict[str, Any]:
    """Store a config (200, as Heat answers)."""
    config = SoftwareConfig(
        id=str(uuid.uuid4()),
        project_id=caller.project_id,
        name=body.name,
        group=body.group,
        config=body.config,
        inputs=checked_io(body.inputs, inputs=True),
        outputs=checked_io(body.outputs, inputs=False),
        options=body.options or {},
        created_at=now_utc(),
    )
    saved = await db.run(save_config, config)
    return {"software_config": config_view(saved)}


@router.get("/{config_id}")
async def show_software_config_route(
    caller: ProjectCaller, db: DbDep, config_id: ConfigId
) -> dict[str, Any]:
    """One config, with its config, inputs, outputs and options."""
    found = await db.run(get_config, caller.project_id, config_id)
    if found is None:
        raise _not_found(config_id)
    return {"software_config": config_view(found)}


@router.delete("/{config_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_software_config_route(
    caller: ProjectWriter, db: DbDep, config_id: ConfigId
) -> Response:
    """Delete a config (204)."""
    await db.run(_delete, caller.project_id, config_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
