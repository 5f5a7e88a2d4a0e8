"""The bare floor of N independent servers: Warden's own compute activities for every
server at once, run by one bare workflow on a worker in this process."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from temporalio import workflow

from activities.cloud import CloudConfig, CloudSession
from activities.compute import ComputeActivities
from bench.echo import echo_worker
from bench.measure import delta
from bench.stack import Stack
from bench.stacks.creates import events, failed_tasks
from bench.stacks.settings import FLAVOR, IMAGE, RUNS, RUNS_OF, SIZES
from config.settings import Settings
from domain.servers import ServerRequest
from workflows.stack.resources.base import ResourceFailed, call_activity


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


async def _bare_create(stack: Stack, queue: str, size: int) -> dict[str, Any]:
    """One `BenchServersWorkflow` of `size` servers: its wall time, CPU and failed tasks."""
    cpu = stack.cpu()
    start = time.perf_counter()
    workflow_id = f"bench-servers:{uuid.uuid4().hex[:8]}"
    await stack.temporal.execute_workflow(
        BenchServersWorkflow.run, size, id=workflow_id, task_queue=queue
    )
    return {
        "wall_s": time.perf_counter() - start,
        "cpu_s": delta(stack.cpu(), cpu),
        "failed_workflow_tasks": failed_tasks(await events(stack.temporal, workflow_id)),
    }


async def bare_creates(stack: Stack) -> dict[str, dict[str, Any]]:
    """`BenchServersWorkflow` for each size, as often as Warden's creates, on a worker in
    this process with Warden's cloud driver against the same simcloud: wall time from
    the start to the result, and each process's CPU seconds."""
    settings = Settings(
        simcloud_host="127.0.0.1", simcloud_port=int(stack.env["WARDEN_SIMCLOUD_PORT"])
    )
    queue = f"bench-stacks-servers-{uuid.uuid4()}"
    done: dict[str, dict[str, Any]] = {}
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        compute = ComputeActivities(cloud.compute, cloud.collections)
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
                        done[f"{size} bare #{run}"] = await _bare_create(stack, queue, size)
    return done
