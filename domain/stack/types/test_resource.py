"""`OS::Heat::TestResource`: stores a value; waits and failures on demand, for tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from domain.errors import InvalidRequest
from domain.hot.properties import SECONDS_BOUNDS, ResourceType, parse_number, prop

NAME: Final = "OS::Heat::TestResource"
#: The actions `action_wait_secs` may name.
WaitAction = Literal["create", "update", "delete"]

_DOC: Final = {
    "value": "The input string to be stored.",
    "fail": "Value which can be set to fail the resource operation to test failure scenarios.",
    "wait_secs": "Seconds to wait after an action (action_wait_secs overrides it per action).",
    "action_wait_secs": "Options for simulating waiting: seconds after create, update, delete.",
    "replace": "Value which can be set to trigger update replace for the particular resource.",
    "output": "The string that was stored. This value is also available by referencing "
    "the resource.",
}


def _check_action_wait_secs(props: Mapping[str, Any], field: str) -> None:
    waits = props.get("action_wait_secs")
    if waits is None:
        return
    for action, seconds in waits.items():
        path = f"{field}.action_wait_secs.{action}"
        if action not in ("create", "update", "delete"):
            raise InvalidRequest(f"{path}: unknown action (create, update or delete)")
        number = parse_number(seconds)
        if not isinstance(number, int) or not 0 <= number <= 86_400:
            raise InvalidRequest(f"{path}: must be an integer between 0 and 86400")


TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "value": prop("string", default="", update_allowed=True, description=_DOC["value"]),
        "fail": prop("boolean", default=False, update_allowed=True, description=_DOC["fail"]),
        "wait_secs": prop("number", default=0, description=_DOC["wait_secs"], **SECONDS_BOUNDS),
        "action_wait_secs": prop("map", update_allowed=True, description=_DOC["action_wait_secs"]),
        "update_replace": prop(
            "boolean", default=False, update_allowed=True, description=_DOC["replace"]
        ),
    },
    attributes=frozenset({"output"}),
    honours_update_replace=True,
    check=_check_action_wait_secs,
    description="A resource which stores the string value that was provided.",
    attribute_docs={"output": _DOC["output"]},
)


def wait_seconds(action: WaitAction, props: Mapping[str, Any]) -> Any:
    """Seconds to wait after `action`: `action_wait_secs[action]`, else `wait_secs` (0: none)."""
    waits = props.get("action_wait_secs") or {}
    seconds = waits.get(action) if isinstance(waits, dict) else None
    if seconds is None:
        seconds = props.get("wait_secs") or 0
    return seconds


def failure(name: str, props: Mapping[str, Any]) -> str | None:
    """Why the action fails (`fail: true`), or None when it succeeds."""
    return f"Test Resource failed {name}" if props.get("fail") else None


def attributes(props: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes after a create or update: `output` is the stored value."""
    return {"output": props.get("value", "")}
