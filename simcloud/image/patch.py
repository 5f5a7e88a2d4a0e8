"""Glance's image PATCH: its JSON-patch media types, parsed and applied all or nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from simcloud.errors import SimError, bad_request
from simcloud.image.images import glance_error
from simcloud.image.schema import (
    ATTRIBUTES,
    check_not_negative,
    check_property,
    check_quotas,
    check_writable,
    forbidden,
)
from simcloud.image.state import ImageRecord

#: Media type → JSON-schema draft whose patch syntax it uses.
MEDIA_TYPES = {
    "application/openstack-images-v2.0-json-patch": 4,
    "application/openstack-images-v2.1-json-patch": 10,
}
OPERATIONS = ("add", "remove", "replace")


@dataclass(frozen=True, slots=True)
class Change:
    """One parsed operation: `path` is the decoded JSON pointer, one level deep."""

    op: str
    path: str
    value: Any
    draft: int


def parse_patch(content_type: str, body: Any) -> list[Change]:
    """Glance's PATCH deserializer: media type, then each operation, or its 4xx."""
    media_type = content_type.split(";", maxsplit=1)[0].strip().lower()
    if media_type not in MEDIA_TYPES:
        allowed = ", ".join(sorted(MEDIA_TYPES))
        raise SimError(415, f"Image PATCH expects Content-Type one of: {allowed}", style="glance")
    if body is None:
        raise bad_request("Body expected in request.", style="glance")
    if not isinstance(body, list):
        raise bad_request("Request body must be a JSON array of operation objects.", style="glance")
    return [_parse_change(raw, MEDIA_TYPES[media_type]) for raw in body]


def _parse_change(raw: Any, draft: int) -> Change:
    if not isinstance(raw, dict):
        raise bad_request("Operations must be JSON objects.", style="glance")
    op, pointer = _operation(raw, draft)
    path = _decode_pointer(pointer)
    if path[0] == "locations":
        verb = {"add": "add", "remove": "remove", "replace": "update"}[op]
        raise forbidden(f"It's not allowed to {verb} locations if locations are invisible.")
    if len(path) != 1:
        raise bad_request(
            f"Invalid JSON pointer for this resource: '/{'/'.join(path)}'", style="glance"
        )
    if op != "remove" and "value" not in raw:
        raise bad_request(f'Operation "{op}" requires a member named "value".', style="glance")
    check_writable(path[0])
    value = raw.get("value")
    if op != "remove":
        check_property(path[0], value)
    return Change(op, path[0], value, draft)


def _operation(raw: dict[str, Any], draft: int) -> tuple[str, Any]:
    available = ", ".join(OPERATIONS)
    if draft == 4:
        ops = [key for key in OPERATIONS if key in raw]
        if len(ops) != 1:
            how = "only one member" if ops else "exactly one member"
            raise bad_request(
                f'Operation objects must contain {how} named "add", "remove", or "replace".',
                style="glance",
            )
        return ops[0], raw[ops[0]]
    op = raw.get("op")
    if op is None:
        raise bad_request(
            f"Unable to find `op` in JSON Schema change. It must be one of the following: "
            f"{available}.",
            style="glance",
        )
    if op not in OPERATIONS:
        raise bad_request(
            f"Invalid operation: `{op}`. It must be one of the following: {available}.",
            style="glance",
        )
    if "path" not in raw:
        raise bad_request("Unable to find 'path' in JSON Schema change", style="glance")
    return str(op), raw["path"]


def _decode_pointer(pointer: Any) -> list[str]:
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        raise bad_request(f'Pointer `{pointer}` does not start with "/".', style="glance")
    if re.search(r"/\s*?/", pointer[1:]):
        raise bad_request(f'Pointer `{pointer}` contains adjacent "/".', style="glance")
    if len(pointer) > 1 and pointer.endswith("/"):
        raise bad_request(f'Pointer `{pointer}` end with "/".', style="glance")
    if pointer[1:].strip() in ("", "/"):
        raise bad_request(f"Pointer `{pointer}` does not contains valid token.", style="glance")
    if re.search("~[^01]", pointer) or pointer.endswith("~"):
        raise bad_request(
            f'Pointer `{pointer}` contains "~" not part of a recognized escape sequence.',
            style="glance",
        )
    return [
        part.replace("~1", "/").replace("~0", "~").strip()
        for part in pointer.lstrip("/").split("/")
    ]


def apply_patch(record: ImageRecord, changes: list[Change], now: float) -> ImageRecord:
    """The image after every change; the stored one is untouched if any change fails."""
    patched = record.copy()
    for change in changes:
        if change.op == "remove":
            _remove(patched, change.path)
        else:
            _set(patched, change)
    check_quotas(patched.properties, patched.tags)
    if changes:
        patched.updated_at = now
    return patched


def _set(record: ImageRecord, change: Change) -> None:
    key, value = change.path, change.value
    if key == "owner":
        raise forbidden("Owner can't be updated by non admin.")
    exists = key in ATTRIBUTES or key in record.properties
    if change.op == "add" and change.draft == 4 and exists:
        raise glance_error(409, f"Property {key} already present.")
    if change.op == "replace" and not exists:
        raise glance_error(409, f"Property {key} does not exist.")
    if key not in ATTRIBUTES:
        record.properties[key] = value
    elif key == "tags":
        record.tags = set(value)
    else:
        _set_attribute(record, key, value)


def _set_attribute(record: ImageRecord, key: str, value: Any) -> None:
    if key in ("container_format", "disk_format") and record.status not in (
        "queued",
        "importing",
    ):
        raise forbidden(f"Attribute {key} can be only replaced for a queued image.")
    if key in ("min_disk", "min_ram"):
        check_not_negative(key, value)
    setattr(record, key, value)


def _remove(record: ImageRecord, key: str) -> None:
    if key in ATTRIBUTES:
        raise forbidden(f"Property {key} may not be removed.")
    if key not in record.properties:
        raise glance_error(409, f"Property {key} does not exist.")
    del record.properties[key]
