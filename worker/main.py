"""`python -m worker`: runs Warden's workflows and activities, with its own /health."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
import uuid
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.engine import Engine
from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.service import RPCError
from temporalio.worker import Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.cloud import CloudConfig, CloudSession
from config import Settings, get_settings
from config.codec import CodecKeyError
from config.logs import configure_logging
from config.settings import SettingsError
from config.temporal_client import TemporalConfigError, connect_temporal, temporal_connect_config
from domain.errors import WardenError
from healthcheck import HealthManager, configure, parse_uris, serve_health
from store.db import make_engine, migrate
from worker.notifications import NotificationListener
from worker.registry import WORKFLOWS, serving_activities
from worker.runner import workflow_runner_for
from worker.threads import activity_pool, blocking_pool, workflow_pool

logger = logging.getLogger(__name__)

PING_INTERVAL_S = 30.0
CONNECT_RETRY_S = 2.0


async def connect(settings: Settings, health: HealthManager, stop: asyncio.Event) -> Client | None:
    """Connect to Temporal, retrying until it answers or we are told to stop.

    A configuration error (profile, TLS files, codec keys) is raised at once: retrying
    cannot fix it.
    """
    address = temporal_connect_config(settings).get("target_host")
    while not stop.is_set():
        try:
            client = await connect_temporal(settings)
        except RuntimeError as err:
            health.record_failure("temporal:connection", output=str(err))
            logger.warning("Temporal at %s not reachable yet: %s", address, err)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), CONNECT_RETRY_S)
            continue
        health.record_pass("temporal:connection")
        return client
    return None


async def ping_forever(client: Client, cloud: CloudSession, health: HealthManager) -> None:
    """Keep the Temporal and cloud checks current (cached, not probed per request)."""
    while True:
        try:
            await client.service_client.check_health(timeout=timedelta(seconds=5))
        except (RPCError, RuntimeError) as err:
            health.record_failure("temporal:connection", output=str(err))
        else:
            health.record_pass("temporal:connection")
        await record_cloud_reachability(cloud, health)
        await asyncio.sleep(PING_INTERVAL_S)


async def record_cloud_reachability(cloud: CloudSession, health: HealthManager) -> None:
    """Record whether the compute API answers (Keystone auth + one small list call)."""
    try:
        await cloud.compute.ping(timeout_s=10)
    except WardenError as err:
        health.record_failure("cloud:compute", output=err.message, component_type="component")
    else:
        health.record_pass("cloud:compute", component_type="component")


async def run(settings: Settings) -> None:
    """Run the worker until SIGINT/SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # Named threads for `asyncio.to_thread` (worker/threads.py); asyncio.run shuts it down.
    loop.set_default_executor(blocking_pool())
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    health = configure(
        str(uuid.uuid4()),
        "warden-worker",
        ttl=settings.healthcheck_ttl,
        cache_control=settings.healthcheck_cache_control,
    )
    health_server = await serve_health(parse_uris(settings.healthcheck_uri), health)
    engine = make_engine(settings.resolved_database_url)
    try:
        await asyncio.to_thread(migrate, engine)
        client = await connect(settings, health, stop)
        if client is None:
            return
        async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
            await _serve(client, settings, engine, cloud, health, stop)
    finally:
        await health_server.close()
        engine.dispose()


#: Warden's workflow modules, imported once by the worker instead of once per run.
PASSED_THROUGH = ("workflows",)


def sandbox_runner() -> SandboxedWorkflowRunner:
    """Temporal's sandbox with Warden's own workflow modules passed through.

    The default sandbox re-imports every workflow module for each workflow run it
    starts (each child, each node's delete, each run after an eviction): 3-6 ms of
    CPU a run on this machine, 0.2 ms with the modules passed through (docs/operating.md
    §Worker tuning). Temporal advises passing through modules whose calls are
    deterministic; Warden's workflow modules only call `workflow.*` and keep no
    mutable module state. The tests' workflows still run in the strict sandbox
    (tests/workflows), which is where a forbidden call in workflow code is caught.
    """
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    return SandboxedWorkflowRunner(restrictions=restrictions)


def workflow_runner(converter: DataConverter) -> WorkflowRunner:
    """`sandbox_runner()`, answering the SDK's per-payload context questions itself when
    `converter` ignores them, as Warden's does (worker/runner.py, docs/operating.md
    §Worker tuning)."""
    return workflow_runner_for(converter, sandbox_runner())


def worker_tuning(settings: Settings) -> dict[str, Any]:
    """The Temporal worker's capacity and timeouts (docs/operating.md §Worker tuning)."""
    return {
        "max_cached_workflows": settings.worker_max_cached_workflows,
        "max_concurrent_activities": settings.worker_max_concurrent_activities,
        "max_concurrent_workflow_tasks": settings.worker_max_concurrent_workflow_tasks,
        "graceful_shutdown_timeout": timedelta(seconds=10),
        "sticky_queue_schedule_to_start_timeout": timedelta(
            seconds=settings.worker_sticky_timeout_s
        ),
    }


async def _serve(
    client: Client,
    settings: Settings,
    engine: Engine,
    cloud: CloudSession,
    health: HealthManager,
    stop: asyncio.Event,
) -> None:
    """Run the worker until `stop` is set, its activities' clients open meanwhile."""
    async with serving_activities(settings, engine, cloud) as activities:
        await _poll(client, settings, activities, cloud, health, stop, engine)
    logger.info("worker stopped")


async def _poll(
    client: Client,
    settings: Settings,
    activities: list[Callable[..., Any]],
    cloud: CloudSession,
    health: HealthManager,
    stop: asyncio.Event,
    engine: Engine,
) -> None:
    """Poll the task queue with every workflow and `activities` until `stop` is set."""
    with (
        activity_pool(settings.worker_activity_threads) as executor,
        workflow_pool(settings.worker_max_concurrent_workflow_tasks) as workflow_executor,
    ):
        with warnings.catch_warnings():
            # The SDK warns when the sync activities' threads are fewer than the activity
            # slots. Warden means it: nearly every activity is async and never takes a
            # thread; the one sync activity, `record_changes`, is a 0.5 ms write, so a
            # queue for the threads clears in milliseconds (docs/operating.md §Worker tuning).
            warnings.filterwarnings(
                "ignore", message=r"Worker max_concurrent_activities is \d+ but activity_executor"
            )
            worker = Worker(
                client,
                task_queue=settings.task_queue,
                workflows=list(WORKFLOWS),
                activities=activities,
                activity_executor=executor,
                workflow_task_executor=workflow_executor,
                workflow_runner=workflow_runner(client.data_converter),
                **worker_tuning(settings),
            )
        pinger = asyncio.create_task(ping_forever(client, cloud, health))
        listener = (
            asyncio.create_task(NotificationListener(settings, engine, client, health).run())
            if settings.notification_transport_url is not None
            else None
        )
        logger.info(
            "worker polling task queue %r on %s",
            settings.task_queue,
            client.service_client.config.target_host,
        )
        # What start-up loaded stays for the process's life: out of the collector's reach,
        # a full collection stops scanning it, and the pauses it put into workflow
        # activations (Temporal's deadlock limit is 2 s) shrink.
        gc.collect()
        gc.freeze()
        try:
            async with worker:
                await stop.wait()
        finally:
            for task in (pinger, listener):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task


def main() -> None:
    """Entry point: configure logging, run until a signal."""
    try:
        settings = get_settings()
        configure_logging(settings.log_level, "%(asctime)s %(levelname)s %(name)s: %(message)s")
        asyncio.run(run(settings))
    except (SettingsError, TemporalConfigError, CodecKeyError) as err:
        sys.exit(f"worker: {err}")
