"""The health benchmark's capacity: the worker idle, then one measurement window for
each number of nodes watched, beside bare loops run in the same window."""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Any

import httpx
from temporalio.client import WorkflowExecutionDescription

from bench.health.bare import bare_loop, bare_loop_summary
from bench.health.product import Watched, attach, events, first_round_done, histories
from bench.health.rounds import RoundStats, round_stats, rounds_of
from bench.health.settings import (
    BARE_LOOPS_IN_WINDOW,
    CAN_SUGGESTED_BYTES,
    IDLE_WINDOW_S,
    INTERVAL_S,
    PROBE_ACTIVITY,
    SLACK_S,
    cluster_size,
    window_s,
)
from bench.stack import Stack
from bench.warden_api import utc_timestamp


def _cpu_percent(
    after: dict[str, float], before: dict[str, float], wall: float
) -> dict[str, float]:
    return {k: round((after[k] - before.get(k, 0.0)) / wall * 100, 1) for k in after}


async def idle_window(stack: Stack) -> dict[str, Any]:
    """The stack's CPU % and memory over `IDLE_WINDOW_S` with nothing to do."""
    cpu, start = stack.cpu(), time.perf_counter()
    await asyncio.sleep(IDLE_WINDOW_S)
    wall = time.perf_counter() - start
    percent = _cpu_percent(stack.cpu(), cpu, wall)
    rss = stack.rss()
    return {
        "window_s": wall,
        "worker_cpu_pct": percent.get("worker"),
        "worker_rss_mib": rss.get("worker"),
        "cpu_pct": percent,
        "rss_mib": {k: round(v) for k, v in rss.items()},
    }


async def _watch(
    api: httpx.AsyncClient, clusters: list[Watched], policy_id: str, n: int
) -> list[Watched]:
    """Attach the policy to more clusters, spread over one interval, until `n` nodes are
    watched; once the new managers have run a round, the clusters watched."""
    wanted = math.ceil(n / cluster_size())
    watched, new = clusters[:wanted], [c for c in clusters[:wanted] if c.attached_at is None]
    gap = INTERVAL_S / max(1, len(new))
    for i, cluster in enumerate(new):
        if i:
            await asyncio.sleep(gap)
        await attach(api, cluster, policy_id)
    await first_round_done(api, new)
    return watched


@dataclass(frozen=True)
class _Window:
    """One measurement window: its span, the stack's CPU % and memory, the bare loops."""

    wall: float
    start_wall: float
    end_wall: float
    percent: dict[str, float]
    rss: dict[str, float]
    bare: RoundStats


async def _window(stack: Stack, bare_queue: str) -> _Window:
    """Measure for `window_s()`, with bare loops at the health interval meanwhile."""
    cpu, start_wall, start = stack.cpu(), time.time(), time.perf_counter()
    bare_rounds = max(2, int(window_s() // (INTERVAL_S + 0.5)))
    bare_task = asyncio.create_task(
        bare_loop(stack.temporal, bare_queue, bare_rounds, INTERVAL_S * 1000, BARE_LOOPS_IN_WINDOW)
    )
    await asyncio.sleep(window_s())
    wall = time.perf_counter() - start
    end_wall = time.time()
    percent = _cpu_percent(stack.cpu(), cpu, wall)
    rss = stack.rss()
    return _Window(wall, start_wall, end_wall, percent, rss, await bare_task)


async def _warnings_since(api: httpx.AsyncClient, watched: list[Watched], since: float) -> int:
    """WARNING events of the watched clusters from `since` on."""
    warnings = 0
    for cluster in watched:
        found = await events(api, cluster_id=cluster.cluster_id, level="WARNING")
        warnings += sum(1 for e in found if utc_timestamp(e["timestamp"]) >= since)
    return warnings


def _history_sizes(descriptions: list[WorkflowExecutionDescription]) -> dict[str, Any]:
    """The largest manager history, in bytes and in events."""
    info = [d.raw_description.workflow_execution_info for d in descriptions]
    return {
        "history_bytes_max": max((i.history_size_bytes for i in info), default=0),
        "history_length_max": max((i.history_length for i in info), default=0),
    }


def _worker_usage(window: _Window, rounds: int) -> dict[str, Any]:
    """The worker's CPU % and memory over the window, and its CPU per round."""
    return {
        "worker_cpu_pct": window.percent.get("worker"),
        "worker_rss_mib": window.rss.get("worker"),
        "worker_cpu_ms_per_round": (
            window.percent.get("worker", 0.0) / 100 * window.wall * 1000 / rounds
            if rounds
            else None
        ),
    }


def _step(
    watched: list[Watched],
    window: _Window,
    stats: RoundStats,
    descriptions: list[WorkflowExecutionDescription],
    servers: int,
    warnings: int,
) -> dict[str, Any]:
    """A window's figures, then its rounds' (`stats`), then its bare loops'."""
    found = stats.summary()
    period_p99, bytes_per_round = found["period_p99_s"], found["bytes_per_round"]
    return (
        {
            "nodes_watched": sum(len(c.nodes) for c in watched),
            "clusters_watched": len(watched),
            "window_s": window.wall,
            "keeps_up": period_p99 is not None and period_p99 <= INTERVAL_S + SLACK_S,
            **_worker_usage(window, stats.rounds),
            "servers_listed_per_probe": servers,
            "cpu_pct": window.percent,
            "rss_mib": {k: round(v) for k, v in window.rss.items()},
            "warning_events": warnings,
            **_history_sizes(descriptions),
            "rounds_to_can_suggested": (
                CAN_SUGGESTED_BYTES / bytes_per_round if bytes_per_round else None
            ),
        }
        | found
        | bare_loop_summary(window.bare)
    )


async def size_step(
    stack: Stack,
    api: httpx.AsyncClient,
    clusters: list[Watched],
    policy_id: str,
    n: int,
    bare_queue: str,
    servers: int,
) -> dict[str, Any]:
    """Watch `n` nodes (attaching to more clusters), then measure one window.

    `servers` is how many servers the cloud project holds: every probe lists them all.
    """
    watched = await _watch(api, clusters, policy_id, n)
    window = await _window(stack, bare_queue)
    ids = [f"health:{c.cluster_id}" for c in watched]
    found = await histories(stack.temporal, ids)
    stats = round_stats(
        (rounds_of(h, PROBE_ACTIVITY) for h in found), window.start_wall, window.end_wall
    )
    descriptions = await asyncio.gather(
        *(stack.temporal.get_workflow_handle(w).describe() for w in ids)
    )
    warnings = await _warnings_since(api, watched, window.start_wall)
    return _step(watched, window, stats, list(descriptions), servers, warnings)
