"""Hook and probe URLs: plain http(s), no user information, a host the allow-list permits.

The contract: docs/api-contract.md §Lifecycle hooks and docs/api-contract.md §Health policy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import SplitResult, quote, urlsplit

from domain.errors import InvalidRequest

URL_MAX_LENGTH = 2048

_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|[0-9a-f:.]*:[0-9a-f:.]*")


def validate_hook_url(url: str, allowlist: Sequence[str], *, field: str = "url") -> None:
    """Raise InvalidRequest unless `url` is a plain http(s) URL the allow-list permits.

    An allow-list entry is a host name (exact, case-insensitive), a `*.suffix` wildcard
    (any host below `suffix`), or a URL prefix starting with `http://` or `https://`
    (same scheme, host and port; path below the prefix's). An empty list allows any host.
    """
    problem = url_problem(url, allowlist)
    if problem:
        raise InvalidRequest(f"{field}: {problem}")


def expand_poll_url(template: str, node_name: str) -> str:
    """The poll URL for one node; the name is percent-encoded so it cannot change the host."""
    return template.replace("{nodename}", quote(node_name, safe=""))


def url_problem(url: str, allowlist: Sequence[str]) -> str | None:
    """What is wrong with `url` under `allowlist`, or None when it may be used."""
    if len(url) > URL_MAX_LENGTH:
        return f"must be at most {URL_MAX_LENGTH} characters"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "must not contain whitespace or control characters"
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a malformed port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() not in ("http", "https"):
        return "must use the http or https scheme"
    if "@" in parts.netloc:
        return "must not contain user information (user:password@)"
    host = parts.hostname
    if not host or not _HOST.fullmatch(host):
        return "must have a valid host"
    if allowlist and not any(_allowed(parts, host, entry.strip()) for entry in allowlist):
        return f"host {host} is not in the allowed list of hook and probe URLs"
    return None


def _allowed(parts: SplitResult, host: str, entry: str) -> bool:
    low = entry.lower()
    if low.startswith(("http://", "https://")):
        return _under_prefix(parts, entry)
    if low.startswith("*."):
        return host.endswith(low[1:])
    return bool(low) and host == low


def _under_prefix(parts: SplitResult, entry: str) -> bool:
    try:
        prefix = urlsplit(entry)
        same_origin = (prefix.scheme.lower(), prefix.hostname, prefix.port) == (
            parts.scheme.lower(),
            parts.hostname,
            parts.port,
        )
    except ValueError:
        return False
    path, base = parts.path or "/", prefix.path or "/"
    if base.endswith("/"):
        return same_origin and path.startswith(base)
    return same_origin and (path == base or path.startswith(base + "/"))
