"""The app at the other end of the lifecycle hook: it completes every token it is sent,
and records when simcloud deleted each server."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import Response

#: simcloud's Nova notification of a server deleted.
DELETE_EVENT = "compute.instance.shutdown.end"


@dataclass
class Completion:
    """One complete_lifecycle call (first attempt's send time, last attempt's answer)."""

    sent: float
    returned: float = 0.0
    status: str = ""
    attempts: int = 0


@dataclass(frozen=True)
class Records:
    """What the receiver recorded of one cluster's victims."""

    #: token → (wall time received, message)
    messages: dict[str, tuple[float, dict[str, Any]]]
    completions: dict[str, Completion]
    #: server id → (simcloud's wall time of the DELETE, wall time the notification arrived)
    deletes: dict[str, tuple[float, float]]
    duplicates: int


@dataclass
class HookReceiver:
    """Webhook endpoint (`/hook`) and simcloud notification sink (`/notifications`).

    Served by uvicorn in its own thread; every message is completed on the benchmark's
    event loop at once, concurrently with all others.
    """

    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: token → (wall time received, message)
    messages: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)
    duplicates: int = 0
    completions: dict[str, Completion] = field(default_factory=dict)
    #: server id → (simcloud's wall time of the DELETE, wall time the notification arrived)
    deletes: dict[str, tuple[float, float]] = field(default_factory=dict)
    loop: asyncio.AbstractEventLoop | None = None
    api: httpx.AsyncClient | None = None
    _futures: list[Future[None]] = field(default_factory=list)

    def app(self) -> FastAPI:
        """The receiving ASGI app."""
        app = FastAPI()

        @app.post("/hook", status_code=204)
        async def hook(request: Request) -> Response:
            self._on_message(await request.json())
            return Response(status_code=204)

        @app.post("/notifications", status_code=202)
        async def notification(request: Request) -> Response:
            self._on_notification(await request.json())
            return Response(status_code=202)

        return app

    def bind(self, loop: asyncio.AbstractEventLoop, api: httpx.AsyncClient) -> None:
        """Complete tokens on `loop` with `api`."""
        self.loop, self.api = loop, api

    def _on_message(self, body: dict[str, Any]) -> None:
        token = str(body["lifecycle_action_token"])
        with self.lock:
            if token in self.messages:
                self.duplicates += 1
                return
            self.messages[token] = (time.time(), body)
        if self.loop is not None:
            future = asyncio.run_coroutine_threadsafe(self._complete(body), self.loop)
            with self.lock:
                self._futures.append(future)

    def _on_notification(self, body: dict[str, Any]) -> None:
        data = body.get("payload", {}).get("nova_object.data", {})
        if body.get("event_type") != DELETE_EVENT or data.get("state") != "deleted":
            return
        at = datetime.strptime(body["timestamp"], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC)
        with self.lock:
            self.deletes.setdefault(str(data["uuid"]), (at.timestamp(), time.time()))

    async def _complete(self, message: dict[str, Any]) -> None:
        assert self.api is not None
        token = str(message["lifecycle_action_token"])
        body = {"complete_lifecycle": {"lifecycle_action_token": token}}
        done = Completion(sent=time.time())
        with self.lock:
            self.completions[token] = done
        for attempt in range(1, 6):
            try:
                response = await self.api.post(message["complete_url"], json=body)
                done.status = str(response.status_code)
            except httpx.HTTPError as err:
                done.status = type(err).__name__
            done.returned, done.attempts = time.time(), attempt
            if done.status == "202":
                return
            await asyncio.sleep(0.5)

    def _victim_done(self, cluster_id: str, seen: set[str]) -> bool:
        """Whether a victim of `cluster_id` not in `seen` is completed and deleted."""
        with self.lock:
            for token, (_, message) in self.messages.items():
                done = self.completions.get(token)
                if (
                    message["cluster_id"] == cluster_id
                    and token not in seen
                    and done is not None
                    and done.returned
                    and str(message["resource_id"]) in self.deletes
                ):
                    return True
        return False

    async def victim_done(self, cluster_id: str, seen: set[str], within_s: float) -> None:
        """Wait, reading only what this receiver recorded, until a victim of `cluster_id`
        whose token is not in `seen` has had its completion answered and its server
        deleted: no API poll of the bench's own runs beside the call being timed."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if self._victim_done(cluster_id, seen):
                return
            await asyncio.sleep(0.01)
        raise TimeoutError(f"no victim of cluster {cluster_id} completed within {within_s} s")

    def take_new(
        self, cluster_id: str, seen: set[str]
    ) -> list[tuple[Completion | None, tuple[float, float] | None]]:
        """The completion and server delete of each victim of `cluster_id` whose token
        is not in `seen` yet (each such token is added to `seen`)."""
        found = []
        with self.lock:
            for token, (_, message) in self.messages.items():
                if message["cluster_id"] != cluster_id or token in seen:
                    continue
                seen.add(token)
                deleted = self.deletes.get(str(message["resource_id"]))
                found.append((self.completions.get(token), deleted))
        return found

    def of_cluster(self, cluster_id: str) -> Records:
        """What was recorded of `cluster_id`'s victims so far (every server delete)."""
        with self.lock:
            messages = {
                t: (at, m) for t, (at, m) in self.messages.items() if m["cluster_id"] == cluster_id
            }
            completions = {t: c for t, c in self.completions.items() if t in messages}
            return Records(messages, completions, dict(self.deletes), self.duplicates)

    def counts(self) -> tuple[int, int, int]:
        """Messages, completions, deletes recorded so far."""
        with self.lock:
            return len(self.messages), len(self.completions), len(self.deletes)
