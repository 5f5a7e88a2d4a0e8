"""`OS::Glance::WebImage`: an image Glance imports from a URL (`web-download`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.stack.types.api_object import ApiObjectType, Request, given
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Glance::WebImage"
FIELDS: Final = {
    "name": "name",
    "id": "id",
    "container_format": "container_format",
    "disk_format": "disk_format",
    "min_disk": "min_disk",
    "min_ram": "min_ram",
    "protected": "protected",
    "visibility": "visibility",
    "tags": "tags",
    "architecture": "architecture",
    "os_distro": "os_distro",
    "os_version": "os_version",
    "kernel_id": "kernel_id",
    "ramdisk_id": "ramdisk_id",
    "owner": "owner",
}
#: The properties an update changes in place (a JSON patch).
UPDATABLE: Final = (
    "protected",
    "visibility",
    "tags",
    "architecture",
    "os_distro",
    "os_version",
    "kernel_id",
    "ramdisk_id",
    "owner",
)


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name}
    return Request(body | dict(props.get("extra_properties") or {}))


def _changes(before: Mapping[str, Any], after: Mapping[str, Any], name: str) -> Request:
    body = {p: after.get(p) for p in UPDATABLE if before.get(p) != after.get(p)}
    extra_before = dict(before.get("extra_properties") or {})
    extra_after = dict(after.get("extra_properties") or {})
    body |= {k: v for k, v in extra_after.items() if extra_before.get(k) != v}
    return Request(body)


def import_request(props: Mapping[str, Any]) -> Request:
    """Glance's interoperable import of the image's `location`."""
    return Request({"method": {"name": "web-download", "uri": props["location"]}})


def member_changes(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[list[str], list[str]]:
    """(projects to share the image with, projects to stop sharing it with)."""
    old, new = list(before.get("members") or []), list(after.get("members") or [])
    return [m for m in new if m not in old], [m for m in old if m not in new]


def activation(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> str | None:
    """Glance's action an `active` flag asks for: `deactivate` when it turns false,
    `reactivate` when it turns true again (None: no change; a new image is active)."""
    was = True if before is None else before.get("active") is not False
    now = after.get("active") is not False
    if was == now:
        return None
    return "reactivate" if now else "deactivate"


def _check(props: Mapping[str, Any], field: str) -> None:
    """Heat's `validate`: members are for shared images only."""
    if props.get("members") and props.get("visibility") != "shared":
        raise InvalidRequest(
            f"{field}: members property should only be specified for visibility with value shared."
        )


#: An image's members and `active` flag change in place (Glance's members API,
#: deactivate and reactivate), since these workflow patches: replaced before them.
#: Lock level "all" protects the image, as the stack-lock design asks of "each stack
#: resource that supports it (nova server, glance image, ...)".
TYPE: Final = heat_type(
    NAME,
    can_lock=True,
    check=_check,
    in_place_since={"members": "image-members-in-place", "active": "image-active-in-place"},
)
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="image",
    body=_body,
    changes=_changes,
    ready=("active", "deactivated"),
    failed=("killed",),
)
