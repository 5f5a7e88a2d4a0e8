"""Example lifecycle-hook consumer: drain a node, then tell Warden it may delete it.

The protocol (docs/api-contract.md §Lifecycle hooks, after Senlin's scale-in lifecycle
hooks, docs/openstack-designs.md §Senlin lifecycle hooks):
1. Before deleting a node, Warden POSTs a JSON `LifecycleMessage` to your webhook.
2. With a policy secret, `X-Warden-Signature: sha256=<hex HMAC-SHA256(secret, body)>`
   covers the raw body: verify it on the bytes, before parsing.
3. Answer 2xx at once and work in the background. 5xx/408/429 make Warden retry, so
   the same message may arrive twice: deduplicate on `lifecycle_action_token`.
4. Clean up (drain connections, hand off jobs). Taking longer than `timeout`? POST
   `{"heartbeat_lifecycle": {...token...}}` to `complete_url` to restart the timer.
5. POST `{"complete_lifecycle": {"lifecycle_action_token": ...}}` to `complete_url`
   with `X-Auth-Token`: the node is deleted at once. Silence = deletion at `deadline`.

    python -m examples.lifecycle_consumer --port 8090 --drain-seconds 2 --heartbeat-every 1
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from domain.cluster.lifecycle import SIGNATURE_HEADER, LifecycleMessage
from domain.signatures import verify_signature

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConsumerConfig:
    """How this consumer verifies, drains and calls back."""

    secret: str | None = None  # the deletion policy's hook secret; None = accept unsigned
    warden_token: str = ""  # sent as X-Auth-Token to complete_url
    drain_seconds: float = 2.0  # stand-in for the real clean-up
    heartbeat_every: float | None = None  # heartbeat_lifecycle period while draining
    attempts: int = 5  # tries per call to Warden (5xx and connection errors only)
    retry_delay_s: float = 1.0  # first back-off, doubled each try


class Received(BaseModel):
    """A message and how far its node got; listed by `GET /received`."""

    message: LifecycleMessage
    state: Literal["received", "draining", "completed", "failed"] = "received"
    last_status: int | None = None  # last HTTP status from Warden
    heartbeats: int = 0


async def call_warden(
    http: httpx.AsyncClient, config: ConsumerConfig, message: LifecycleMessage, verb: str
) -> int | None:
    """POST `{verb: {lifecycle_action_token}}` to complete_url; the last HTTP status."""
    body = {verb: {"lifecycle_action_token": message.lifecycle_action_token}}
    status: int | None = None
    for attempt in range(1, config.attempts + 1):
        try:
            response = await http.post(
                message.complete_url, json=body, headers={"X-Auth-Token": config.warden_token}
            )
            status = response.status_code
            if status < 500:  # 2xx is done; a 4xx will not change by retrying
                return status
        except httpx.HTTPError as exc:
            logger.warning("%s attempt %d failed: %r", verb, attempt, exc)
        if attempt < config.attempts:
            await asyncio.sleep(config.retry_delay_s * 2 ** (attempt - 1))
    return status


async def drain_and_complete(
    http: httpx.AsyncClient, config: ConsumerConfig, item: Received
) -> None:
    """Drain the node (simulated), heartbeating meanwhile, then complete the lifecycle."""
    token = item.message.lifecycle_action_token
    item.state = "draining"
    logger.info("Draining node %s (token %s)", item.message.node_id, token)
    work = asyncio.create_task(asyncio.sleep(config.drain_seconds))  # your clean-up here
    while config.heartbeat_every:  # None or 0: no heartbeats
        done, _ = await asyncio.wait({work}, timeout=config.heartbeat_every)
        if done:
            break
        item.last_status = await call_warden(http, config, item.message, "heartbeat_lifecycle")
        item.heartbeats += 1
    await work
    item.last_status = await call_warden(http, config, item.message, "complete_lifecycle")
    ok = item.last_status is not None and item.last_status < 300
    item.state = "completed" if ok else "failed"
    logger.log(
        logging.INFO if ok else logging.ERROR,
        "complete_lifecycle for token %s: %s (HTTP %s)",
        token,
        item.state,
        item.last_status,
    )


def create_app(
    config: ConsumerConfig, *, transport: httpx.AsyncBaseTransport | None = None
) -> FastAPI:
    """The consumer app; `transport` replaces the network for calls to Warden (tests)."""
    received: dict[str, Received] = {}
    tasks: set[asyncio.Task[None]] = set()  # strong references until each drain ends

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=10, transport=transport) as http:
            app.state.http = http  # one pooled client for every call to Warden
            yield
            for task in tasks:  # shutting down: stop draining, Warden's timeout takes over
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    app = FastAPI(title="Warden lifecycle consumer (example)", lifespan=lifespan)

    @app.post("/hooks/lifecycle", status_code=202)
    async def lifecycle_hook(request: Request) -> JSONResponse:
        body = await request.body()  # the raw bytes: the signature covers exactly these
        signature = request.headers.get(SIGNATURE_HEADER)
        if config.secret and not verify_signature(config.secret, body, signature):
            logger.warning("Rejected a lifecycle message with a bad or missing signature")
            return JSONResponse({"error": f"bad or missing {SIGNATURE_HEADER}"}, 401)
        try:
            message = LifecycleMessage.model_validate_json(body)
        except ValidationError:
            return JSONResponse({"error": "body is not a lifecycle message"}, 422)
        token = message.lifecycle_action_token
        if token not in received:  # a retried delivery must not start a second drain
            received[token] = item = Received(message=message)
            task = asyncio.create_task(drain_and_complete(request.app.state.http, config, item))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return JSONResponse({"lifecycle_action_token": token}, 202)

    @app.get("/received")
    async def list_received() -> list[Received]:
        return list(received.values())

    return app


def _dev_token() -> str:
    """The token `warden dev` wrote, so the quickstart needs no flag."""
    path = Path(os.environ.get("WARDEN_VAR_DIR", "var")) / "dev-token"
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(description="Example Warden lifecycle-hook consumer")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    # Prefer the environment for secrets: the command line is visible in `ps`.
    parser.add_argument("--secret", default=os.environ.get("WARDEN_HOOK_SECRET"))
    parser.add_argument(
        "--warden-token",
        default=os.environ.get("WARDEN_TOKEN") or _dev_token(),
        help="API token for complete_lifecycle (default: WARDEN_TOKEN, else var/dev-token)",
    )
    parser.add_argument("--drain-seconds", type=float, default=2.0)
    parser.add_argument("--heartbeat-every", type=float, default=None)
    args = parser.parse_args(argv)
    config = ConsumerConfig(
        secret=args.secret or None,
        warden_token=args.warden_token,
        drain_seconds=args.drain_seconds,
        heartbeat_every=args.heartbeat_every,
    )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    logger.info(
        "Lifecycle consumer on http://%s:%d/hooks/lifecycle (signatures %s)",
        args.host,
        args.port,
        "required" if config.secret else "not checked",
    )
    uvicorn.run(create_app(config), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
