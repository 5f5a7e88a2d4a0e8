"""Absolute URLs of the API, as clients that follow `Location` headers need them."""

from __future__ import annotations

from fastapi import Request

from config import Settings


def api_base(request: Request) -> str:
    """The API's base URL: `WARDEN_PUBLIC_URL` when set, else the one the caller used."""
    settings: Settings = request.app.state.settings
    return (settings.public_url or str(request.base_url)).rstrip("/")
