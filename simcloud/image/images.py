"""Glance's image rules: create, status transitions, tags, lookup and JSON shape."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

from simcloud.errors import SimError, bad_request
from simcloud.image.schema import (
    DISALLOWED,
    FACTORY_READONLY,
    RESERVED,
    RESERVED_NAMESPACE,
    RULES,
    check_not_negative,
    check_property,
    check_quotas,
    forbidden,
    schema_error,
)
from simcloud.image.state import ImageRecord
from simcloud.state import SimState, isotime

#: The import methods this Glance enables (`enabled_import_methods`).
IMPORT_METHODS = ("web-download",)
#: Status → statuses Glance lets an image move to (glance.domain.Image).
TRANSITIONS = {
    "queued": ("saving", "uploading", "importing", "active", "deleted"),
    "saving": ("active", "killed", "deleted", "queued"),
    "uploading": ("importing", "queued", "deleted"),
    "importing": ("active", "deleted", "queued"),
    "active": ("pending_delete", "deleted", "deactivated"),
    "killed": ("deleted",),
    "pending_delete": ("deleted", "active"),
    "deleted": (),
    "deactivated": ("active", "deleted"),
}
#: Create-body keys that are image attributes; every other key is a property.
_BASE_KEYS = (
    "container_format",
    "disk_format",
    "id",
    "min_disk",
    "min_ram",
    "name",
    "owner",
    "visibility",
    "protected",
    "os_hidden",
)


def glance_error(status: int, message: str) -> SimError:
    """An error in Glance's format."""
    return SimError(status, message, style="glance")


def find_image(state: SimState, ref: str) -> ImageRecord | None:
    """The image `ref` names by id (or by a URL ending in the id, as Nova accepts)."""
    image_id = ref.rstrip("/").rsplit("/", maxsplit=1)[-1]
    return state.images.get(image_id, state.now())


def images_named(state: SimState, name: str) -> list[ImageRecord]:
    """Every image called exactly `name` (for clients that resolve names, like Heat)."""
    return [r for r in state.images.all(state.now()) if r.name == name]


def get_image(state: SimState, image_id: str) -> ImageRecord:
    """The image, or Glance's 404."""
    record = state.images.get(image_id, state.now())
    if record is None:
        raise glance_error(404, f"No image found with ID {image_id}")
    return record


def to_json(record: ImageRecord) -> dict[str, Any]:
    """The image as Glance v2 shows it: properties flattened beside the attributes."""
    body: dict[str, Any] = dict(record.properties)
    body |= {
        "name": record.name,
        "disk_format": record.disk_format,
        "container_format": record.container_format,
        "visibility": record.visibility,
        "size": record.size,
        "virtual_size": record.virtual_size,
        "status": record.status,
        "checksum": record.checksum,
        "protected": record.protected,
        "min_ram": record.min_ram,
        "min_disk": record.min_disk,
        "owner": record.owner,
        "os_hidden": record.os_hidden,
        "os_hash_algo": record.os_hash_algo,
        "os_hash_value": record.os_hash_value,
        "id": record.id,
        "created_at": isotime(record.created_at),
        "updated_at": isotime(record.updated_at),
        "tags": sorted(record.tags),
        "self": f"/v2/images/{record.id}",
        "file": f"/v2/images/{record.id}/file",
        "schema": "/v2/schemas/image",
    }
    return body


def new_image(state: SimState, body: Any, project_id: str) -> ImageRecord:
    """Glance's create: validate the body, then a `queued` image owned by the caller."""
    base, properties, tags = _split_create(body)
    owner = base.pop("owner", None) or project_id
    if owner != project_id:
        raise forbidden(f"You are not permitted to create images owned by '{owner}'")
    for key in ("min_disk", "min_ram"):
        check_not_negative(key, base.get(key, 0))
    check_quotas(properties, tags)
    image_id = base.pop("id", None) or str(uuid.uuid4())
    if image_id in state.images.images:
        raise glance_error(409, f"Image ID {image_id} already exists!")
    now = state.now()
    record = ImageRecord(
        id=image_id, owner=owner, created_at=now, updated_at=now, tags=tags, properties=properties
    )
    for key, value in base.items():
        setattr(record, key, value)
    state.images.images[image_id] = record
    return record


def _split_create(body: Any) -> tuple[dict[str, Any], dict[str, str], set[str]]:
    if body is None:
        raise bad_request("Body expected in request.", style="glance")
    if not isinstance(body, dict):
        raise schema_error(f"{body!r} is not of type 'object'")
    for key in DISALLOWED:
        if key in body:
            raise forbidden(f"Attribute '{key}' is read-only.")
    for key, value in body.items():
        check_property(key, value)
    base = {k: body[k] for k in _BASE_KEYS if k in body}
    properties = {k: v for k, v in body.items() if k not in RULES or k in RESERVED}
    for key in properties:
        if len(key) > 255:
            raise bad_request(
                "Custom property should not be greater than 255 characters.", style="glance"
            )
        if key in RESERVED or key.startswith(RESERVED_NAMESPACE):
            raise forbidden(f"Attribute '{key}' is reserved.")
    for key in FACTORY_READONLY:
        if key in body:
            raise forbidden(f"Attribute '{key}' is read-only.")
    return base, properties, set(body.get("tags", []))


def move(record: ImageRecord, status: str) -> None:
    """Change status as Glance's domain allows, else its 409."""
    if status not in TRANSITIONS[record.status]:
        raise glance_error(
            409, f"Image status transition from {record.status} to {status} is not allowed"
        )
    record.status = status


def begin_upload(record: ImageRecord, now: float) -> None:
    """`PUT .../file` accepted: the image is `saving` while its data streams in."""
    move(record, "saving")
    missing = [k for k in ("disk_format", "container_format") if not getattr(record, k)]
    if missing:
        record.status = "queued"
        noun = "Property" if len(missing) == 1 else "Properties"
        raise bad_request(
            f"{noun} {', '.join(missing)} must be set prior to saving data.", style="glance"
        )
    record.updated_at = now


def start_import(
    state: SimState, record: ImageRecord, method: str, uri: Any, *, must_succeed: bool
) -> None:
    """`web-download`: `importing` now, `active` after the import latency (no fetch)."""
    if record.status == "active":
        raise glance_error(409, "Image with status active cannot be target for import")
    if record.status != "queued":
        raise glance_error(409, f"Image needs to be in 'queued' state to use '{method}' method")
    for key in ("container_format", "disk_format"):
        if not getattr(record, key):
            raise glance_error(409, f"'{key}' needs to be set before import")
    if not must_succeed:  # only meaningful with several stores, which this Glance lacks
        raise bad_request(
            f"All_stores_must_succeed can only be set with enabled_backends {uri}", style="glance"
        )
    if not _uri_allowed(uri):
        raise bad_request(f"URI for web-download does not pass filtering: {uri}", style="glance")
    now = state.now()
    move(record, "importing")
    record.properties["os_glance_import_task"] = str(uuid.uuid4())
    record.import_uri = str(uri)
    record.import_done_at = now + state.images.import_latency_s
    record.updated_at = now


def _uri_allowed(uri: Any) -> bool:
    # Glance's default import filtering: http(s) to any host on port 80 or 443.
    if not isinstance(uri, str) or not uri:
        return False
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port in (None, 80, 443)


def deactivate(record: ImageRecord, now: float) -> None:
    """Glance's deactivate: active → deactivated (no-op when already deactivated)."""
    if record.status not in ("active", "deactivated"):
        raise forbidden(f"Not allowed to deactivate image in status '{record.status}'")
    if record.status == "active":
        record.status, record.updated_at = "deactivated", now


def reactivate(record: ImageRecord, now: float) -> None:
    """Glance's reactivate: deactivated → active (no-op when already active)."""
    if record.status not in ("active", "deactivated"):
        raise forbidden(f"Not allowed to reactivate image in status '{record.status}'")
    if record.status == "deactivated":
        record.status, record.updated_at = "active", now


def delete_image(state: SimState, image_id: str) -> None:
    """Glance's delete: 403 while protected; afterwards the image answers 404."""
    record = state.images.get(image_id, state.now())
    if record is None:
        raise glance_error(404, f"Failed to find image {image_id} to delete")
    if record.protected:
        raise forbidden(f"Image {image_id} is protected and cannot be deleted.")
    del state.images.images[image_id]
