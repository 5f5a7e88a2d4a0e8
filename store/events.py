"""Event records and their queries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from domain.events import Event
from store.columns import json_column, utc_column


class EventRecord(SQLModel, table=True):
    """One thing that happened to an object; `seq` gives the global order."""

    __tablename__ = "events"

    seq: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    timestamp: datetime = Field(sa_column=utc_column(index=True))
    obj_type: str = Field(max_length=32)
    obj_id: str = Field(index=True, max_length=64)
    obj_name: str = Field(default="", max_length=255)
    cluster_id: str | None = Field(default=None, index=True, max_length=64)
    stack_id: str | None = Field(default=None, index=True, max_length=64)
    action: str = Field(default="", max_length=64)
    status: str = Field(default="", max_length=64)
    status_reason: str = Field(default="")
    level: str = Field(default="INFO", max_length=16)
    action_id: str | None = Field(default=None, max_length=64)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())


def event_row(event: Event) -> dict[str, Any]:
    """The `events` row of an event (without `seq`, which the database gives)."""
    return {
        "id": event.event_id,
        "project_id": event.project_id,
        "timestamp": event.at,
        "obj_type": event.obj_type,
        "obj_id": event.obj_id,
        "obj_name": event.obj_name,
        "cluster_id": event.cluster_id,
        "stack_id": event.stack_id,
        "action": event.action,
        "status": event.status,
        "status_reason": event.status_reason,
        "level": event.level.value,
        "action_id": event.action_id,
        "meta": event.meta,
    }


def list_events(
    session: Session,
    project_id: str,
    *,
    obj_id: str | None = None,
    obj_type: str | None = None,
    cluster_id: str | None = None,
    stack_id: str | None = None,
    action_id: str | None = None,
    level: str | None = None,
    obj_name: str | None = None,
    limit: int = 200,
    marker: str | None = None,
    descending: bool = False,
) -> list[EventRecord]:
    """Events of a project in the order they were written (newest last, or first when
    `descending`), after the event `marker` in that order."""
    query = select(EventRecord).where(EventRecord.project_id == project_id)
    filters = {
        EventRecord.obj_id: obj_id,
        EventRecord.obj_type: obj_type,
        EventRecord.cluster_id: cluster_id,
        EventRecord.stack_id: stack_id,
        EventRecord.action_id: action_id,
        EventRecord.level: level,
        EventRecord.obj_name: obj_name,
    }
    for column, value in filters.items():
        if value:
            query = query.where(column == value)
    if marker:
        last = session.exec(select(EventRecord.seq).where(EventRecord.id == marker)).first()
        if last is not None:
            seq = col(EventRecord.seq)
            query = query.where(seq < last if descending else seq > last)
    order = col(EventRecord.seq).desc() if descending else col(EventRecord.seq)
    return list(session.exec(query.order_by(order).limit(limit)))


def get_event(session: Session, project_id: str, event_id: str) -> EventRecord | None:
    """The project's event with this id."""
    query = select(EventRecord).where(
        EventRecord.id == event_id, EventRecord.project_id == project_id
    )
    return session.exec(query).first()
