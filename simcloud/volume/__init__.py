"""Cinder v3 volumes, volume types and attachments.

Other layers use `router` and, for Nova, `live_volume` / `attach` / `detach`. They are
resolved on first use: the routes import `simcloud.state`, which imports this package's
`state` module, so importing them eagerly here would be circular whenever
`simcloud.state` is imported first.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["attach", "detach", "live_volume", "router"]

_SOURCES = {
    "router": "simcloud.volume.routes",
    "attach": "simcloud.volume.volumes",
    "detach": "simcloud.volume.volumes",
    "live_volume": "simcloud.volume.volumes",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_SOURCES[name]), name)
