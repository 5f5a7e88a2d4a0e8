"""`/v1/actions` and `/v1/events`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request, Response

from api.auth import CallerDep, WriterDep
from api.deps import DbDep, TemporalDep
from api.schemas.actions import (
    ActionEnvelope,
    ActionList,
    ActionPublic,
    EventEnvelope,
    EventList,
    EventPublic,
)
from api.schemas.common import ERROR_RESPONSES
from api.senlin_lists import ActionsQuery, EventsQuery, ListQuery, filter_and_page, parse_bool
from api.senlin_prefix import require_version
from domain.actions import ActionName, ActionStatus
from domain.errors import Conflict, InvalidRequest, NotFound
from store.actions import get_action, list_actions
from store.events import get_event, list_events
from workflows import ids
from workflows.cluster.lifecycle_messages import LifecycleView

router = APIRouter(prefix="/v1", tags=["actions"], responses=ERROR_RESPONSES)

IdQuery = Annotated[str | None, Query(max_length=64)]
LimitQuery = Annotated[int, Query(ge=1, le=1000)]


@router.get("/actions", response_model=ActionList)
async def list_actions_route(
    query: ActionsQuery,
    caller: CallerDep,
    db: DbDep,
    target: IdQuery = None,
    status: ActionStatus | None = None,
    name: Annotated[str | None, Query(max_length=64)] = None,
    limit: LimitQuery = 100,
    marker: IdQuery = None,
    cluster_id: IdQuery = None,
) -> ActionList:
    """Actions of the caller's project, oldest first (`cluster_id`: Senlin 1.14's filter);
    `action` filters and `sort` orders the page."""
    records = await db.run(
        list_actions,
        caller.project_id,
        target=target,
        cluster_id=cluster_id,
        status=status.value if status else None,
        name=name,
        limit=limit,
        marker=marker,
    )
    views = [ActionPublic.of(r) for r in records]
    rest = ListQuery(filters=_only(query, "action"), sort=query.sort)
    return ActionList(actions=filter_and_page(views, rest))


@router.get("/actions/{action_id}", response_model=ActionEnvelope)
async def get_action_route(
    caller: CallerDep,
    db: DbDep,
    temporal: TemporalDep,
    action_id: Annotated[str, Path(max_length=64)],
) -> ActionEnvelope:
    """One action (its id is also a lifecycle token for NODE_DELETE actions).

    A NODE_DELETE action waiting on its lifecycle hook also shows `lifecycle`: the
    victim's deadline and heartbeats, read from its workflow.
    """
    record = await db.run(get_action, caller.project_id, action_id)
    if record is None:
        raise NotFound(f"The action '{action_id}' could not be found.")
    action = ActionPublic.of(record)
    if (
        record.name == ActionName.NODE_DELETE
        and record.status == ActionStatus.WAITING_LIFECYCLE_COMPLETION
    ):
        action.lifecycle = await temporal.describe(ids.node_deletion(record.id), LifecycleView)
    return ActionEnvelope(action=action)


#: The statuses Senlin lets a cancel reach (`Action.signal_cancel`'s `expected`).
CANCELLABLE = ("INIT", "WAITING", "READY", "RUNNING", "WAITING_LIFECYCLE_COMPLETION")


@router.patch("/actions/{action_id}", status_code=202)
async def update_action_route(
    caller: WriterDep,
    db: DbDep,
    request: Request,
    action_id: Annotated[str, Path(max_length=64)],
    body: dict[str, Any] = Body(...),  # noqa: B008 - FastAPI's way to take any JSON
) -> Response:
    """Cancel an action (Senlin API 1.12: `{"action": {"status": "CANCELLED"}}`).

    Checked as Senlin checks it: the action must exist (404), the status must be
    CANCELLED (400), the action still running (409). Warden does not stop a running
    action yet: a cancel it would carry out is a 409 that says so.
    """
    require_version(request.headers, (1, 12))
    data = body.get("action")
    if not isinstance(data, dict):
        raise InvalidRequest("Malformed request data, missing 'action' key in request body.")
    force = request.query_params.get("force")
    if force is not None:
        parse_bool("force", force)
    record = await db.run(get_action, caller.project_id, action_id)
    if record is None:
        raise NotFound(f"The action '{action_id}' could not be found.")
    given = data.get("status")
    if given != ActionStatus.CANCELLED.value:
        raise InvalidRequest(f"Unknown status {given} for action {action_id}")
    if record.status not in CANCELLABLE:
        expected = ", ".join(CANCELLABLE)
        raise Conflict(
            f"Action ({action_id[:8]}) is in status ({record.status}) while expected status "
            f"must be one of ({expected})."
        )
    raise Conflict(
        f"Action {action_id} is {record.status}: Warden cannot cancel a running action yet; "
        "it ends on its own (a hook's wait at its timeout)."
    )


@router.get("/events", response_model=EventList)
async def list_events_route(
    query: EventsQuery,
    caller: CallerDep,
    db: DbDep,
    obj_id: IdQuery = None,
    obj_type: Annotated[str | None, Query(max_length=32)] = None,
    oid: IdQuery = None,
    otype: Annotated[str | None, Query(max_length=32)] = None,
    cluster_id: IdQuery = None,
    action_id: IdQuery = None,
    level: Annotated[str | None, Query(max_length=16)] = None,
    limit: LimitQuery = 200,
    marker: IdQuery = None,
) -> EventList:
    """Events of the caller's project in the order they happened (newest last).

    `oid` and `otype` are Senlin's (and openstacksdk's) names for `obj_id` and `obj_type`.
    """
    records = await db.run(
        list_events,
        caller.project_id,
        obj_id=obj_id or oid,
        obj_type=obj_type or otype,
        cluster_id=cluster_id,
        action_id=action_id,
        level=level,
        limit=limit,
        marker=marker,
    )
    views = [EventPublic.of(r) for r in records]
    rest = ListQuery(filters=_only(query, "oname", "action"), sort=query.sort)
    return EventList(events=filter_and_page(views, rest))


@router.get("/events/{event_id}", response_model=EventEnvelope)
async def get_event_route(
    caller: CallerDep, db: DbDep, event_id: Annotated[str, Path(max_length=64)]
) -> EventEnvelope:
    """One event of the caller's project."""
    record = await db.run(get_event, caller.project_id, event_id)
    if record is None:
        raise NotFound(f"The event '{event_id}' could not be found.")
    return EventEnvelope(event=EventPublic.of(record))


def _only(query: ListQuery, *keys: str) -> dict[str, list[object]]:
    """The query's filters on `keys`: those the store does not apply itself."""
    return {k: v for k, v in query.filters.items() if k in keys}
