"""Benchmark the simulated cloud and the driver: `uv run python -m bench.cloud`.

Measures, against `python -m simcloud` started as its own process on this machine:

- baseline: an authenticated `GET /compute/v2.1/` round trip (the floor of any call);
- the `detail` list of 10,000 servers: one raw HTTP response (received; and received
  plus JSON-decoded), and the driver's `list_servers()` both in one page and in
  Nova-sized pages of 1,000;
- driver throughput of idempotent `create_server` (lookup + POST + GET) and
  `delete_server`, with bounded concurrency.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx

from activities.cloud import CloudConfig, CloudSession
from config import get_settings
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.processes import free_port

SERVERS = 10_000
OPS = 300
CONCURRENCY = 20
BASELINE_CALLS = 200
LIST_RUNS = 5


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _timed(call: Callable[[], Awaitable[Any]], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


async def _throughput(calls: Sequence[Callable[[], Awaitable[Any]]]) -> float:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(call: Callable[[], Awaitable[Any]]) -> None:
        async with gate:
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(one(c) for c in calls))
    return len(calls) / (time.perf_counter() - start)


@asynccontextmanager
async def simcloud_process() -> AsyncIterator[str]:
    """`python -m simcloud` on a free port (unlimited pages); its URL until exit."""
    port = free_port()
    args = ["--port", str(port), "--max-limit", "0", "--log-level", "warning"]
    args += ["--network-quota", "port=-1"]  # each created server holds a port
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "simcloud", *args)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url) as client:
            deadline = time.monotonic() + 15
            while True:
                try:
                    if (await client.get("/")).status_code == 200:
                        break
                except httpx.TransportError:
                    if time.monotonic() > deadline or process.returncode is not None:
                        raise
                await asyncio.sleep(0.05)
        yield url
    finally:
        process.terminate()
        await process.wait()


def _config(url: str) -> CloudConfig:
    """The driver's configuration for the simcloud at `url`, with Warden's credentials."""
    settings = get_settings()
    return CloudConfig(
        auth_url=f"{url}/identity/v3",
        username=settings.cloud_username,
        password=settings.cloud_password,
        project_name=settings.cloud_project_name,
        user_domain_name=settings.cloud_user_domain_name,
        project_domain_name=settings.cloud_project_domain_name,
    )


async def _listings(
    cloud: CloudSession, raw: httpx.AsyncClient, headers: dict[str, str]
) -> dict[str, object]:
    """The `detail` list of every server: raw (received; and decoded), then through the
    driver in one page and in pages of 1,000."""

    async def raw_detail(decode: bool) -> None:
        response = await raw.get("/compute/v2.1/servers/detail", headers=headers)
        assert len(response.content) > SERVERS * 500
        if decode:
            assert len(response.json()["servers"]) == SERVERS

    async def driver_list(page_size: int | None) -> None:
        assert len(await cloud.compute.list_servers(page_size=page_size)) == SERVERS

    received = await _timed(partial(raw_detail, False), LIST_RUNS)
    decoded = await _timed(partial(raw_detail, True), LIST_RUNS)
    one_page = await _timed(partial(driver_list, None), LIST_RUNS)
    paged = await _timed(partial(driver_list, 1000), LIST_RUNS)
    return {
        "detail_10k_http_p50_ms": _pct(received, 0.5) * 1000,
        "detail_10k_http_and_decode_p50_ms": _pct(decoded, 0.5) * 1000,
        "detail_10k_driver_p50_ms": _pct(one_page, 0.5) * 1000,
        "detail_10k_driver_paged_p50_ms": _pct(paged, 0.5) * 1000,
    }


async def _creates_and_deletes(cloud: CloudSession) -> dict[str, object]:
    """Driver throughput of `OPS` idempotent creates, then of their deletes."""
    created: list[str] = []

    async def create(n: int) -> None:
        server = await cloud.compute.create_server(f"b-{n}", CIRROS, SMALL, request_id=f"bench-{n}")
        created.append(server.id)

    results: dict[str, object] = {
        "create_per_s": await _throughput([partial(create, n) for n in range(OPS)])
    }
    deletes = [partial(cloud.compute.delete_server, s) for s in created]
    results["delete_per_s"] = await _throughput(deletes)
    return results


async def _measure(url: str) -> dict[str, object]:
    results: dict[str, object] = {}
    async with CloudSession(_config(url)) as cloud, httpx.AsyncClient(base_url=url) as raw:
        token = (await cloud.auth.token()).value
        headers = {"X-Auth-Token": token}
        base = await _timed(lambda: raw.get("/compute/v2.1/", headers=headers), BASELINE_CALLS)
        results["baseline_get_p50_ms"] = _pct(base, 0.5) * 1000
        results["baseline_get_p99_ms"] = _pct(base, 0.99) * 1000

        start = time.perf_counter()
        await raw.post("/sim/seed", json={"count": SERVERS, "name_prefix": "bench"})
        results["seed_10k_s"] = time.perf_counter() - start

        results |= await _listings(cloud, raw, headers)
        results |= await _creates_and_deletes(cloud)
    return results


async def run() -> dict[str, object]:
    """Run the benchmark against a fresh simcloud; the measurements by name."""
    async with simcloud_process() as url:
        results = await _measure(url)
    results |= {"servers": SERVERS, "ops": OPS, "concurrency": CONCURRENCY}
    return results


def table(results: dict[str, object]) -> str:
    """The results as a Markdown table."""
    rows = ["| measurement | value |", "|---|---|"]
    for key, value in results.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        rows.append(f"| {key} | {shown} |")
    return "\n".join(rows)


def main() -> None:
    """Print the benchmark table."""
    print(table(asyncio.run(run())))


if __name__ == "__main__":
    main()
