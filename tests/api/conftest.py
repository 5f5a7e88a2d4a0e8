"""The API in process (ASGI), with its real lifespan, SQLite in tmp_path.

`api` has no Temporal (routes that reach a workflow answer 503); `running_warden` is the
whole of Warden on the time-skipping server (tests/support/warden_in_process.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest_asyncio
import yaml

from api.app import create_app
from config import Settings
from tests.support.warden_in_process import InProcessWarden, in_process_warden

TOKENS = {
    "admin-demo": {"project": "demo", "roles": ["admin"]},
    "reader-demo": {"project": "demo", "roles": ["reader"]},
    "member-other": {"project": "other", "roles": ["member"]},
}


@pytest_asyncio.fixture
async def api(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a fresh API; Temporal points nowhere (these tests never need it)."""
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": TOKENS}))
    settings = Settings(
        var_dir=tmp_path,
        tokens_file=tokens,
        temporal_address="127.0.0.1:1",
        temporal_rpc_timeout_s=1.0,
        api_max_body_bytes=4096,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://api", headers={"X-Auth-Token": "admin-demo"}
        ) as client:
            yield client
    # Stopping the API stops its Temporal pinger, even with the connect still retrying
    # (a pinger waiting on Temporal's native connect once outlived every test's app).
    pingers = [t for t in asyncio.all_tasks() if t.get_coro().__name__ == "_ping_forever"]  # type: ignore[union-attr]
    assert all(p.done() for p in pingers), "the API's Temporal pinger outlived its app"


@pytest_asyncio.fixture
async def running_warden(tmp_path: Path) -> AsyncIterator[InProcessWarden]:
    """API, worker, simcloud and store in process, on a time-skipping server of its own."""
    async with in_process_warden(tmp_path) as warden:
        yield warden
