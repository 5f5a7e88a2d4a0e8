"""Events: what happened to an object, in order, for `GET /v1/events`."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EventLevel(StrEnum):
    """Severity of an event."""

    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


class Event(BaseModel):
    """One event. `event_id` is chosen by the writer so a retried write is a no-op."""

    model_config = ConfigDict(frozen=True)

    event_id: str
    project_id: str
    obj_type: str = Field(description="cluster, node, stack, resource, …")
    obj_id: str
    obj_name: str = ""
    cluster_id: str | None = None
    stack_id: str | None = None
    action: str = Field("", description="Operation or transition name")
    status: str = ""
    status_reason: str = ""
    level: EventLevel = EventLevel.INFO
    action_id: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    at: datetime
