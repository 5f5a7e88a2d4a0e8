"""simcloud for tests: in process (ASGI) or over real HTTP, plus a notification receiver.

Wait for asynchronous effects with `tests.support.eventually.eventually`.

Other test packages get a real simcloud with a three-line fixture::

    @pytest.fixture(scope="session")
    def simcloud() -> Iterator[RunningSimcloud]:
        with running_simcloud() as sim:
            yield sim
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import Response

from activities.cloud import CloudConfig
from simcloud.app import create_app
from simcloud.config import SimConfig
from simcloud.server import serve_in_thread

PASSWORD_AUTH = {
    "auth": {
        "identity": {
            "methods": ["password"],
            "password": {
                "user": {
                    "name": "warden",
                    "domain": {"name": "Default"},
                    "password": "warden-secret",
                }
            },
        },
        "scope": {"project": {"name": "demo", "domain": {"name": "Default"}}},
    }
}


@dataclass
class RunningSimcloud:
    """A simcloud served over HTTP on a free local port."""

    url: str
    config: SimConfig

    @property
    def auth_url(self) -> str:
        """Its Keystone v3 URL."""
        return f"{self.url}/identity/v3"

    def cloud_config(self, **overrides: Any) -> CloudConfig:
        """Driver configuration with simcloud's credentials."""
        fields: dict[str, Any] = {
            "auth_url": self.auth_url,
            "username": self.config.username,
            "password": self.config.password,
            "project_name": self.config.project_name,
            "timeout_s": 10.0,
        }
        return CloudConfig(**(fields | overrides))


@contextmanager
def running_simcloud(config: SimConfig | None = None) -> Iterator[RunningSimcloud]:
    """Serve a fresh simcloud over HTTP until the block exits."""
    config = config or SimConfig()
    with serve_in_thread(create_app(config)) as served:
        yield RunningSimcloud(url=served.url, config=config)


@dataclass
class NotificationReceiver:
    """A tiny HTTP endpoint collecting the notifications POSTed to it."""

    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> FastAPI:
        """The receiving ASGI app (`POST /notifications`)."""
        app = FastAPI()

        @app.post("/notifications", status_code=202)
        async def receive(request: Request) -> Response:
            body = await request.json()
            with self._lock:
                self.received.append(body)
            return Response(status_code=202)

        return app

    def events(self) -> list[str]:
        """Event types received so far, in order."""
        with self._lock:
            return [n["event_type"] for n in self.received]

    def for_server(self, server_id: str) -> list[dict[str, Any]]:
        """Notifications about one server."""
        with self._lock:
            return [
                n for n in self.received if n["payload"]["nova_object.data"]["uuid"] == server_id
            ]

    def clear(self) -> None:
        """Forget everything received."""
        with self._lock:
            self.received.clear()


@contextmanager
def running_receiver() -> Iterator[NotificationReceiver]:
    """A notification receiver over HTTP until the block exits."""
    receiver = NotificationReceiver()
    with serve_in_thread(receiver.app()) as served:
        receiver.url = f"{served.url}/notifications"
        yield receiver


class SimControl:
    """The `/sim/*` control routes of a simcloud, for tests."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def _post(self, path: str, body: Any = None) -> Any:
        response = await self.client.post(path, json=body)
        response.raise_for_status()
        return response.json() if response.content else None

    async def reset(self) -> None:
        """Forget every server, token, message and fault."""
        await self._post("/sim/reset")

    async def fault(self, server_id: str, kind: str, cured_by: list[str] | None = None) -> Any:
        """Inject a server fault."""
        body: dict[str, Any] = {"kind": kind}
        if cured_by is not None:
            body["cured_by"] = cured_by
        return await self._post(f"/sim/servers/{server_id}/fault", body)

    async def api_faults(
        self,
        error_rate: float,
        status: int = 503,
        latency_ms: int = 0,
        *,
        lost_response_rate: float = 0.0,
        hold_ms: int = 0,
        match: str | None = None,
        max_errors: int | None = None,
    ) -> Any:
        """Make the OpenStack APIs flaky (`error_rate` 0 turns it off).

        `lost_response_rate`: share of errors sent after the call was carried out;
        `hold_ms`: instead of failing, calls are carried out and answered that late;
        `match`: only calls whose "METHOD /path" it matches fail; `max_errors`: heal after.
        """
        body = {
            "error_rate": error_rate,
            "status": status,
            "latency_ms": latency_ms,
            "lost_response_rate": lost_response_rate,
            "hold_ms": hold_ms,
            "match": match,
            "max_errors": max_errors,
        }
        return await self._post("/sim/api-faults", body)

    async def advance_clock(self, seconds: float) -> None:
        """Move simulated time forward."""
        await self._post("/sim/clock", {"advance_s": seconds})

    async def revoke_tokens(self) -> None:
        """Revoke every Keystone token."""
        await self._post("/sim/tokens/revoke")

    async def seed(self, count: int, name_prefix: str = "seed", **extra: Any) -> Any:
        """Create `count` ACTIVE servers at once."""
        return await self._post("/sim/seed", {"count": count, "name_prefix": name_prefix} | extra)

    async def state(self) -> dict[str, Any]:
        """The `/sim/state` summary."""
        response = await self.client.get("/sim/state")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    async def app_health(self, server_name: str) -> httpx.Response:
        """`GET /sim/apps/{server_name}/health`."""
        return await self.client.get(f"/sim/apps/{server_name}/health")


@asynccontextmanager
async def in_process_simcloud(
    config: SimConfig | None = None, *, notify_transport: httpx.AsyncBaseTransport | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """A simcloud app in this process (lifespan included), with a client at `http://simcloud`."""
    app = create_app(config or SimConfig(), notify_transport=notify_transport)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://simcloud") as client:
            yield client


async def login(client: httpx.AsyncClient, body: dict[str, Any] | None = None) -> dict[str, str]:
    """Authenticate with simcloud's default password credentials; the token header."""
    response = await client.post("/identity/v3/auth/tokens", json=body or PASSWORD_AUTH)
    assert response.status_code == 201, response.text
    return {"X-Auth-Token": response.headers["X-Subject-Token"]}
