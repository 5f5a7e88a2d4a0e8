"""Cinder's volume list: the filters a project member may use, sorting, pages."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import QueryParams

from simcloud.errors import SimError, bad_request
from simcloud.volume.schemas import TRUE_WORDS
from simcloud.volume.state import VolumeRecord

#: Cinder's `osapi_max_limit`.
MAX_LIMIT = 1000
#: Sort key → the volume's value for it.
SORT_KEYS = {
    "id": lambda v: v.id,
    "name": lambda v: v.name or "",
    "size": lambda v: v.size,
    "status": lambda v: v.status,
    "created_at": lambda v: v.created_at,
    "updated_at": lambda v: v.updated_at or 0.0,
    "availability_zone": lambda v: v.availability_zone,
    "bootable": lambda v: v.bootable,
}


@dataclass
class VolumePage:
    """One page of a volume list."""

    volumes: list[VolumeRecord]
    #: The marker of the next page when this one is full.
    next_marker: str | None


def _literal(value: str) -> Any:
    # Cinder evaluates filter values as Python literals, keeping strings that are not.
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def _matches(record: VolumeRecord, key: str, raw: str) -> bool:
    if key == "name":
        return record.name == raw
    if key == "bootable":
        return record.bootable is (raw in TRUE_WORDS)
    value = _literal(raw)
    if key == "metadata":
        return isinstance(value, dict) and all(
            record.metadata.get(str(k)) == str(v) for k, v in value.items()
        )
    if key == "size":
        return bool(record.size == value)
    return str(getattr(record, key)) == str(value)


def _integer(params: QueryParams, key: str, default: int) -> int:
    raw = params.get(key)
    if raw is None:
        return default
    try:
        number = int(raw)
    except ValueError as exc:
        raise bad_request(f"{key} param must be an integer") from exc
    if number < 0:
        raise bad_request(f"{key} param must be positive")
    return number


def _sort(params: QueryParams) -> list[tuple[str, bool]]:
    if "sort" in params and ("sort_key" in params or "sort_dir" in params):
        raise bad_request(
            "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used "
            "with the 'sort' parameter."
        )
    if "sort" in params:
        pairs = [p.partition(":") for p in params["sort"].strip().split(",")]
        keys = [(k.strip(), (d.strip() or "desc")) for k, _, d in pairs]
    else:
        keys = [(params.get("sort_key", "created_at"), params.get("sort_dir", "desc"))]
    default_dir = keys[0][1]
    keys += [(k, default_dir) for k in ("created_at", "id") if k not in dict(keys)]
    for key, direction in keys:
        if key not in SORT_KEYS or direction not in ("asc", "desc"):
            raise bad_request("Invalid input received: Invalid sort key or direction")
    return [(key, direction == "desc") for key, direction in keys]


def select_volumes(volumes: list[VolumeRecord], params: QueryParams) -> VolumePage:
    """Filter (name, status, metadata, bootable, availability_zone, size), sort, page."""
    limit = min(_integer(params, "limit", MAX_LIMIT), MAX_LIMIT)
    offset = _integer(params, "offset", 0)
    filters = [
        (k, v)
        for k, v in params.items()
        if k in ("name", "status", "metadata", "bootable", "availability_zone", "size")
    ]
    ordered = list(volumes)
    for key, descending in reversed(_sort(params)):
        ordered.sort(key=SORT_KEYS[key], reverse=descending)
    marker = params.get("marker")
    if marker is not None:
        ids = [v.id for v in ordered]
        if marker not in ids:
            raise SimError(404, f"Volume {marker} could not be found.")
        ordered = ordered[ids.index(marker) + 1 :]
    matching = [v for v in ordered if all(_matches(v, k, raw) for k, raw in filters)]
    page = matching[offset : offset + limit]
    full = bool(page) and len(page) == limit
    return VolumePage(page, page[-1].id if full else None)
