"""Heat's event sinks: the environment's `event_sinks` send each event of the stack (and
of its nested stacks) to a Zaqar queue, as Heat's `ZaqarEventSink` posts them."""

from __future__ import annotations

import uuid
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest
from domain.events import Event

ZAQAR_QUEUE: Final = "zaqar-queue"
#: Heat's Zaqar client's default message TTL, in seconds.
DEFAULT_TTL: Final = 3600
#: The `Client-ID` Warden posts with (Zaqar wants one per client).
CLIENT_ID: Final = str(uuid.uuid5(uuid.NAMESPACE_URL, "warden:event-sinks"))


class EventSink(BaseModel):
    """One sink: the Zaqar queue `target`, messages kept `ttl` seconds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["zaqar-queue"]
    target: str = Field(min_length=1, max_length=64)
    ttl: int | None = Field(default=None, ge=60, le=1_209_600)


class EventSinkPost(BaseModel):
    """Events to send to the stack's sinks."""

    model_config = ConfigDict(frozen=True)

    sinks: list[EventSink]
    events: list[Event]


def parse_event_sinks(raw: object) -> list[dict[str, Any]]:
    """The environment's `event_sinks`, checked (a 400 naming the entry otherwise)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidRequest("environment.event_sinks: must be a list of sinks")
    sinks = []
    for i, entry in enumerate(raw):
        where = f"environment.event_sinks[{i}]"
        if not isinstance(entry, dict):
            raise InvalidRequest(f"{where}: must be a map with type and target")
        if entry.get("type") != ZAQAR_QUEUE:
            raise InvalidRequest(
                f'{where}.type: unknown event sink type "{entry.get("type")}" '
                f'(Heat has "{ZAQAR_QUEUE}")'
            )
        try:
            sinks.append(EventSink.model_validate(entry).model_dump())
        except ValueError as err:
            raise InvalidRequest(f"{where}: {_first_error(err)}") from None
    return sinks


def _first_error(err: ValueError) -> str:
    errors = getattr(err, "errors", None)
    if callable(errors):
        first = errors()[0]
        place = ".".join(str(p) for p in first.get("loc", ()))
        return f"{place}: {first.get('msg')}" if place else str(first.get("msg"))
    return str(err)


def sink_message(event: Event) -> dict[str, Any]:
    """Heat's `Event.as_dict`: what a sink receives for one event."""
    meta = event.meta or {}
    stack = event.obj_type == "stack"
    return {
        "timestamp": event.at.isoformat(),
        "version": "0.1",
        "type": "os.heat.event",
        "id": event.event_id,
        "payload": {
            "resource_name": event.obj_name,
            "physical_resource_id": event.obj_id if stack else meta.get("physical_id"),
            "stack_id": event.stack_id,
            "resource_action": event.action,
            "resource_status": event.status,
            "resource_status_reason": event.status_reason,
            "resource_type": "OS::Heat::Stack" if stack else meta.get("type"),
            "resource_properties": {},
            "version": "0.1",
        },
    }
