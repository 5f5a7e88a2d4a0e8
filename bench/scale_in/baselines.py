"""Baselines on bare Temporal, on the same dev server as Warden: update and signal round
trips, and a bare fan-out of victims per size, plain or carrying Warden's listings."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import Client

from bench.echo import BASELINE_CALLS, WARMUP_CALLS, BenchEchoWorkflow, echo_worker
from bench.histories import task_split
from bench.measure import delta, ms, pct, per, timed
from bench.scale_in.bare_workflows import BareHooks, BenchFanOutWorkflow, BenchVictimWorkflow
from bench.scale_in.settings import HOOK_TIMEOUT_S
from bench.scale_in.signal_paths import SignalPath, held_by_running_task, signal_steps_p50_ms
from bench.scale_in.workflow_histories import history_lengths, save_timelines, timelines_wanted
from bench.stack import Stack
from workflows.cluster.scale_in import START_WAVE


async def _echo_baseline(client: Client, queue: str) -> dict[str, Any]:
    """Bare update, written update and signal round trips, back to back."""
    handle = await client.start_workflow(
        BenchEchoWorkflow.run, id=f"bench-echo:{uuid.uuid4()}", task_queue=queue
    )
    for _ in range(WARMUP_CALLS):
        await handle.execute_update(BenchEchoWorkflow.bump, 1)
    bumped: list[tuple[float, float]] = []
    updates = await timed(
        lambda: handle.execute_update(BenchEchoWorkflow.bump, 1), BASELINE_CALLS, bumped
    )
    for _ in range(WARMUP_CALLS):
        await handle.execute_update("bump_written", 1, result_type=int)
    wrote: list[tuple[float, float]] = []
    written = await timed(
        lambda: handle.execute_update("bump_written", 1, result_type=int), BASELINE_CALLS, wrote
    )
    events = list((await handle.fetch_history()).events)
    signals = await timed(lambda: handle.signal(BenchEchoWorkflow.poke), BASELINE_CALLS)
    await handle.signal(BenchEchoWorkflow.finish)
    await handle.result()
    return {
        "update_p50_ms": ms(pct(updates, 0.5)),
        "update_p99_ms": ms(pct(updates, 0.99)),
        "written_update_p50_ms": ms(pct(written, 0.5)),
        "written_update_p99_ms": ms(pct(written, 0.99)),
        "update_split_ms": task_split(events, bumped),
        "written_update_split_ms": task_split(events, wrote),
        "signal_p50_ms": ms(pct(signals, 0.5)),
        "signal_p99_ms": ms(pct(signals, 0.99)),
    }


@dataclass
class _FanOut:
    """One bare fan-out run to its end, and what its histories hold."""

    parent_id: str
    children: list[str]
    start_wall: float
    e2e: float
    completed: int
    cpu_used: dict[str, float]
    work: dict[str, float]
    #: Each victim's signal sent → delete, and answered → delete (read as the run ends).
    after_sent: list[float]
    after_returned: list[float]
    counts: dict[str, int] = field(default_factory=dict)
    types: Counter[str] = field(default_factory=Counter)
    starts: list[float] = field(default_factory=list)
    paths: dict[str, SignalPath] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    type_bytes: Counter[str] = field(default_factory=Counter)


async def _run_fanout(
    client: Client, queue: str, hooks: BareHooks, n: int, stack: Stack, *, listed: bool
) -> _FanOut:
    """Start the fan-out of `n` victims and wait for its end: its time and its cost."""
    run = uuid.uuid4().hex[:8]
    parent_id = f"bench-fanout:{run}"
    cpu_before, work_before = stack.cpu(), stack.temporal_work()
    start, start_wall = time.perf_counter(), time.time()
    handle = await client.start_workflow(
        BenchFanOutWorkflow.run,
        [n, HOOK_TIMEOUT_S, int(listed), START_WAVE if listed else 0],
        id=parent_id,
        task_queue=queue,
    )
    completed = await handle.result()
    e2e = time.perf_counter() - start
    cpu_used = delta(stack.cpu(), cpu_before)
    work = delta(stack.temporal_work(), work_before)
    children = [f"bench-victim:{run}:{i}" for i in range(n)]
    after_sent = [hooks.deleted[c] - hooks.sent[c] for c in children if c in hooks.deleted]
    after_returned = [hooks.deleted[c] - hooks.returned[c] for c in children if c in hooks.deleted]
    return _FanOut(
        parent_id, children, start_wall, e2e, completed, cpu_used, work, after_sent, after_returned
    )


async def _read_histories(client: Client, fan: _FanOut, hooks: BareHooks, name: str) -> None:
    """The parent's and the victims' histories, into `fan` (and `BENCH_TIMELINES`)."""
    fan.counts = await history_lengths(client, [fan.parent_id], fan.types, fan.starts)
    timelines = timelines_wanted()
    fan.counts |= await history_lengths(
        client,
        fan.children,
        fan.types,
        paths=fan.paths,
        sizes=fan.sizes,
        type_bytes=fan.type_bytes,
        timelines=timelines,
    )
    if timelines is not None:
        rows = {
            c: {
                "events": timelines.get(c, []),
                "sent": hooks.sent.get(c),
                "returned": hooks.returned.get(c),
                "deleted": hooks.deleted.get(c),
            }
            for c in fan.children
        }
        save_timelines(name, rows)


def _signal_figures(fan: _FanOut, hooks: BareHooks) -> dict[str, Any]:
    """Each victim's signal: its call, and from it to the delete activity."""
    children, paths, after_sent = fan.children, fan.paths, fan.after_sent
    split = [c for c in children if c in paths and c in hooks.returned]
    return {
        "signal_to_activity_p50_ms": ms(pct(after_sent, 0.5)),
        "signal_to_activity_p99_ms": ms(pct(after_sent, 0.99)),
        "signal_returned_to_activity_p50_ms": ms(pct(fan.after_returned, 0.5)),
        "signal_call_p50_ms": ms(
            pct((hooks.returned[c] - hooks.sent[c] for c in children if c in hooks.returned), 0.5)
        ),
        "signal_sent_to_recorded_p50_ms": ms(
            pct((paths[c].recorded - hooks.sent[c] for c in split), 0.5)
        ),
        "signal_recorded_to_returned_p50_ms": ms(
            pct((hooks.returned[c] - paths[c].recorded for c in split), 0.5)
        ),
        "delete_steps_p50_ms": signal_steps_p50_ms(paths, hooks.deleted),
        **held_by_running_task(paths),
    }


def _history_figures(fan: _FanOut, n: int) -> dict[str, Any]:
    """Events per victim, the largest histories, and when the victims started."""
    started = sorted(t - fan.start_wall for t in fan.starts)
    return {
        "events_per_node": sum(fan.counts.values()) / n,
        "parent_history": fan.counts[fan.parent_id],
        "child_history_max": max(fan.counts[c] for c in fan.children),
        "workflow_task_timeouts": fan.types["EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT"],
        "children_started_p50_s": pct(started, 0.5),
        "children_started_last_s": started[-1] if started else None,
    }


async def _fanout_baseline(
    client: Client, queue: str, hooks: BareHooks, n: int, stack: Stack, *, listed: bool = False
) -> dict[str, Any]:
    """A bare fan-out of `n` victims, all started at once; `listed`: started as Warden
    starts them, in waves of `START_WAVE`, each with what Warden's victims carry for
    listings (search attributes, summary and details, a final status upsert)."""
    fan = await _run_fanout(client, queue, hooks, n, stack, listed=listed)
    await _read_histories(client, fan, hooks, f"{'listed' if listed else 'bare'}-{n}")
    return {
        "nodes": n,
        "listed": listed,
        "completed_by_signal": fan.completed,
        "e2e_s": fan.e2e,
        "per_node_ms": fan.e2e / n * 1000,
        **_signal_figures(fan, hooks),
        **_history_figures(fan, n),
        "cpu_s": fan.cpu_used,
        "temporal_work": fan.work,
        "child_history_bytes_mean": sum(fan.sizes.values()) / max(1, len(fan.sizes)),
        "child_history_bytes_by_event_type_mean": per(fan.type_bytes, len(fan.sizes)),
    }


@contextlib.asynccontextmanager
async def _baseline_worker(client: Client) -> AsyncIterator[tuple[str, BareHooks]]:
    """A running worker here, on its own task queue, for the bare baselines: its queue
    and the hooks its bare victims announce themselves to."""
    queue = f"bench-baseline-{uuid.uuid4()}"
    hooks = BareHooks(client)
    more = {
        "workflows": [BenchFanOutWorkflow, BenchVictimWorkflow],
        "activities": [hooks.announce, hooks.delete],
    }
    with echo_worker(client, queue, **more) as worker:
        async with worker:
            yield queue, hooks


async def grown_fanout_baseline(client: Client, n: int, stack: Stack) -> dict[str, Any]:
    """The listed bare fan-out of `n` victims, run now: on the Temporal database as the
    scale-in about to run finds it (the cluster's creation already in it)."""
    async with _baseline_worker(client) as (queue, hooks):
        return await _fanout_baseline(client, queue, hooks, n, stack, listed=True)


async def measure_baselines(client: Client, sizes: list[int], stack: Stack) -> dict[str, Any]:
    """Bare update/signal round trips and a bare fan-out per size, on a worker here."""
    async with _baseline_worker(client) as (queue, hooks):
        echo = await _echo_baseline(client, queue)
        fanout, listed = {}, {}
        for n in sizes:
            fanout[str(n)] = await _fanout_baseline(client, queue, hooks, n, stack)
            listed[str(n)] = await _fanout_baseline(client, queue, hooks, n, stack, listed=True)
    return {"echo": echo, "fanout": fanout, "fanout_listed": listed}
