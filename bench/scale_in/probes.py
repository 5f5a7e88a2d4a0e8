"""The floors of complete_lifecycle's steps, probed while a scale-in runs: bare Temporal
calls from a worker in this process, and the API's own calls that reach no workflow."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from temporalio.client import Client

from bench.echo import BenchEchoWorkflow, echo_worker
from bench.measure import ms, pct
from bench.scale_in.bare_workflows import BareHooks, BenchVictimWorkflow
from bench.scale_in.settings import HOOK_TIMEOUT_S, LOAD_PROBE_INTERVAL_S
from bench.warden_api import ok


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
        ok(await self.api.get(self.get_url), 200)
        return {"api_get": time.perf_counter() - start}

    async def _noop(self) -> dict[str, float]:
        start = time.perf_counter()
        ok(await self.api.post(self.noop_url, json=self.noop_body), 202)
        return {"api_noop": time.perf_counter() - start}

    def summary(self) -> dict[str, Any]:
        """p50/p99 (ms) and count of each probe."""
        out: dict[str, Any] = {}
        for name, values in self.samples.items():
            out[f"{name}_p50_ms"] = ms(pct(values, 0.5))
            out[f"{name}_p99_ms"] = ms(pct(values, 0.99))
            out[f"{name}_count"] = len(values)
        return out


@contextlib.asynccontextmanager
async def bare_probes(client: Client) -> AsyncIterator[BareProbes]:
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
