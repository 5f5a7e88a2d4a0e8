"""Bare Temporal baselines on the same dev server, from a worker in this process: a loop
shaped like the health manager's, a signal → activity reaction, and the driver's
`list_servers()` of every server (the probe's cloud call)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.cloud import CloudConfig, CloudSession
from bench.health.rounds import Round, RoundStats, round_stats, rounds_of
from bench.health.settings import BARE_ACTIVITY, BARE_SIGNALS, LIST_RUNS
from bench.measure import ms, pct
from bench.stack import Stack
from config import get_settings


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


@contextlib.asynccontextmanager
async def bare_worker(client: Client, queue: str, acts: BareActivities) -> AsyncIterator[None]:
    """A worker here running the baseline workflows on `queue`, in a sandbox like
    Warden's with every module passed through."""
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules()
    )
    async with Worker(
        client,
        task_queue=queue,
        workflows=[BenchHealthLoopWorkflow, BenchHealthReactWorkflow],
        activities=[acts.noop, acts.mark],
        workflow_runner=runner,
    ):
        yield


async def bare_loop(
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
        return rounds_of(await handle.fetch_history(), BARE_ACTIVITY)

    return round_stats(await asyncio.gather(*(one() for _ in range(loops))), 0, math.inf)


def bare_loop_summary(stats: RoundStats) -> dict[str, Any]:
    """A bare loop's rounds, their keys prefixed `bare_`."""
    return stats.summary("bare_")


async def bare_signals(client: Client, queue: str, acts: BareActivities) -> dict[str, Any]:
    """Signal → activity reactions one at a time (after 5 untimed): the call, and the
    time until the activity ran."""
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
        "signal_call_p50_ms": ms(pct(calls, 0.5)),
        "signal_to_activity_p50_ms": ms(pct(reactions, 0.5)),
        "signal_to_activity_p99_ms": ms(pct(reactions, 0.99)),
    }


async def list_all_servers(stack: Stack) -> dict[str, Any]:
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
    return {"servers": count, "list_all_p50_ms": ms(pct(samples, 0.5))}
