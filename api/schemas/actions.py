"""Action and event schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from store.actions import ActionRecord
from store.events import EventRecord


class ActionPublic(BaseModel):
    """An action as `GET /v1/actions/{action_id}` shows it."""

    id: str
    name: str
    target: str
    status: str
    status_reason: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    depends_on: list[str]
    depended_by: list[str]
    project_id: str
    workflow_id: str | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    lifecycle: dict[str, Any] | None = None

    @classmethod
    def of(cls, record: ActionRecord) -> ActionPublic:
        """From the database row."""
        return cls.model_validate(record, from_attributes=True)


class ActionEnvelope(BaseModel):
    """`{"action": {...}}`."""

    action: ActionPublic


class ActionList(BaseModel):
    """`{"actions": [...]}`."""

    actions: list[ActionPublic]


class ActionAccepted(BaseModel):
    """202 answer of an operation: the action that tracks it."""

    action: str


class EventPublic(BaseModel):
    """An event as `GET /v1/events` shows it."""

    id: str
    timestamp: datetime
    obj_type: str
    obj_id: str
    obj_name: str
    cluster_id: str | None
    action: str
    status: str
    status_reason: str
    level: str
    action_id: str | None
    meta_data: dict[str, Any]

    @classmethod
    def of(cls, record: EventRecord) -> EventPublic:
        """From the database row."""
        return cls(
            id=record.id,
            timestamp=record.timestamp,
            obj_type=record.obj_type,
            obj_id=record.obj_id,
            obj_name=record.obj_name,
            cluster_id=record.cluster_id,
            action=record.action,
            status=record.status,
            status_reason=record.status_reason,
            level=record.level,
            action_id=record.action_id,
            meta_data=record.meta,
        )


class EventList(BaseModel):
    """`{"events": [...]}`, newest last."""

    events: list[EventPublic]
