"""Senlin's node operations of `os.nova.server` (API 1.4): `POST /v1/nodes/{id}/ops`,
`POST /v1/clusters/{id}/ops` and the list `GET /v1/profile-types/{type}/ops`.

The table is Senlin's `ServerProfile.OPERATIONS`; Warden carries out those its cloud
client drives (`CARRIED_OUT`) and refuses the others with a 400 that says so. Pure, no
Temporal.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest


def _param(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "String", "required": False, "description": description, **extra}


#: Senlin's os.nova.server operations, as `GET /v1/profile-types/{type}/ops` lists them.
SERVER_OPERATIONS: dict[str, dict[str, Any]] = {
    "reboot": {
        "description": "Reboot the nova server.",
        "parameters": {
            "type": _param(
                "Type of reboot which can be 'SOFT' or 'HARD'.",
                default="SOFT",
                constraints=[{"type": "AllowedValues", "constraint": ["SOFT", "HARD"]}],
            )
        },
    },
    "rebuild": {
        "description": "Rebuild the server using current image and admin password.",
        "parameters": {},
    },
    "change_password": {
        "description": "Change the administrator password.",
        "parameters": {"admin_pass": _param("New password for the administrator.")},
    },
    "pause": {"description": "Pause the server from running.", "parameters": {}},
    "unpause": {"description": "Unpause the server to running state.", "parameters": {}},
    "suspend": {"description": "Suspend the running of the server.", "parameters": {}},
    "resume": {"description": "Resume the running of the server.", "parameters": {}},
    "lock": {"description": "Lock the server.", "parameters": {}},
    "unlock": {"description": "Unlock the server.", "parameters": {}},
    "start": {"description": "Start the server.", "parameters": {}},
    "stop": {"description": "Stop the server.", "parameters": {}},
    "rescue": {
        "description": "Rescue the server.",
        "parameters": {"image": _param("A string referencing the image to use.")},
    },
    "unrescue": {"description": "Unrescue the server.", "parameters": {}},
    "evacuate": {
        "description": "Evacuate the server to a different host.",
        "parameters": {
            "host": _param("The target host to evacuate the server."),
            "force": _param("Whether the evacuation should be a forced one."),
        },
    },
}
#: The operations Warden carries out (the rest are listed, and refused with a 400).
CARRIED_OUT = frozenset(
    {"reboot", "rebuild", "start", "stop", "pause", "unpause", "lock", "unlock"}
)
#: Profile types whose operations these are.
SERVER_PROFILE_TYPES = frozenset({"os.nova.server-1.0", "os.nova.server-1.1"})
#: Senlin's `StackProfile.OPERATIONS`: listed, not carried out (Warden abandons nothing).
STACK_OPERATIONS: Final = {
    "abandon": {"description": "Abandon a heat stack node.", "parameters": {}},
}


def operations_of(profile_type: str) -> dict[str, Any]:
    """Senlin's operation table of a versioned profile type (`os.nova.server-1.0`)."""
    if profile_type in SERVER_PROFILE_TYPES:
        return SERVER_OPERATIONS
    return STACK_OPERATIONS if profile_type.startswith("os.heat.stack-") else {}


class ServerOperation(BaseModel):
    """One operation on nodes' servers, checked against Senlin's schema."""

    model_config = ConfigDict(frozen=True)

    name: str
    params: dict[str, str] = Field(default_factory=dict)


def parse_operation(name: str, params: object, profile_type: str) -> ServerOperation:
    """The operation `name` with `params`, or Senlin's 400 (unknown operation, unknown or
    disallowed parameter), or Warden's for one it does not carry out."""
    schema = operations_of(profile_type).get(name)
    if schema is None:
        raise InvalidRequest(
            f"The requested operation '{name}' is not supported by the profile type "
            f"'{profile_type}'."
        )
    given = params if isinstance(params, dict) else {}
    checked: dict[str, str] = {}
    for key, value in given.items():
        spec = schema["parameters"].get(key)
        if spec is None:
            raise InvalidRequest(f"Unrecognizable parameter '{key}'")
        text = str(value)
        for constraint in spec.get("constraints", []):
            allowed = constraint["constraint"]
            if text not in allowed:
                raise InvalidRequest(
                    f"'{text}' must be one of the allowed values: {', '.join(allowed)}."
                )
        checked[key] = text
    if name not in CARRIED_OUT:
        carried = (
            f"it carries out {', '.join(sorted(CARRIED_OUT))}"
            if profile_type in SERVER_PROFILE_TYPES
            else f"it carries out no operation on {profile_type} nodes"
        )
        raise InvalidRequest(f"The operation '{name}' is not supported by Warden; {carried}.")
    return ServerOperation(name=name, params=checked)
