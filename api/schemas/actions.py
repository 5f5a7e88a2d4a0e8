"""Action and event schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from store.actions import ActionRecord
from store.events import EventRecord


def action_cluster_id(name: str, target: str, inputs: dict[str, Any]) -> str | None:
    """The cluster an action belongs to: its target, or the cluster a node action names."""
    if name.startswith("CLUSTER_"):
        return target
    cluster_id = inputs.get("cluster_id")
    return str(cluster_id) if cluster_id else None


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
    # Senlin's fields, as openstacksdk's Action reads them.
    cause: str = "RPC Request"
    owner: str | None = None
    user: str | None = None
    domain: str | None = None
    interval: int = -1
    timeout: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def action(self) -> str:
        """Senlin's built-in action type (`CLUSTER_SCALE_IN`), Warden's `name`."""
        return self.name

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cluster_id(self) -> str | None:
        """Senlin 1.14: the cluster the action works on, if any."""
        return action_cluster_id(self.name, self.target, self.inputs)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def project(self) -> str:
        """Senlin's name for `project_id`."""
        return self.project_id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def start_time(self) -> float | None:
        """Senlin's start time: seconds since the epoch."""
        return self.started_at.timestamp() if self.started_at else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def end_time(self) -> float | None:
        """Senlin's end time: seconds since the epoch."""
        return self.ended_at.timestamp() if self.ended_at else None

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
    project: str = ""
    user: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def oid(self) -> str:
        """Senlin's name for `obj_id`."""
        return self.obj_id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def oname(self) -> str:
        """Senlin's name for `obj_name`."""
        return self.obj_name

    @computed_field  # type: ignore[prop-decorator]
    @property
    def otype(self) -> str:
        """Senlin's name for `obj_type`."""
        return self.obj_type

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
            project=record.project_id,
        )


class EventEnvelope(BaseModel):
    """`{"event": {...}}`."""

    event: EventPublic


class EventList(BaseModel):
    """`{"events": [...]}`, newest last."""

    events: list[EventPublic]
