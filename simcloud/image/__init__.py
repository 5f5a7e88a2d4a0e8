"""Glance v2 images.

Other layers use `router` and, for Nova, `find_image` / `images_named` /
`seeded_image_id`. They are resolved on first use: the routes import `simcloud.state`,
which imports this package's `state` module, so importing them eagerly here would be
circular whenever `simcloud.state` is imported first.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["find_image", "images_named", "router", "seeded_image_id"]

_SOURCES = {
    "router": "simcloud.image.routes",
    "find_image": "simcloud.image.images",
    "images_named": "simcloud.image.images",
    "seeded_image_id": "simcloud.image.state",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_SOURCES[name]), name)
