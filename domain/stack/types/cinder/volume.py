"""`OS::Cinder::Volume` and `OS::Cinder::VolumeAttachment`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.cloud_objects import Lookup
from domain.stack.types.api_object import ApiObjectType, Request, given, lookup
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Cinder::Volume"
ATTACHMENT_NAME: Final = "OS::Cinder::VolumeAttachment"
FIELDS: Final = {
    "name": "name",
    "description": "description",
    "size": "size",
    "availability_zone": "availability_zone",
    "metadata": "metadata",
    "multiattach": "multiattach",
}
#: Cinder's statuses after a create and after a change.
READY: Final = ("available",)
FAILED: Final = ("error", "error_extending", "error_restoring")


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name}
    lookups: list[Lookup] = []
    for prop, key, kind in (
        ("image", "imageRef", "image"),
        ("source_volid", "source_volid", "volume"),
        ("volume_type", "volume_type", "volume_type"),
    ):
        if props.get(prop):
            body[key] = props[prop]
            if kind != "volume_type":
                lookups.append(lookup((key,), kind, props[prop]))
    for prop in ("snapshot_id", "backup_id"):
        if props.get(prop):
            body[prop] = props[prop]
    if props.get("scheduler_hints"):
        body["OS-SCH-HNT:scheduler_hints"] = props["scheduler_hints"]
    return Request(body, tuple(lookups))


def _changes(before: Mapping[str, Any], after: Mapping[str, Any], name: str) -> Request:
    """Name, description and metadata change in place (a bigger size is an extend)."""
    keys = {"name": "name", "description": "description", "metadata": "metadata"}
    body = {api: after.get(p) for p, api in keys.items() if before.get(p) != after.get(p)}
    if "name" in body and not body["name"]:
        body["name"] = name
    return Request(body)


def extend_to(before: Mapping[str, Any], after: Mapping[str, Any]) -> int | None:
    """The new size when an update grows the volume (Cinder's `os-extend`)."""
    old, new = before.get("size"), after.get("size")
    return int(new) if new is not None and old is not None and new > old else None


def retype_to(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """The new volume type when an update changes it (Cinder's `os-retype`)."""
    old, new = before.get("volume_type"), after.get("volume_type")
    return str(new) if new and new != old else None


def read_only_to(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool | None:
    """The new read-only flag when an update changes it (Cinder's
    `os-update_readonly_flag`)."""
    old, new = before.get("read_only"), after.get("read_only")
    return bool(new) if new is not None and new != old else None


#: The workflow patches since which a volume's `read_only` is set after its create and
#: changed in place (detached from its servers and attached again, as Heat does).
READ_ONLY_AT_CREATE: Final = "volume-read-only-at-create"
READ_ONLY_IN_PLACE: Final = "volume-read-only-in-place"
#: Warden replaces a volume for a backup restore (Heat restores in place, detaching the
#: volume from its server and attaching it again); Heat refuses to shrink. A new type is
#: a retype and a new read-only flag is set in place, each since its workflow patch.
TYPE: Final = heat_type(
    NAME,
    replaced_on=frozenset({"backup_id"}),
    translations={"imageRef": "image"},
    in_place_since={"volume_type": "volume-retype-in-place", "read_only": READ_ONLY_IN_PLACE},
)
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="volume",
    body=_body,
    changes=_changes,
    ready=READY,
    failed=FAILED,
    attribute_fields={"display_name": "name", "display_description": "description"},
)
#: A changed server, volume or mountpoint detaches and attaches again, in place, as in
#: Heat (a replacement would attach the volume twice).
ATTACHMENT_TYPE: Final = heat_type(ATTACHMENT_NAME)


def attachment_request(props: Mapping[str, Any]) -> Request:
    """Nova's `volumeAttachment` body (the volume looked up by name or id)."""
    body: dict[str, Any] = {"volumeId": props["volume_id"]}
    if props.get("mountpoint"):
        body["device"] = props["mountpoint"]
    at = ("volumeAttachment", "volumeId")
    return Request({"volumeAttachment": body}, (lookup(at, "volume", props["volume_id"]),))
