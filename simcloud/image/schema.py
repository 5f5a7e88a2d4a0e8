"""Glance's image schema: which properties exist, their types, and who may set them.

Messages are Glance's: a schema violation is `Provided object does not match schema
'image': <reason>` with jsonschema's first line as the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from simcloud.errors import SimError

CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed")
DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
VISIBILITIES = ("community", "public", "private", "shared")
STATUSES = (
    "queued",
    "saving",
    "active",
    "killed",
    "deleted",
    "uploading",
    "importing",
    "pending_delete",
    "deactivated",
)
UUID_PATTERN = (
    "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$"
)
#: Glance's `image_property_quota` and `image_tag_quota` defaults.
PROPERTY_QUOTA = 128
TAG_QUOTA = 128

#: Never accepted in a create body (403 read-only).
DISALLOWED = ("direct_url", "self", "file", "schema", "stores")
#: Never changed by PATCH (403 read-only).
READONLY = (
    "created_at",
    "updated_at",
    "status",
    "checksum",
    "size",
    "virtual_size",
    "direct_url",
    "self",
    "file",
    "schema",
    "id",
    "os_hash_algo",
    "os_hash_value",
)
#: Glance's image factory refuses these at create (403 read-only).
FACTORY_READONLY = (
    "created_at",
    "updated_at",
    "status",
    "checksum",
    "os_hash_algo",
    "os_hash_value",
    "size",
    "virtual_size",
)
#: Never settable (403 reserved), and anything in the `os_glance` namespace.
RESERVED = ("location", "locations", "deleted", "deleted_at")
RESERVED_NAMESPACE = "os_glance"
#: Attributes a PATCH sets on the image itself rather than as additional properties.
ATTRIBUTES = (
    "name",
    "visibility",
    "protected",
    "os_hidden",
    "min_disk",
    "min_ram",
    "owner",
    "disk_format",
    "container_format",
    "tags",
)


@dataclass(frozen=True, slots=True)
class Rule:
    """A base property's JSON-schema constraints."""

    types: tuple[str, ...]
    enum: tuple[Any, ...] | None = None
    max_length: int | None = None
    pattern: str | None = None


RULES = {
    "id": Rule(("string",), pattern=UUID_PATTERN),
    "name": Rule(("null", "string"), max_length=255),
    "status": Rule(("string",), enum=STATUSES),
    "visibility": Rule(("string",), enum=VISIBILITIES),
    "protected": Rule(("boolean",)),
    "os_hidden": Rule(("boolean",)),
    "checksum": Rule(("null", "string"), max_length=32),
    "os_hash_algo": Rule(("null", "string"), max_length=64),
    "os_hash_value": Rule(("null", "string"), max_length=128),
    "owner": Rule(("null", "string"), max_length=255),
    "size": Rule(("null", "integer")),
    "virtual_size": Rule(("null", "integer")),
    "container_format": Rule(("null", "string"), enum=(None, *CONTAINER_FORMATS)),
    "disk_format": Rule(("null", "string"), enum=(None, *DISK_FORMATS)),
    "created_at": Rule(("string",)),
    "updated_at": Rule(("string",)),
    "tags": Rule(("array",)),
    "direct_url": Rule(("string",)),
    "min_ram": Rule(("integer",)),
    "min_disk": Rule(("integer",)),
    "self": Rule(("string",)),
    "file": Rule(("string",)),
    "stores": Rule(("string",)),
    "schema": Rule(("string",)),
    "locations": Rule(("array",)),
}
_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
}


def schema_error(reason: str) -> SimError:
    """Glance's 400 for a body that does not match the image schema."""
    return SimError(400, f"Provided object does not match schema 'image': {reason}", style="glance")


def forbidden(message: str) -> SimError:
    """A Glance 403."""
    return SimError(403, message, style="glance")


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer" and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[kind])


def check_property(key: str, value: Any) -> None:
    """Validate one property's value as Glance's permissive image schema does."""
    rule = RULES.get(key, Rule(("string",)))
    if not any(_is_type(value, kind) for kind in rule.types):
        kinds = ", ".join(f"'{kind}'" for kind in rule.types)
        raise schema_error(f"{value!r} is not of type {kinds}")
    if rule.enum is not None and value not in rule.enum:
        raise schema_error(f"{value!r} is not one of {list(rule.enum)!r}")
    if isinstance(value, str):
        if rule.max_length is not None and len(value) > rule.max_length:
            raise schema_error(f"{value!r} is too long")
        if rule.pattern is not None and re.search(rule.pattern, value) is None:
            raise schema_error(f"{value!r} does not match {rule.pattern!r}")
    if key == "tags":
        check_tags(value)


def check_tags(tags: list[Any]) -> None:
    """Each tag is a string of at most 255 characters."""
    for tag in tags:
        if not isinstance(tag, str):
            raise schema_error(f"{tag!r} is not of type 'string'")
        if len(tag) > 255:
            raise schema_error(f"{tag!r} is too long")


def check_writable(key: str) -> None:
    """403 for a read-only or reserved property (a PATCH path or a create key)."""
    if key in READONLY:
        raise forbidden(f"Attribute '{key}' is read-only.")
    if key in RESERVED or key.startswith(RESERVED_NAMESPACE):
        raise forbidden(f"Attribute '{key}' is reserved.")


def check_not_negative(key: str, value: int) -> None:
    """Glance's domain rule for `min_disk` and `min_ram`."""
    if value < 0:
        raise SimError(
            400,
            f"Invalid value '{value}' for parameter '{key}': Cannot be a negative value",
            style="glance",
        )


def check_quotas(properties: dict[str, str], tags: set[str]) -> None:
    """Glance's 413s for too many additional properties or tags."""
    for kind, count, maximum in (
        ("properties", len(properties), PROPERTY_QUOTA),
        ("tags", len(tags), TAG_QUOTA),
    ):
        if count > maximum:
            raise SimError(
                413,
                f"The limit has been exceeded on the number of allowed image {kind}. "
                f"Attempted: {count}, Maximum: {maximum}",
                style="glance",
            )


def image_schema() -> dict[str, Any]:
    """`GET /v2/schemas/image`: the base properties; any other property is a string."""
    properties: dict[str, Any] = {}
    for key, rule in RULES.items():
        spec: dict[str, Any] = {"type": list(rule.types) if len(rule.types) > 1 else rule.types[0]}
        if rule.enum is not None:
            spec["enum"] = list(rule.enum)
        if rule.max_length is not None:
            spec["maxLength"] = rule.max_length
        if rule.pattern is not None:
            spec["pattern"] = rule.pattern
        if key in READONLY:
            spec["readOnly"] = True
        properties[key] = spec
    properties["tags"]["items"] = {"type": "string", "maxLength": 255}
    properties["locations"]["items"] = {"type": "object"}
    links = [
        {"href": "{self}", "rel": "self"},
        {"href": "{file}", "rel": "enclosure"},
        {"href": "{schema}", "rel": "describedby"},
    ]
    return {
        "name": "image",
        "properties": properties,
        "additionalProperties": {"type": "string"},
        "links": links,
    }


def images_schema() -> dict[str, Any]:
    """`GET /v2/schemas/images`: a page of images and its links."""
    return {
        "name": "images",
        "properties": {
            "images": {"type": "array", "items": image_schema()},
            "schema": {"type": "string"},
            "first": {"type": "string"},
            "next": {"type": "string"},
        },
        "links": [
            {"href": "{first}", "rel": "first"},
            {"href": "{next}", "rel": "next"},
            {"href": "{schema}", "rel": "describedby"},
        ],
    }
