"""Senlin's webhook receivers: `/v1/receivers` (a project's, with its token) and
`/v1/webhooks/{id}/trigger` (anyone holding the URL, as in Senlin: the receiver's id is
the credential, and the action runs as the receiver's project)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request, Response, status
from pydantic import ValidationError
from sqlmodel import Session

from api.auth import CallerDep, WriterDep
from api.cluster_service import find_cluster
from api.deps import DbDep, TemporalDep
from api.routers.clusters import run_cluster_action
from api.schemas.actions import ActionAccepted
from api.schemas.clusters import ClusterActionRequest
from api.schemas.common import ERROR_RESPONSES
from api.schemas.receivers import (
    ReceiverCreate,
    ReceiverEnvelope,
    ReceiverList,
    ReceiverPublic,
    ReceiverUpdate,
)
from api.senlin_lists import ReceiversQuery, filter_and_page
from api.urls import api_base
from domain.cluster.policies.specs import describe_validation_error
from domain.cluster.receivers import check_receiver, triggered_action
from domain.errors import InvalidRequest, NotFound
from store.clusters import get_cluster
from store.columns import now_utc
from store.receivers import ReceiverRecord, get_receiver, get_webhook, list_receivers

router = APIRouter(prefix="/v1", tags=["receivers"], responses=ERROR_RESPONSES)
ReceiverId = Annotated[str, Path(max_length=255)]
WebhookId = Annotated[str, Path(max_length=64)]


def _insert(session: Session, record: ReceiverRecord) -> ReceiverRecord:
    session.add(record)
    return record


def _delete(session: Session, project_id: str, receiver_id: str) -> None:
    record = get_receiver(session, project_id, receiver_id)
    if record is None:
        raise NotFound(f"The receiver '{receiver_id}' could not be found.")
    session.delete(record)


@router.post("/receivers", status_code=status.HTTP_201_CREATED, response_model=ReceiverEnvelope)
async def create_receiver_route(
    caller: WriterDep, db: DbDep, request: Request, body: ReceiverCreate
) -> ReceiverEnvelope:
    """A webhook receiver that runs `action` on the cluster (400 for what Warden cannot run)."""
    spec = body.receiver
    check_receiver(spec.type, spec.action, spec.params)
    try:
        cluster = await find_cluster(db, caller, spec.cluster_id)
    except NotFound as err:  # Senlin's 400: the body names a cluster that is not there
        raise InvalidRequest(
            f"The specified cluster '{spec.cluster_id}' could not be found."
        ) from err
    now = now_utc()
    record = ReceiverRecord(
        id=str(uuid.uuid4()),
        project_id=caller.project_id,
        name=spec.name,
        type=spec.type,
        cluster_id=cluster.id,
        action=spec.action,
        params=spec.params,
        created_at=now,
        updated_at=now,
    )
    await db.run(_insert, record)
    return ReceiverEnvelope(receiver=ReceiverPublic.of(record, api_base(request)))


@router.get("/receivers", response_model=ReceiverList)
async def list_receivers_route(
    caller: CallerDep, db: DbDep, request: Request, query: ReceiversQuery
) -> ReceiverList:
    """The project's receivers, filtered, sorted and paged as Senlin does."""
    records = await db.run(list_receivers, caller.project_id)
    base = api_base(request)
    views = [ReceiverPublic.of(r, base) for r in records]
    return ReceiverList(receivers=filter_and_page(views, query))


@router.get("/receivers/{receiver_id}", response_model=ReceiverEnvelope)
async def get_receiver_route(
    caller: CallerDep, db: DbDep, request: Request, receiver_id: ReceiverId
) -> ReceiverEnvelope:
    """One receiver by id, unique name or short id."""
    record = await db.run(get_receiver, caller.project_id, receiver_id)
    if record is None:
        raise NotFound(f"The receiver '{receiver_id}' could not be found.")
    return ReceiverEnvelope(receiver=ReceiverPublic.of(record, api_base(request)))


def _update(
    session: Session, project_id: str, receiver_id: str, body: ReceiverUpdate
) -> ReceiverRecord:
    record = get_receiver(session, project_id, receiver_id)
    if record is None:
        raise NotFound(f"The receiver '{receiver_id}' could not be found.")
    changes = body.receiver
    action = changes.action or record.action
    params = record.params if changes.params is None else changes.params
    check_receiver(record.type, action, params)
    record.name = changes.name or record.name
    record.action, record.params = action, params
    record.updated_at = now_utc()
    session.add(record)
    return record


@router.patch("/receivers/{receiver_id}", response_model=ReceiverEnvelope)
async def update_receiver_route(
    caller: WriterDep, db: DbDep, request: Request, receiver_id: ReceiverId, body: ReceiverUpdate
) -> ReceiverEnvelope:
    """Rename a receiver, or change what its webhook runs (Senlin's receiver update);
    its URL stays the same."""
    record = await db.run(_update, caller.project_id, receiver_id, body)
    return ReceiverEnvelope(receiver=ReceiverPublic.of(record, api_base(request)))


@router.delete("/receivers/{receiver_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_receiver_route(caller: WriterDep, db: DbDep, receiver_id: ReceiverId) -> Response:
    """Delete a receiver: its URL stops working at once."""
    await db.run(_delete, caller.project_id, receiver_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/webhooks/{webhook_id}/trigger",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ActionAccepted,
)
async def trigger_webhook_route(
    db: DbDep,
    temporal: TemporalDep,
    request: Request,
    response: Response,
    webhook_id: WebhookId,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> ActionAccepted:
    """Run the receiver's action (no token: the URL is the credential). The body's
    parameters, or those under its `params`, overlay the receiver's own."""
    record = await db.run(get_webhook, webhook_id)
    if record is None:
        raise NotFound(f"The webhook '{webhook_id}' could not be found.")
    given = body or {}
    if isinstance(given.get("params"), dict):
        given = given["params"]
    key, params = triggered_action(record.action, record.params, given)
    cluster = await db.run(get_cluster, record.project_id, record.cluster_id)
    if cluster is None:
        raise InvalidRequest(
            f"The cluster '{record.cluster_id}' of receiver {record.name} no longer exists."
        )
    # The same checks as `POST /v1/clusters/{id}/actions` with this one action.
    try:
        parsed = ClusterActionRequest.model_validate({key: params})
    except ValidationError as err:
        raise InvalidRequest(describe_validation_error(err, "params")) from None
    _, checked = parsed.only_action()
    return await run_cluster_action(temporal, cluster, key, checked, request, response)
