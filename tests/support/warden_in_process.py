"""All of Warden in one process, on the time-skipping server: API → workflows → store.

The API (ASGI, its real lifespan), a worker running every workflow and activity the
`python -m worker` process registers, the store on SQLite in `tmp_path`, and simcloud
in process as the cloud. Only the transports differ from production: the API and the
cloud are reached through httpx's ASGI transport, Temporal is the time-skipping test
server (`env.sleep()` fires hook timeouts and timers in milliseconds).

Each test gets a server of its own (it starts in ~0.1 s): time skipping then never
waits on another test's workflows, and nothing outlives the test.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import yaml
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from activities.cloud import CloudConfig, CloudSession
from api.app import create_app
from config import Settings
from config.temporal_client import warden_data_converter
from simcloud.app import create_app as create_simcloud
from simcloud.config import SimConfig
from store.db import make_engine, migrate
from tests.support.temporal import SERVER_STARTUP, binary, register_search_attributes
from worker.registry import WORKFLOWS, serving_activities
from worker.runner import workflow_runner_for

logger = logging.getLogger(__name__)

#: The token every request of `InProcessWarden.api` carries (project `demo`, admin).
ADMIN_TOKEN = "admin-demo"
#: Where the in-process simcloud answers (any host reaches it through its ASGI transport).
SIMCLOUD_URL = "http://simcloud"
API_URL = "http://api"


@dataclass
class InProcessWarden:
    """What a test drives (`api`) and what it inspects (`cloud`, `env`)."""

    api: httpx.AsyncClient
    env: WorkflowEnvironment
    cloud: CloudSession
    settings: Settings

    async def skip(self, duration: timedelta) -> None:
        """Let `duration` of Temporal time pass (timers fire; wall time barely moves)."""
        await self.env.sleep(duration)


def warden_settings(tmp_path: Path, temporal_address: str) -> Settings:
    """Settings shared by the API and the worker, as `warden dev` gives both processes."""
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(
        yaml.safe_dump({"tokens": {ADMIN_TOKEN: {"project": "demo", "roles": ["admin"]}}})
    )
    return Settings(
        var_dir=tmp_path,
        tokens_file=tokens,
        temporal_address=temporal_address,
        task_queue=f"api-{uuid.uuid4()}",
        public_url=API_URL,
        cloud_auth_url=f"{SIMCLOUD_URL}/identity/v3",
        cloud_timeout_s=10.0,
    )


@asynccontextmanager
async def in_process_warden(tmp_path: Path) -> AsyncIterator[InProcessWarden]:
    """Start the time-skipping server, simcloud, a worker and the API; stop them after."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"),
        data_converter=warden_data_converter(None),
        test_server_startup_timeout=SERVER_STARTUP,
    )
    try:
        await register_search_attributes(env.client)
        # The API connects by address, as in production (TemporalGateway.client()).
        settings = warden_settings(tmp_path, env.client.service_client.config.target_host)
        stack = AsyncExitStack()
        try:
            cloud = await stack.enter_async_context(simcloud_session(settings))
            await stack.enter_async_context(running_worker(env.client, settings, cloud))
            api = await stack.enter_async_context(api_client(settings))
            yield InProcessWarden(api=api, env=env, cloud=cloud, settings=settings)
        finally:
            await _stopped(stack)
    finally:
        await env.shutdown()


#: How long the API, worker and simcloud may take to stop (they take milliseconds).
STOP_TIMEOUT_S = 30.0


async def _stopped(stack: AsyncExitStack) -> None:
    """Stop the API, the worker and simcloud. Once in a full suite the worker's shutdown
    waited past the test's timeout on the time-skipping server (a poll it never
    answered); the server is stopped next anyway, so the test's outcome stands."""
    try:
        await asyncio.wait_for(stack.aclose(), STOP_TIMEOUT_S)
    except TimeoutError:
        logger.warning("in-process Warden did not stop within %.0f s", STOP_TIMEOUT_S)


@asynccontextmanager
async def simcloud_session(settings: Settings) -> AsyncIterator[CloudSession]:
    """A driver session (the worker's) against a fresh simcloud app in this process."""
    # Three zones, so that a zone placement policy has somewhere to spread nodes.
    app = create_simcloud(
        SimConfig(
            availability_zones=("nova", "az-2", "az-3"), compute_hosts=("compute-1", "compute-2")
        )
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with CloudSession(CloudConfig.from_settings(settings), transport=transport) as cloud:
            yield cloud


@asynccontextmanager
async def running_worker(
    client: Client, settings: Settings, cloud: CloudSession
) -> AsyncIterator[None]:
    """Warden's worker (worker/main.py `_serve`) polling `settings.task_queue`."""
    engine = make_engine(settings.resolved_database_url)
    await asyncio.to_thread(migrate, engine)
    try:
        async with serving_activities(settings, engine, cloud) as activities:
            with ThreadPoolExecutor(max_workers=4, thread_name_prefix="activity") as executor:
                async with Worker(
                    client,
                    task_queue=settings.task_queue,
                    workflows=list(WORKFLOWS),
                    activities=activities,
                    activity_executor=executor,
                    workflow_runner=workflow_runner_for(
                        client.data_converter, SandboxedWorkflowRunner()
                    ),
                ):
                    yield
    finally:
        engine.dispose()


@asynccontextmanager
async def api_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the API app (real lifespan), authenticated as the demo admin."""
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url=API_URL,
            headers={"X-Auth-Token": ADMIN_TOKEN},
        ) as client,
    ):
        yield client
