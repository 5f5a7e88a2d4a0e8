"""API round trips on an idle one-server stack, interleaved in rounds with their bare
baselines: mark-unhealthy back to back, lock paced."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from temporalio.client import Client, WorkflowHandle

from bench.echo import BASELINE_CALLS, WARMUP_CALLS, BenchEchoWorkflow, echo_worker
from bench.histories import task_split
from bench.measure import Sample, ms, pct, timed, timing
from bench.stack import Stack
from bench.stacks.creates import events, expect, settled
from bench.stacks.settings import IDLE_S, LOCK_CALLS, LOCK_WARMUP, ROUND_CALLS
from workflows import ids


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
        f"{prefix}{name}_{q}_ms": ms(pct(values, p))
        for name, values in samples.items()
        for q, p in (("p50", 0.5), ("p99", 0.99))
    }


@dataclass
class _Calls:
    """The calls timed on one stack (`url`) and on the echo workflow; each call's
    wall-clock span by kind (`windows`), for `task_split`."""

    api: httpx.AsyncClient
    url: str
    echo: WorkflowHandle[Any, Any]
    flips: itertools.count[int] = field(default_factory=itertools.count)
    windows: dict[str, list[tuple[float, float]]] = field(
        default_factory=lambda: {n: [] for n in ("mark", "lock", "update", "written_update")}
    )
    unlocks: list[float] = field(default_factory=list)

    async def mark(self) -> None:
        """Mark the server unhealthy, and healthy again the next time."""
        body = {"mark_unhealthy": next(self.flips) % 2 == 0}
        expect(await self.api.patch(f"{self.url}/resources/server000", json=body), 200)

    async def get(self) -> None:
        """GET the stack: the API's own floor."""
        expect(await self.api.get(self.url), 200)

    def bump(self, update: str) -> Callable[[], Awaitable[Any]]:
        """A call of the echo workflow's `update`."""
        return lambda: self.echo.execute_update(update, 1, result_type=int)

    async def _post(self, action: dict[str, Any], status: str) -> float:
        start = time.perf_counter()
        expect(await self.api.post(f"{self.url}/actions", json=action), 200)
        took = time.perf_counter() - start
        found = await settled(self.api, self.url, 60)
        if found["stack_status"] != status:
            raise RuntimeError(f"{self.url}: {found['stack_status']} instead of {status}")
        return took

    async def lock(self) -> float:
        """A lock timed to its 200; LOCK_COMPLETE, then (after `IDLE_S`) an unlock and
        UNLOCK_COMPLETE waited for, so that the next lock meets an idle stack."""
        sent = time.time()
        took = await self._post({"lock": {"level": "stacks"}}, "LOCK_COMPLETE")
        self.windows["lock"].append((sent, sent + took))
        await asyncio.sleep(IDLE_S)
        self.unlocks.append(await self._post({"unlock": None}, "UNLOCK_COMPLETE"))
        return took


async def _back_to_back(calls: _Calls) -> dict[str, list[float]]:
    """Marks, bare updates, written updates and GETs, back to back (after a warm-up)."""
    for call in (calls.mark, calls.get, calls.bump("bump"), calls.bump("bump_written")):
        await timed(call, WARMUP_CALLS)
    return await interleaved(
        {
            "mark": timing(calls.mark, calls.windows["mark"]),
            "update": timing(calls.bump("bump"), calls.windows["update"]),
            "written_update": timing(calls.bump("bump_written"), calls.windows["written_update"]),
            "get": timing(calls.get, []),
        },
        BASELINE_CALLS // ROUND_CALLS,
        ROUND_CALLS,
    )


async def _paced(calls: _Calls) -> dict[str, list[float]]:
    """Locks, bare updates, written updates and GETs, each after `IDLE_S` idle."""
    for _ in range(LOCK_WARMUP):
        await asyncio.sleep(IDLE_S)
        await calls.lock()
    calls.unlocks.clear()
    calls.windows["lock"].clear()
    return await interleaved(
        {
            "lock": calls.lock,
            "update": timing(calls.bump("bump"), []),
            "written_update": timing(calls.bump("bump_written"), []),
            "get": timing(calls.get, []),
        },
        LOCK_CALLS // ROUND_CALLS,
        ROUND_CALLS,
        idle_s=IDLE_S,
    )


async def _round_trips(
    api: httpx.AsyncClient, client: Client, url: str, echo: WorkflowHandle[Any, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Mark-unhealthy, lock and unlock API round trips on an idle stack, interleaved in
    rounds with their baselines: the bare update and written update on the echo workflow
    and the API's GET; back to back for marks, paced for locks. Also where the marks',
    locks' and bare updates' time went, from the workflows' histories.

    Returns the baselines (`echo`) and the API's round trips, keyed as before."""
    calls = _Calls(api, url, echo)
    back_to_back = await _back_to_back(calls)
    # Fetched now: the workflow may continue as new before the locks.
    stack_id = url.rstrip("/").rsplit("/", 1)[-1]
    mark_split = task_split(await events(client, ids.stack(stack_id)), calls.windows["mark"])
    paced = await _paced(calls)
    echo_events = list((await echo.fetch_history()).events)
    baselines = {
        **_quantiles({k: back_to_back[k] for k in ("update", "written_update")}),
        "update_split_ms": task_split(echo_events, calls.windows["update"]),
        "written_update_split_ms": task_split(echo_events, calls.windows["written_update"]),
        **_quantiles({k: paced[k] for k in ("update", "written_update")}, "paced_"),
        "interleaved": f"in rounds of {ROUND_CALLS} calls of each kind with the marks "
        "(back to back) and with the locks (paced)",
    }
    history = await events(client, ids.stack(stack_id))
    trips = {
        **_quantiles({k: back_to_back[k] for k in ("mark", "get")}),
        **_quantiles({"lock": paced["lock"], "unlock": calls.unlocks}),
        **_quantiles({"get": paced["get"]}, "paced_"),
        "mark_calls": len(back_to_back["mark"]),
        "lock_calls": len(paced["lock"]),
        "mark_split_ms": mark_split,
        "lock_split_ms": task_split(history, calls.windows["lock"]),
    }
    return baselines, trips


async def api_round_trips(
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
