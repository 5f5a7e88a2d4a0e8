"""Serve an ASGI app over real HTTP from a background thread (tests, benchmarks)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from starlette.types import ASGIApp

from simcloud.app import create_app
from simcloud.config import SimConfig


@dataclass(frozen=True)
class ServedApp:
    """Where a served app listens."""

    url: str
    port: int


@contextmanager
def serve_in_thread(app: ASGIApp, *, start_timeout_s: float = 10.0) -> Iterator[ServedApp]:
    """Run `app` with uvicorn on a free 127.0.0.1 port until the block exits.

    The socket is bound before the thread starts, so the port is known and no other
    process can take it; shutdown waits for uvicorn to close every connection.
    """
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on sockets that say so, and
    # without it every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        ws="none",
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                msg = f"server on port {port} did not start"
                raise RuntimeError(msg)
            time.sleep(0.01)
        yield ServedApp(url=f"http://127.0.0.1:{port}", port=port)
    finally:
        server.should_exit = True
        thread.join(timeout=start_timeout_s)
        sock.close()


@contextmanager
def running_simcloud(config: SimConfig | None = None) -> Iterator[ServedApp]:
    """A simcloud listening on a free local port, stopped on exit."""
    with serve_in_thread(create_app(config)) as served:
        yield served
