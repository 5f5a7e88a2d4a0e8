"""The conformance stage: the same scenarios on simcloud and on real OpenStack.

By default the target is a simcloud process. With `WARDEN_CONFORMANCE_LAB`
naming the `lab.json` that `python -m scripts.openstack up` writes (`make
test-openstack` sets it), the target is that real Keystone, Nova (fake virt driver),
Neutron, Glance and Placement, and Nova's notifications come from its RabbitMQ.
`make test-openstack` runs the lane on both, simcloud first; `make test` leaves it out,
for the load its own Warden adds beside the integration lane. Either way Warden runs as
real processes: a Temporal dev server, the worker and the API, the worker pointed at the
target as an operator would point it (simcloud's Keystone, or `OS_CLOUD` with the lab's
clouds.yaml).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import pytest_asyncio
import yaml
from temporalio.testing import WorkflowEnvironment

from activities.cloud import CloudConfig, CloudSession
from activities.cloud.config import from_clouds_yaml
from cli.dev import CACHED_SEARCH_ATTRIBUTES
from config.temporal_client import warden_data_converter
from tests.support.fault_proxy import FaultProxy, running_fault_proxy
from tests.support.processes import PYTHON, Proc, free_port, wait_http
from tests.support.simcloud_server import NotificationReceiver, running_receiver
from tests.support.temporal import SERVER_STARTUP, binary
from workflows.search_attributes import WARDEN_KIND, WARDEN_PROJECT, WARDEN_STATUS, WARDEN_TARGET

LAB = "WARDEN_CONFORMANCE_LAB"
TOKEN = "conformance-admin"
#: Warden's timeout for one cloud call, in this stage.
CLOUD_TIMEOUT_S = 10


@dataclass
class Target:
    """The cloud under test, and how Warden's worker and the tests reach it."""

    name: str
    #: Settings the worker gets to talk to this cloud.
    worker_env: dict[str, str]
    member: CloudConfig
    #: Someone other than Warden's user, to lock a server as an admin would.
    admin: CloudConfig
    #: Processes of the target started with Warden's (simcloud), and where each is ready.
    procs: list[Proc] = field(default_factory=list)
    ready_urls: list[str] = field(default_factory=list)

    def session(self, *, admin: bool = False) -> CloudSession:
        """A driver session, as Warden's user or as the admin."""
        return CloudSession(self.admin if admin else self.member)


def lab_target(lab_file: Path) -> Target:
    """The real OpenStack of `scripts/openstack` (it must be up)."""
    lab: dict[str, Any] = json.loads(lab_file.read_text())
    clouds = lab_file.parent / "clouds.yaml"
    clouds.write_text(yaml.safe_dump({"clouds": lab["clouds"]}))
    env = {"OS_CLIENT_CONFIG_FILE": str(clouds), "OS_CLOUD": "lab"}
    if lab.get("transport_url"):
        env["WARDEN_NOTIFICATION_TRANSPORT_URL"] = lab["transport_url"]
    return Target(
        name="openstack",
        worker_env=env,
        member=from_clouds_yaml("lab", paths=[clouds]),
        admin=from_clouds_yaml("lab-admin", paths=[clouds]),
    )


def simcloud_target(var: Path, api_url: str) -> Target:
    """A simcloud process that posts its notifications to the API under test."""
    port = free_port()
    env = {"WARDEN_SIMCLOUD_PORT": str(port), "WARDEN_SIMCLOUD_HOST": "127.0.0.1"}
    command = [PYTHON, "-m", "simcloud", "--port", str(port), "--log-level", "warning"]
    command += ["--notify-url", f"{api_url}/v1/notifications"]
    sim = Proc("simcloud", command, {**env, "WARDEN_SIMCLOUD_NOTIFY_TOKEN": TOKEN}, var / "sim.log")
    config = CloudConfig(
        auth_url=f"http://127.0.0.1:{port}/identity/v3",
        username="warden",
        password="warden-secret",
        project_name="demo",
    )
    return Target(
        name="simcloud",
        worker_env=env,
        member=config,
        admin=config,
        procs=[sim],
        ready_urls=[f"http://127.0.0.1:{port}/sim/state"],
    )


@dataclass
class ConformanceWarden:
    """Warden's processes on the target."""

    api_url: str
    target: Target
    receiver: NotificationReceiver
    #: Between Warden and the target's compute API (Warden's endpoint override): the
    #: faults a real Nova cannot be asked for (a 500, an answer after Warden's timeout).
    compute: FaultProxy

    def client(self) -> httpx.AsyncClient:
        """The API, as the demo project's admin."""
        return httpx.AsyncClient(base_url=self.api_url, headers={"X-Auth-Token": TOKEN}, timeout=60)


@pytest.fixture(scope="session")
def hook_receiver() -> Iterator[NotificationReceiver]:
    """Where lifecycle hooks deliver their messages (a webhook target)."""
    with running_receiver() as receiver:
        yield receiver


@pytest_asyncio.fixture(scope="session")
async def conformance(
    tmp_path_factory: pytest.TempPathFactory, hook_receiver: NotificationReceiver
) -> AsyncIterator[ConformanceWarden]:
    """Temporal, worker and API on the target cloud; stopped at the end."""
    var = tmp_path_factory.mktemp("conformance")
    api_port = free_port()
    api_url = f"http://127.0.0.1:{api_port}"
    lab = os.environ.get(LAB)
    target = lab_target(Path(lab)) if lab else simcloud_target(var, api_url)
    temporal = await _dev_server()
    env = _warden_env(var, api_port, temporal.client.service_client.config.target_host)
    env |= target.worker_env
    worker_health = env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://") + "/health"
    procs = list(target.procs)
    try:
        for proc, ready in zip(target.procs, target.ready_urls, strict=True):
            proc.start()
            wait_http(ready, proc)
        compute_url = urlsplit(await _endpoint(target, "compute"))
        with running_fault_proxy(f"{compute_url.scheme}://{compute_url.netloc}") as compute:
            overrides = {"compute": f"{compute.url}{compute_url.path}"}
            env["WARDEN_CLOUD_ENDPOINT_OVERRIDES"] = json.dumps(overrides)
            warden = [
                (Proc("worker", [PYTHON, "-m", "worker"], env, var / "worker.log"), worker_health),
                (Proc("api", _uvicorn(api_port), env, var / "api.log"), f"{api_url}/health"),
            ]
            for proc, ready in warden:
                procs.append(proc)
                proc.start()
                wait_http(ready, proc)
            yield ConformanceWarden(api_url, target, hook_receiver, compute)
    finally:
        for proc in reversed(procs):
            proc.stop()
        await temporal.shutdown()


async def _endpoint(target: Target, service_type: str) -> str:
    async with target.session() as cloud:
        return await cloud.endpoint(service_type)


async def _dev_server() -> WorkflowEnvironment:
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary("temporal"),
        data_converter=warden_data_converter(None),
        search_attributes=[WARDEN_PROJECT, WARDEN_KIND, WARDEN_TARGET, WARDEN_STATUS],
        dev_server_log_level="error",
        dev_server_extra_args=list(CACHED_SEARCH_ATTRIBUTES),
        dev_server_startup_timeout=SERVER_STARTUP,
    )


def _warden_env(var: Path, api_port: int, temporal_address: str) -> dict[str, str]:
    tokens = var / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": {TOKEN: {"project": "demo", "roles": ["admin"]}}}))
    return {
        "TEMPORAL_ADDRESS": temporal_address,
        "WARDEN_VAR_DIR": str(var),
        "WARDEN_TASK_QUEUE": f"warden-conformance-{uuid.uuid4()}",
        "WARDEN_TOKENS_FILE": str(tokens),
        "WARDEN_API_PORT": str(api_port),
        "WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{free_port()}",
        "WARDEN_HEALTH_CHECK_INTERVAL_MIN": "1",
        # Below the default 30 s, so that an answer held past it costs a scenario seconds.
        "WARDEN_CLOUD_TIMEOUT_S": str(CLOUD_TIMEOUT_S),
    }


def _uvicorn(port: int) -> list[str]:
    return [PYTHON, "-m", "uvicorn", "api.app:create_app", "--factory", "--port", str(port)]
