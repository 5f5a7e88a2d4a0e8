"""OpenStack list pagination (`*_links` with `rel=next`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit


def next_marker(links: Any) -> str | None:
    """The `marker` of an OpenStack `rel=next` link, if the list has another page.

    Only the marker is taken from the link: its host may be an internal name the
    cloud was not configured to hide, so the next page is asked of our own endpoint.
    """
    for link in links or []:
        if isinstance(link, dict) and link.get("rel") == "next":
            markers = parse_qs(urlsplit(str(link.get("href", ""))).query).get("marker")
            return markers[0] if markers else None
    return None
