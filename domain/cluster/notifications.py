"""Nova notifications as LIFECYCLE_EVENTS detection reads them, legacy or versioned.

Nova publishes each event under two names: the legacy `compute.instance.power_off.end`
(Senlin's `NovaNotificationEndpoint` listens for those) and the versioned
`instance.power_off.end`, whose payload is a `nova_object` (`notification_format` both,
versioned or unversioned). Either is read here and named the legacy way, the name the
health manager's hints use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: The legacy names of the failures a node is recovered from: Senlin's five
#: (pause.end, power_off.end, rebuild.error, shutdown.end, soft_delete.end), with the
#: `.error` ends of the first four, which Warden also takes.
FAILURE_EVENT = re.compile(
    r"^compute\.instance\."
    r"(?:(?:pause|power_off|shutdown|soft_delete)\.(?:end|error)|rebuild\.error)$"
)


def failure_event(event_type: str) -> str | None:
    """The legacy name of a failure event (`instance.power_off.end` →
    `compute.instance.power_off.end`); None for an event detection ignores."""
    legacy = event_type if event_type.startswith("compute.") else f"compute.{event_type}"
    return legacy if FAILURE_EVENT.match(legacy) else None


def instance_uuid(payload: Mapping[str, Any]) -> str | None:
    """The server an event is about: `nova_object.data.uuid` in a versioned payload,
    `instance_id` in a legacy one."""
    data = payload.get("nova_object.data", payload)
    if not isinstance(data, Mapping):
        return None
    value = data.get("uuid") or data.get("instance_id")
    return str(value) if value else None
