"""`/v1/{project_id}/software_deployments`: Heat's record of configs applied to servers,
written by the API directly (and by the in-guest agent, through `PUT`)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response, status
from pydantic import BaseModel, ConfigDict, StrictStr
from sqlmodel import Session

from api.deps import Database, DbDep, TemporalDep
from api.paths import ProjectCaller, ProjectWriter
from api.schemas.common import ERROR_RESPONSES
from api.stack_service import new_action_id, send_stack_update
from api.temporal import TemporalGateway
from domain.errors import InvalidRequest, PlainNotFound
from domain.stack.requests import ResourceSignalRequest
from domain.stack.types.software_config import config_view
from domain.stack.types.software_deployment import SoftwareDeployment, deployment_view
from store.columns import now_utc
from store.software_configs import get_config
from store.software_deployments import (
    delete_deployment,
    get_deployment,
    list_deployments,
    save_deployment,
    server_configs,
    update_deployment,
)
from store.stacks import get_stack
from workflows.stack.messages import StackOperations

router = APIRouter(
    prefix="/v1/{project_id}/software_deployments",
    tags=["software deployments"],
    responses=ERROR_RESPONSES,
)
DeploymentId = Annotated[str, Path(max_length=64)]
ServerId = Annotated[str, Path(max_length=64)]


class DeploymentCreate(BaseModel):
    """`POST …/software_deployments`."""

    model_config = ConfigDict(extra="ignore")

    config_id: StrictStr | None = None
    server_id: StrictStr | None = None
    input_values: dict[str, Any] | None = None
    action: StrictStr | None = None
    status: StrictStr | None = None
    status_reason: Any = None
    stack_user_project_id: StrictStr | None = None


class DeploymentUpdate(BaseModel):
    """`PUT …/software_deployments/{id}`: the fields given replace the stored ones."""

    model_config = ConfigDict(extra="ignore")

    config_id: StrictStr | None = None
    input_values: dict[str, Any] | None = None
    output_values: dict[str, Any] | None = None
    action: StrictStr | None = None
    status: StrictStr | None = None
    status_reason: Any = None


def _not_found(deployment_id: str) -> PlainNotFound:
    return PlainNotFound(f"Deployment with id {deployment_id} not found")


def _check_config(session: Session, project_id: str, config_id: str) -> None:
    if get_config(session, project_id, config_id) is None:
        raise InvalidRequest(f"Invalid: Config with id {config_id} not found")


def _create(session: Session, deployment: SoftwareDeployment) -> SoftwareDeployment:
    _check_config(session, deployment.project_id, deployment.config_id)
    return save_deployment(session, deployment)


def _update(
    session: Session, project_id: str, deployment_id: str, changes: dict[str, Any]
) -> SoftwareDeployment:
    if "config_id" in changes:
        _check_config(session, project_id, changes["config_id"])
    updated = update_deployment(session, project_id, deployment_id, changes)
    if updated is None:
        raise _not_found(deployment_id)
    return updated


def _text(name: str, value: str | None, limit: int = 255) -> str | None:
    if value is not None and len(value) > limit:
        raise InvalidRequest(f'"{name}" should be no more than {limit} characters')
    return value


@router.get("")
async def list_software_deployments_route(
    caller: ProjectCaller,
    db: DbDep,
    server_id: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """The project's deployments, of one server with `server_id`."""
    found = await db.run(list_deployments, caller.project_id, server_id)
    return {"software_deployments": [deployment_view(d) for d in found]}


@router.get("/metadata/{server_id}")
async def server_deployment_metadata_route(
    caller: ProjectCaller, db: DbDep, server_id: ServerId
) -> dict[str, Any]:
    """The configs deployed to a server, by config name: what its agent applies."""
    configs = await db.run(server_configs, caller.project_id, server_id)
    return {"metadata": [config_view(c) for c in configs]}


@router.post("")
async def create_software_deployment_route(
    caller: ProjectWriter, db: DbDep, body: DeploymentCreate
) -> dict[str, Any]:
    """Record a deployment of a config to a server (200, as Heat answers)."""
    if not body.server_id:
        raise InvalidRequest("server_id must be specified")
    if not body.config_id:
        raise InvalidRequest("config_id must be specified")
    deployment = SoftwareDeployment(
        id=str(uuid.uuid4()),
        project_id=caller.project_id,
        config_id=_text("config_id", body.config_id, 64) or "",
        server_id=_text("server_id", body.server_id, 64) or "",
        input_values=body.input_values,
        action=_text("action", body.action),
        status=_text("status", body.status),
        status_reason=None if body.status_reason is None else str(body.status_reason),
        stack_user_project_id=_text("stack_user_project_id", body.stack_user_project_id, 64),
        created_at=now_utc(),
    )
    saved = await db.run(_create, deployment)
    return {"software_deployment": deployment_view(saved)}


@router.get("/{deployment_id}")
async def show_software_deployment_route(
    caller: ProjectCaller, db: DbDep, deployment_id: DeploymentId
) -> dict[str, Any]:
    """One deployment."""
    found = await db.run(get_deployment, caller.project_id, deployment_id)
    if found is None:
        raise _not_found(deployment_id)
    return {"software_deployment": deployment_view(found)}


@router.put("/{deployment_id}")
async def update_software_deployment_route(
    caller: ProjectWriter,
    db: DbDep,
    temporal: TemporalDep,
    deployment_id: DeploymentId,
    body: DeploymentUpdate,
) -> dict[str, Any]:
    """Change a deployment: the fields given (not null, not empty) replace the stored."""
    changes: dict[str, Any] = {
        key: value for key, value in body.model_dump().items() if value not in (None, "", {})
    }
    for key in ("action", "status"):
        _text(key, changes.get(key))
    if "status_reason" in changes:
        changes["status_reason"] = str(changes["status_reason"])
    changes["updated_at"] = now_utc()
    updated = await db.run(_update, caller.project_id, deployment_id, changes)
    if "status" in changes and updated.stack_id and updated.resource_name:
        await _tell_waiting_step(db, temporal, updated)
    return {"software_deployment": deployment_view(updated)}


async def _tell_waiting_step(
    db: Database, temporal: TemporalGateway, deployment: SoftwareDeployment
) -> None:
    """A deployment resource waiting for this record reads it again (Heat's resource
    polls the record; Warden's step is told)."""
    stack = await db.run(get_stack, deployment.project_id, deployment.stack_id or "")
    if stack is None:
        return
    request = ResourceSignalRequest(
        action_id=new_action_id(),
        resource_name=deployment.resource_name or "",
        deployment=True,
        refresh=True,
    )
    await send_stack_update(temporal, stack, StackOperations.deliver_signal, request)


@router.delete("/{deployment_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_software_deployment_route(
    caller: ProjectWriter, db: DbDep, deployment_id: DeploymentId
) -> Response:
    """Delete a deployment (204)."""
    if not await db.run(delete_deployment, caller.project_id, deployment_id):
        raise _not_found(deployment_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
