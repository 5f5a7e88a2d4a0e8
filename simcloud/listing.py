"""Nova's server list: filters, newest-first order, `limit`/`marker` pages.

The common lookups stay cheap at 10,000 servers: an anchored literal name regex
(`^web\\-1$`, what the driver sends for idempotent create) uses the name index, and
everything else is one linear pass per page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from simcloud.errors import bad_request
from simcloud.servers import settle, status_of
from simcloud.state import ServerRecord, SimState

_LITERAL = re.compile(r"\^((?:\\.|[^\\.^$*+?{}\[\]|()])*)\$")
_UNESCAPE = re.compile(r"\\(.)")


def literal_name(pattern: str) -> str | None:
    """The exact name an anchored, escaped regex matches, if it is one."""
    match = _LITERAL.fullmatch(pattern)
    return _UNESCAPE.sub(r"\1", match.group(1)) if match else None


def _since(value: str) -> float:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise bad_request(f"Invalid changes-since value: {value}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _candidates(state: SimState, name: str | None) -> Iterable[ServerRecord]:
    exact = literal_name(name) if name else None
    if exact is not None:
        ids = state.by_name.get(exact, set())
        found = [state.servers[i] for i in ids]
        return sorted(found, key=lambda r: r.created_at, reverse=True)
    return reversed(list(state.servers.values()))


def _matcher(params: Mapping[str, str]) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    try:
        name = re.compile(params["name"]) if params.get("name") else None
        ip = re.compile(params["ip"]) if params.get("ip") else None
    except re.error as exc:
        raise bad_request(f"Invalid regular expression: {exc}") from exc
    return name, ip


def _limit(state: SimState, raw: str | None) -> int | None:
    cap = state.config.max_limit or None
    if raw is None:
        return cap
    try:
        limit = int(raw)
    except ValueError as exc:
        raise bad_request("limit param must be an integer") from exc
    if limit < 0:
        raise bad_request("limit param must be positive")
    return min(limit, cap) if cap is not None else limit


def select(state: SimState, params: Mapping[str, str]) -> tuple[list[ServerRecord], bool]:
    """One page of servers matching Nova's filters; True when a next page may exist."""
    name_re, ip_re = _matcher(params)
    status = params.get("status", "").upper() or None
    since = _since(params["changes-since"]) if params.get("changes-since") else None
    locked = params.get("locked", "").lower() or None
    image, flavor = params.get("image"), params.get("flavor")
    limit, marker = _limit(state, params.get("limit")), params.get("marker")
    if marker is not None and marker not in state.servers:
        raise bad_request(f"marker [{marker}] not found")
    now, seeking = state.now(), marker is not None
    page: list[ServerRecord] = []
    for record in _candidates(state, params.get("name")):
        if seeking:
            seeking = record.id != marker
            continue
        if not settle(state, record, now):
            continue
        if (
            (name_re is not None and not name_re.search(record.name))
            or (ip_re is not None and not ip_re.search(record.address))
            or (status is not None and status_of(record) != status)
            or (since is not None and record.updated_at < since)
            or (locked is not None and str(record.locked).lower() != locked)
            or (image is not None and record.image_ref != image)
            or (flavor is not None and record.flavor_ref != flavor)
        ):
            continue
        if limit is not None and len(page) >= limit:
            return page, True
        page.append(record)
    return page, False
