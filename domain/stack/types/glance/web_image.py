"""`OS::Glance::WebImage`: an image Glance imports from a URL (`web-download`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

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


#: Warden replaces an image whose members or `active` flag change (Heat shares and
#: deactivates it in place).
#: Lock level "all" protects the image, as the stack-lock design asks of "each stack
#: resource that supports it (nova server, glance image, ...)".
TYPE: Final = heat_type(NAME, replaced_on=frozenset({"members", "active"}), can_lock=True)
API: Final = ApiObjectType(
    rtype=TYPE, kind="image", body=_body, changes=_changes, ready=("active",), failed=("killed",)
)
