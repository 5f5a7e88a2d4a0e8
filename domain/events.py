"""Events: what happened to an object, in order, for `GET /v1/events`."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.cluster.nodes import NodeStatus


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


def node_event_level(status: str) -> EventLevel:
    """The level of an event about a node in `status`, when the writer does not choose one.

    The one mapping for node events: a node in ERROR is an ERROR event, as Senlin
    records a node action that fails (`EVENT.error`); every other status is INFO. A
    writer that knows better passes `level` to `node_event` (a forced fence, a retried
    hook delivery: WARNING).
    """
    return EventLevel.ERROR if status == NodeStatus.ERROR else EventLevel.INFO


def node_event(
    *,
    event_id: str,
    at: datetime,
    project_id: str,
    cluster_id: str,
    node_id: str,
    node_name: str,
    action: str,
    status: str,
    reason: str,
    level: EventLevel | None = None,
    action_id: str | None = None,
    meta: dict[str, Any] | None = None,
) -> Event:
    """An event about one node of a cluster: every node event is built here.

    Args:
        event_id: chosen by the writer so a retried write is a no-op (in a workflow,
            `workflow.uuid4()`, which replays the same).
        at: when it happened (in a workflow, `workflow.now()`).
        status: the node's status as the event shows it.
        level: defaults to `node_event_level(status)`.
    """
    return Event(
        event_id=event_id,
        project_id=project_id,
        obj_type="node",
        obj_id=node_id,
        obj_name=node_name,
        cluster_id=cluster_id,
        action=action,
        status=status,
        status_reason=reason,
        level=level if level is not None else node_event_level(status),
        action_id=action_id,
        meta=meta or {},
        at=at,
    )
