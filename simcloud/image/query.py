"""Glance's image list: filters, `in:` and comparison operators, sorting, pages."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from simcloud.errors import bad_request
from simcloud.image.state import ImageRecord

SORT_KEYS = (
    "name",
    "status",
    "container_format",
    "disk_format",
    "size",
    "id",
    "created_at",
    "updated_at",
)
#: Filters that take `in:a,b` or `eq:a` (glance.db.sqlalchemy.api).
OPERATOR_FILTERS = ("name", "id", "status", "container_format", "disk_format")
#: Image columns compared for equality; any other key filters an additional property.
COLUMNS = (
    "checksum",
    "os_hash_algo",
    "os_hash_value",
    "owner",
    "min_disk",
    "min_ram",
    "size",
    "virtual_size",
    "visibility",
)
DEFAULT_LIMIT = 25
MAX_LIMIT = 1000
_TIME_OPS: dict[str, Callable[[float, float], bool]] = {
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "neq": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
}
_QUOTED = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)",?|([^,]+),?|,')


@dataclass
class ImageQuery:
    """A parsed `GET /v2/images` query."""

    tests: list[Callable[[ImageRecord], bool]] = field(default_factory=list)
    sort: list[tuple[str, str]] = field(default_factory=list)
    limit: int = DEFAULT_LIMIT
    marker: str | None = None


def parse_query(params: QueryParams) -> ImageQuery:
    """Glance's list deserializer and filter rules, or its 400."""
    query = ImageQuery(sort=_sorting(params))
    query.limit, query.marker = _limit(params.get("limit")), params.get("marker")
    member_status = params.get("member_status", "accepted")
    if member_status not in ("pending", "accepted", "rejected", "all"):
        raise bad_request(f"Invalid status: {member_status}", style="glance")
    if "changes-since" in params:
        raise bad_request(
            'The "changes-since" filter is no longer available on v2.', style="glance"
        )
    query.tests.append(_visibility(params.get("visibility")))
    for key in ("os_hidden", "protected"):
        query.tests.append(_boolean(key, params.get(key, "false" if key == "os_hidden" else None)))
    tags = params.getlist("tag")
    query.tests.append(lambda r: all(t.strip() in r.tags for t in tags))
    skip = {"limit", "marker", "member_status", "sort", "sort_key", "sort_dir", "tag"}
    skip |= {"visibility", "os_hidden", "protected"}
    for key, value in params.items():
        if key not in skip:
            query.tests.append(_filter(key, value))
    return query


def _limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    try:
        limit = int(raw)
    except ValueError as exc:
        raise bad_request("limit param must be an integer", style="glance") from exc
    if limit < 0:
        raise bad_request("limit param must be positive", style="glance")
    return min(limit, MAX_LIMIT)


def _sorting(params: QueryParams) -> list[tuple[str, str]]:
    if "sort" in params:
        if "sort_key" in params or "sort_dir" in params:
            raise bad_request("Old and new sorting syntax cannot be combined", style="glance")
        pairs = [p.partition(":") for p in params["sort"].strip().split(",")]
        keys, dirs = [k.strip() for k, _, _ in pairs], [d.strip() or "desc" for _, _, d in pairs]
    else:
        keys = [k.strip() for k in params.getlist("sort_key")]
        dirs = [d.strip() for d in params.getlist("sort_dir")]
        if len(dirs) > 1 and len(dirs) != len(keys):
            raise bad_request(
                "Number of sort dirs does not match the number of sort keys", style="glance"
            )
    for key in keys:
        if key not in SORT_KEYS:
            raise bad_request(
                f"Invalid sort key: {key}. It must be one of the following: "
                f"{', '.join(SORT_KEYS)}.",
                style="glance",
            )
    for direction in dirs:
        if direction not in ("asc", "desc"):
            raise bad_request(f"Invalid sort direction: {direction}", style="glance")
    default = dirs[0] if dirs else "desc"
    keys = keys or ["created_at"]
    if len(dirs) <= 1:
        dirs = [default] * len(keys)
    # Glance always ends with created_at then id, so pages are stable.
    extra = [k for k in ("created_at", "id") if k not in keys]
    return list(zip(keys + extra, dirs + [default] * len(extra), strict=True))


def _visibility(value: str | None) -> Callable[[ImageRecord], bool]:
    if value is None:
        # Community images are listed only when asked for (the caller owns none here).
        return lambda r: r.visibility != "community"
    if value not in ("community", "public", "private", "shared", "all"):
        raise bad_request(f"Invalid visibility value: {value}", style="glance")
    return lambda r: value in ("all", r.visibility)


def _boolean(key: str, value: str | None) -> Callable[[ImageRecord], bool]:
    if value is None:
        return lambda _: True
    if value.lower() not in ("true", "false"):
        raise bad_request(
            f"Invalid value '{value}' for '{key}' filter. Valid values are 'true' or 'false'.",
            style="glance",
        )
    wanted = value.lower() == "true"
    return lambda r: bool(getattr(r, key)) is wanted


def _filter(key: str, value: str) -> Callable[[ImageRecord], bool]:
    if key in ("size_min", "size_max"):
        try:
            bound = int(value)
        except ValueError as exc:
            raise bad_request(
                "Unable to filter on a range with a non-numeric value.", style="glance"
            ) from exc
        if key == "size_min":
            return lambda r: r.size is not None and r.size >= bound
        return lambda r: r.size is not None and r.size <= bound
    if key in ("created_at", "updated_at"):
        return _time_filter(key, value)
    if key in OPERATOR_FILTERS:
        op, _, rest = value.partition(":") if ":" in value else ("eq", "", value)
        if op == "in":
            allowed = {a or b for a, b in _QUOTED.findall(rest)}
            return lambda r: getattr(r, key) in allowed
        if op != "eq":
            raise bad_request(f"Unable to filter by unknown operator '{op}'.", style="glance")
        return lambda r: getattr(r, key) == rest
    if key in COLUMNS:
        return lambda r: _text(getattr(r, key)) == value
    return lambda r: r.properties.get(key) == value


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(value).lower()
    return None if value is None else str(value)


def _time_filter(key: str, value: str) -> Callable[[ImageRecord], bool]:
    op, _, moment = value.partition(":")
    if _parse_time(value) is not None:  # a bare timestamp means equality
        op, moment = "eq", value
    compare = _TIME_OPS.get(op)
    if compare is None:
        raise bad_request(f"Unable to filter by unknown operator '{op}'.", style="glance")
    threshold = _parse_time(moment)
    if threshold is None:
        raise bad_request(
            f'Bad "{key}" query filter format. Use ISO 8601 DateTime notation.', style="glance"
        )
    return lambda r: compare(float(int(getattr(r, key))), threshold)


def _parse_time(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def select(records: list[ImageRecord], query: ImageQuery) -> tuple[list[ImageRecord], bool]:
    """One sorted page of the matching images; True when it is full (a next link)."""
    ordered = [r for r in records if r.status != "killed"]
    for key, direction in reversed(query.sort):
        present = [r for r in ordered if getattr(r, key) is not None]
        absent = [r for r in ordered if getattr(r, key) is None]
        present.sort(key=lambda r: getattr(r, key), reverse=direction == "desc")
        # NULLs sort first ascending and last descending, as in Glance's database.
        ordered = absent + present if direction == "asc" else present + absent
    if query.marker is not None:
        # The marker is any visible image, filtered out or not: the page starts after it.
        ids = [r.id for r in ordered]
        if query.marker not in ids:
            raise bad_request(f"No image found with ID {query.marker}", style="glance")
        ordered = ordered[ids.index(query.marker) + 1 :]
    page = [r for r in ordered if all(test(r) for test in query.tests)][: query.limit]
    return page, bool(page) and len(page) == query.limit


def page_links(params: QueryParams, page: list[ImageRecord], full: bool) -> dict[str, str]:
    """Glance's `first` and `next` links (relative to the endpoint, as Glance gives)."""
    rest = [(k, v) for k, v in params.multi_items() if k != "marker"]
    links = {"first": "/v2/images" + (f"?{urlencode(rest)}" if rest else "")}
    if full:
        links["next"] = "/v2/images?" + urlencode([*rest, ("marker", page[-1].id)])
    return links
