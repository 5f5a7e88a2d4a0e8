"""Octavia's list queries: attribute filters, tag filters, sorting, pages, field selection.

As `octavia.api.common.pagination.PaginationHelper` reads them: any attribute shown is
an exact-match filter (`loadbalancer_id` and `pool_id` match the `loadbalancers` and
`pools` an object shows), an unknown one answers 400; `tags=a,b` needs every tag,
`tags-any` one of them, `not-tags`/`not-tags-any` their negations. Lists are in
creation order unless `sort=key:dir,...` or `sort_key`/`sort_dir` say otherwise;
`limit` (at most 1000) and `marker` page them, with `previous`/`next` links.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from simcloud.identity import base_url
from simcloud.octavia.exceptions import fault

Shown = dict[str, Any]
#: Query parameters that are not filters.
CONTROLS = frozenset({"limit", "marker", "sort", "sort_key", "sort_dir", "fields", "page_reverse"})
TAG_FILTERS = frozenset({"tags", "tags-any", "not-tags", "not-tags-any"})
#: Octavia's `pagination_max_limit`.
MAX_LIMIT = 1000


def list_response(request: Request, collection: str, objects: list[Shown]) -> JSONResponse:
    """`{collection: [...], collection_links: [...]}` for the query of `request`."""
    params = request.query_params
    found = [o for o in objects if _matches(o, request)]
    found = _sorted(found, params.get("sort"), params.get("sort_key"), params.get("sort_dir"))
    limit, marker = _limit(params.get("limit")), params.get("marker")
    if marker is not None:
        ids = [o["id"] for o in found]
        if marker not in ids:
            raise fault("InvalidMarker", key=marker)
        found = found[ids.index(marker) + 1 :]
    page = found if limit is None else found[:limit]
    fields = params.getlist("fields")
    shown = [{k: v for k, v in o.items() if k in fields} if fields else o for o in page]
    return JSONResponse(
        {collection: shown, f"{collection}_links": _links(request, page, limit, marker)}
    )


def _matches(shown: Shown, request: Request) -> bool:
    for key, values in _filters(request).items():
        if key in TAG_FILTERS:
            if not _tags_match(key, set(shown.get("tags") or []), values):
                return False
            continue
        value = _value(shown, key)
        if not any(_text(value) == wanted for wanted in values):
            return False
    return True


def _filters(request: Request) -> dict[str, list[str]]:
    filters: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        if key in CONTROLS:
            continue
        if key in TAG_FILTERS:
            filters.setdefault(key, []).extend(t for t in value.split(",") if t)
        else:
            filters.setdefault(key, []).append(value)
    return filters


def _value(shown: Shown, key: str) -> Any:
    if key in shown:
        return shown[key]
    # `loadbalancer_id` and `pool_id` filter objects that show their parents as lists
    parents = shown.get(key.removesuffix("_id") + "s")
    if key.endswith("_id") and isinstance(parents, list):
        return next((p["id"] for p in parents), None)
    raise fault("InvalidFilterArgument")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "" if value is None else str(value)


def _tags_match(kind: str, tags: set[str], wanted: list[str]) -> bool:
    checks: dict[str, Callable[[], bool]] = {
        "tags": lambda: all(t in tags for t in wanted),
        "tags-any": lambda: any(t in tags for t in wanted),
        "not-tags": lambda: not all(t in tags for t in wanted),
        "not-tags-any": lambda: not any(t in tags for t in wanted),
    }
    return checks[kind]()


def _sorted(
    objects: list[Shown], sort: str | None, sort_key: str | None, sort_dir: str | None
) -> list[Shown]:
    keys: list[tuple[str, str]] = []
    if not (sort or sort_key):
        # Records are kept in creation order: Octavia's default (created_at, id) order,
        # without the random tie-break of ids created within the same second.
        return objects
    if sort:
        for part in sort.split(","):
            key, _, direction = part.partition(":")
            keys.append((key, direction or "asc"))
    elif sort_key:
        directions = (sort_dir or "").split(",") if sort_dir else []
        for n, key in enumerate(sort_key.split(",")):
            keys.append((key, directions[n] if n < len(directions) else "asc"))
    keys += [(k, "asc") for k in ("created_at", "id") if k not in dict(keys)]
    ordered = list(objects)
    # Stable sorts from the last key to the first give the lexicographic order.
    for key, direction in reversed(keys):
        if direction.lower() not in ("asc", "desc"):
            raise fault("InvalidSortDirection", key=direction)
        if objects and key not in objects[0]:
            raise fault("InvalidSortKey", key=key)
        ordered.sort(key=_sort_key(key), reverse=direction.lower() == "desc")
    return ordered


def _sort_key(key: str) -> Callable[[Shown], str]:
    return lambda shown: _text(shown.get(key))


def _limit(raw: str | None) -> int | None:
    if raw is None:
        return MAX_LIMIT
    try:
        if raw == "infinite" or int(raw) < 1:
            return MAX_LIMIT
        return min(int(raw), MAX_LIMIT)
    except ValueError:
        raise fault("InvalidLimit", key=raw) from None


def _links(
    request: Request, page: list[Shown], limit: int | None, marker: str | None
) -> list[dict[str, str]]:
    if not page:
        return []
    url = f"{base_url(request)}{request.url.path}"
    links = []
    if marker is not None:
        href = f"{url}?limit={limit}&marker={page[0]['id']}&page_reverse=True"
        links.append({"rel": "previous", "href": href})
    if limit is not None and len(page) >= limit:
        links.append({"rel": "next", "href": f"{url}?limit={limit}&marker={page[-1]['id']}"})
    return links
