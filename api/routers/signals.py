"""`POST /v1/signal/{signal_id}`: the token-free URL of a wait condition handle (no token:
the URL is the credential, as a Swift TempURL or a CFN-signed URL is in Heat)."""

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
from store.stacks import StackRecord, StackResourceRecord
from workflows.stack.messages import StackOperations

router = APIRouter(prefix="/v1/signal", tags=["stacks"], responses=ERROR_RESPONSES)
SignalId = Annotated[str, Path(min_length=32, max_length=64)]


def _signalled(session: Session, signal_id: str) -> tuple[StackRecord, str] | None:
    """The stack and the name of the handle whose signal id this is."""
    query = select(StackResourceRecord).where(
        StackResourceRecord.physical_id == signal_id, StackResourceRecord.type == HANDLE
    )
    resource = session.exec(query).first()
    if resource is None:
        return None
    stack = session.get(StackRecord, resource.stack_id)
    return None if stack is None else (stack, resource.name)


@router.post("/{signal_id}", status_code=status.HTTP_200_OK)
async def signal_route(
    db: DbDep,
    temporal: TemporalDep,
    signal_id: SignalId,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> Response:
    """Signal the handle: `{"status": "SUCCESS"|"FAILURE", "reason", "data", "id"}`, each
    optional (an empty body is a SUCCESS numbered by arrival)."""
    found = await db.run(_signalled, signal_id)
    if found is None:
        raise NotFound(f"The signal URL {signal_id} names no wait condition handle.")
    stack, name = found
    request = ResourceSignalRequest(
        action_id=new_action_id(), resource_name=name, details=body or {}
    )
    await send_stack_update(temporal, stack, StackOperations.deliver_signal, request)
    return Response(status_code=status.HTTP_200_OK)
