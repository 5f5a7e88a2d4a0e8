"""Where the signal URLs Warden hands out point: the API's public base URL, as the
worker's settings give it (`WARDEN_PUBLIC_URL`, else the API's host and port)."""

from __future__ import annotations

from temporalio import activity

from config import Settings
from domain.stack.types.wait_condition import signal_path


class SignalActivities:
    """Reads configuration, so it is an activity: a workflow never reads settings."""

    def __init__(self, settings: Settings) -> None:
        base = settings.public_url or f"http://{settings.api_host}:{settings.api_port}"
        self._base = base.rstrip("/")

    @activity.defn(name="signal_url")
    async def signal_url(self, signal_id: str) -> str:
        """The token-free URL that signals the handle or deployment `signal_id`."""
        return f"{self._base}{signal_path(signal_id)}"
