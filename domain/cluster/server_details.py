"""A node's `details`: its server as Senlin's `ServerProfile.do_get_details` shows it.

Shown by `GET /v1/nodes/{id}?show_details=true` and read by the cluster collect of a
`details.…` path. Built from Nova's server JSON; the worker reads the server, the API
asks it to (no cloud call from the API itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: Nova's keys Senlin copies as they are, when the server has them.
KNOWN_KEYS: Final = (
    "OS-DCF:diskConfig",
    "OS-EXT-AZ:availability_zone",
    "OS-EXT-STS:power_state",
    "OS-EXT-STS:vm_state",
    "accessIPv4",
    "accessIPv6",
    "config_drive",
    "created",
    "hostId",
    "id",
    "key_name",
    "locked",
    "metadata",
    "name",
    "os-extended-volumes:volumes_attached",
    "progress",
    "status",
    "updated",
)
#: Keys Senlin shows as "-" when Nova has no value.
DASHED_KEYS: Final = ("OS-EXT-STS:task_state", "OS-SRV-USG:launched_at", "OS-SRV-USG:terminated_at")


def _id_of(value: Any) -> Any:
    return value.get("id", value) if isinstance(value, Mapping) else value


def flavor_name(server: Mapping[str, Any]) -> str | None:
    """The flavor's name, when Nova shows the flavor without its id (API 2.47 on); Senlin
    then finds the id by that name."""
    flavor = server.get("flavor")
    if not isinstance(flavor, Mapping) or flavor.get("id"):
        return None
    name = flavor.get("name") or flavor.get("original_name")
    return str(name) if name else None


def server_details(server: Mapping[str, Any], flavor_id: str | None = None) -> dict[str, Any]:
    """Senlin's details of a server from Nova's JSON of it (`flavor_id`: the id found
    by `flavor_name`, for a server shown without it)."""
    volumes = server.get("os-extended-volumes:volumes_attached") or []
    details: dict[str, Any] = {
        "image": _id_of(server.get("image") or ""),
        "attached_volumes": [v["id"] for v in volumes if isinstance(v, Mapping) and "id" in v],
        "flavor": flavor_id or _id_of(server.get("flavor") or ""),
    }
    details.update({key: server[key] for key in KNOWN_KEYS if key in server})
    details.update({key: server[key] or "-" for key in DASHED_KEYS if key in server})
    details["addresses"] = dict(server.get("addresses") or {})
    groups = server.get("security_groups") or []
    names = sorted({str(g["name"]) for g in groups if isinstance(g, Mapping) and "name" in g})
    details["security_groups"] = "" if not names else names[0] if len(names) == 1 else names
    return dict(sorted(details.items()))


def details_error(code: int, message: str) -> dict[str, Any]:
    """What Senlin shows when the server cannot be read."""
    return {"Error": {"code": code, "message": message}}
