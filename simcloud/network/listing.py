"""Neutron's list queries: attribute filters, tag filters, `limit`/`marker` pages.

Any attribute a collection shows is a filter, repeated to match any of several values
(`?status=ACTIVE&status=DOWN`); an unknown one answers 400 as with Neutron's
`filter-validation` extension. `tags=a,b` needs every tag, `tags-any` one of them,
`not-tags`/`not-tags-any` their negations. Ports also take
`fixed_ips=ip_address=10.0.0.5` and `fixed_ips=subnet_id=...`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import JSONResponse

from simcloud.identity import base_url
from simcloud.network.exceptions import http_bad_request
from simcloud.network.records import visible
from simcloud.network.state import Record
from simcloud.state import SimState

#: Query parameters that are not filters.
CONTROLS = frozenset({"fields", "sort_key", "sort_dir", "limit", "marker", "page_reverse"})
TAG_FILTERS = frozenset({"tags", "tags-any", "not-tags", "not-tags-any"})
#: Collection → filters beyond the attributes it shows.
EXTRA_FILTERS = {"ports": frozenset({"fixed_ips"})}
TRUE_WORDS = frozenset({"1", "t", "true", "on", "y", "yes"})

Matcher = Callable[[Record], bool]


def list_response(
    request: Request,
    state: SimState,
    collection: str,
    project_id: str,
    show: Callable[[Record], Record] = dict,
) -> JSONResponse:
    """`{collection: [...]}` of the records the caller may see that match the query."""
    records = state.network.collection(collection)
    matches = matcher(request, collection, records.values())
    found = [
        r
        for r in records.values()
        if visible(state.network, collection, r, project_id) and matches(r)
    ]
    page, more = _page(request, found)
    body: dict[str, object] = {collection: [show(r) for r in page]}
    if more:
        query = dict(request.query_params) | {"marker": page[-1]["id"]}
        href = f"{base_url(request)}{request.url.path}?{urlencode(query)}"
        body[f"{collection}_links"] = [{"rel": "next", "href": href}]
    return JSONResponse(body)


def matcher(request: Request, collection: str, records: Iterable[Record]) -> Matcher:
    """A predicate for the query's filters; 400 for a filter the collection lacks."""
    wanted: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        if key not in CONTROLS and value != "":
            wanted.setdefault(key, []).append(value)
    sample = next(iter(records), None)
    known = set(sample or ()) | TAG_FILTERS | EXTRA_FILTERS.get(collection, frozenset())
    invalid = [key for key in wanted if key not in known]
    if invalid and sample is not None:
        raise http_bad_request(f"{invalid} is invalid attribute for filtering")
    tests = [_test(key, values) for key, values in wanted.items()]
    return lambda record: all(test(record) for test in tests)


def _test(key: str, values: list[str]) -> Matcher:
    if key in TAG_FILTERS:
        return _tag_test(key, {t for v in values for t in v.split(",") if t})
    if key == "fixed_ips":
        return _fixed_ip_test(values)
    return lambda record: _same(record.get(key), values)


def _same(value: object, wanted: list[str]) -> bool:
    if isinstance(value, bool):
        return any((w.lower() in TRUE_WORDS) == value for w in wanted)
    if isinstance(value, list):
        return any(str(item) in wanted for item in value)
    if value is None:
        return False
    return str(value) in wanted


def _tag_test(key: str, tags: set[str]) -> Matcher:
    if key == "tags":
        return lambda record: tags <= set(record["tags"])
    if key == "tags-any":
        return lambda record: bool(tags & set(record["tags"]))
    if key == "not-tags":
        return lambda record: not tags <= set(record["tags"])
    return lambda record: not tags & set(record["tags"])


def _fixed_ip_test(values: list[str]) -> Matcher:
    """One of the port's addresses must satisfy every `fixed_ips=key=value` given."""
    wanted: dict[str, set[str]] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or key not in {"ip_address", "subnet_id", "ip_address_substr"}:
            raise http_bad_request(f"'{value}' is not of the form <key>=[value]")
        wanted.setdefault(key, set()).add(item)

    def fits(fixed_ip: dict[str, str]) -> bool:
        return all(
            any(item in fixed_ip["ip_address"] for item in items)
            if key == "ip_address_substr"
            else fixed_ip[key] in items
            for key, items in wanted.items()
        )

    return lambda record: any(fits(fixed_ip) for fixed_ip in record["fixed_ips"])


def _page(request: Request, found: list[Record]) -> tuple[list[Record], bool]:
    marker = request.query_params.get("marker")
    raw_limit = request.query_params.get("limit")
    if marker is not None:
        ids = [r["id"] for r in found]
        found = found[ids.index(marker) + 1 :] if marker in ids else []
    if raw_limit is None:
        return found, False
    try:
        limit = int(raw_limit)
    except ValueError:
        limit = -1
    if limit < 0:
        raise http_bad_request(f"Limit must be an integer 0 or greater and not '{raw_limit}'")
    if limit == 0:
        return found, False
    return found[:limit], len(found) > limit
