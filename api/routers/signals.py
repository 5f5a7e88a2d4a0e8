"""`POST /v1/signal/{signal_id}`: the token-free URL of a wait condition handle or a
software deployment (no token: the URL is the credential, as a Swift TempURL or a
CFN-signed URL is in Heat)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Response, status
from sqlmodel import Session, select

from api.deps import DbDep, TemporalDep
from api.schemas.common import ERROR_RESPONSES
from api.stack_service import new_action_id, send_stack_update
from domain.errors import NotFound
from domain.stack.requests import ResourceSignalRequest
from domain.stack.types.wait_condition import HANDLE
from store.software_deployments import SoftwareDeploymentRecord
from store.stacks import StackRecord, StackResourceRecord
from workflows.stack.messages import StackOperations

router = APIRouter(prefix="/v1/signal", tags=["stacks"], responses=ERROR_RESPONSES)
SignalId = Annotated[str, Path(min_length=32, max_length=64)]


def _signalled(session: Session, signal_id: str) -> tuple[StackRecord, str, bool] | None:
    """The stack and the name of the handle or software deployment whose signal id this
    is, and whether it is a deployment."""
    query = select(StackResourceRecord).where(
        StackResourceRecord.physical_id == signal_id, StackResourceRecord.type == HANDLE
    )
    resource = session.exec(query).first()
    if resource is not None:
        stack = session.get(StackRecord, resource.stack_id)
        return None if stack is None else (stack, resource.name, False)
    deployment = session.get(SoftwareDeploymentRecord, signal_id)
    if deployment is None or deployment.stack_id is None or deployment.resource_name is None:
        return None
    stack = session.get(StackRecord, deployment.stack_id)
    return None if stack is None else (stack, deployment.resource_name, True)


@router.post("/{signal_id}", status_code=status.HTTP_200_OK)
async def signal_route(
    db: DbDep,
    temporal: TemporalDep,
    signal_id: SignalId,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> Response:
    """Signal the handle: `{"status": "SUCCESS"|"FAILURE", "reason", "data", "id"}`, each
    optional (an empty body is a SUCCESS numbered by arrival); or the deployment: its
    outputs (`deploy_stdout`, `deploy_stderr`, `deploy_status_code`, the config's own)."""
    found = await db.run(_signalled, signal_id)
    if found is None:
        raise NotFound(f"The signal URL {signal_id} names no wait condition handle or deployment.")
    stack, name, deployment = found
    request = ResourceSignalRequest(
        action_id=new_action_id(), resource_name=name, details=body or {}, deployment=deployment
    )
    await send_stack_update(temporal, stack, StackOperations.deliver_signal, request)
    return Response(status_code=status.HTTP_200_OK)
