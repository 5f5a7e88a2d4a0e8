"""Faults of Warden's own parts and of the cloud, on a Warden of the module's own.

Temporal restarted on its database, the API or the worker SIGKILLed, a flaky slow
cloud: each operation still ends as it should, every node's server exists exactly
once or not at all, and nothing is left behind in simcloud.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.service import RPCError, RPCStatusCode

from activities.cloud import CloudConfig, CloudSession
from activities.cloud.compute import Server
from config import Settings
from tests.integration.conftest import TOKENS, Warden
from tests.integration.test_health import attach_health, health_spec
from tests.integration.test_lifecycle_hooks import act, nodes_of
from tests.integration.test_platform import action_done, create_cluster
from tests.support.eventually import eventually
from tests.support.own_warden import own_env, own_procs, wait_temporal
from tests.support.postgres import PostgresServer
from tests.support.processes import PYTHON, wait_http
from tests.support.simcloud_server import SimControl

pytestmark = pytest.mark.integration

#: Servers take 2 s to build: creates are slow enough to interrupt.
SIMCLOUD_ARGS = ["--build-latency-ms", "2000"]


@pytest_asyncio.fixture(scope="module")
async def own_warden(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[Warden]:
    """Temporal (on a SQLite file), simcloud, worker and API, stopped at the end.

    Warden's database is SQLite; `WARDEN_TEST_FAULTS_DATABASE=postgresql` runs the module
    on PostgreSQL instead (not in `make test`: it would add about 80 s).
    """
    var = tmp_path_factory.mktemp("faults")
    env = own_env(var, TOKENS)
    if os.environ.get("WARDEN_TEST_FAULTS_DATABASE") == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        env["WARDEN_DATABASE_URL"] = server.new_database("faults")
    procs = own_procs(env, var, notify_token="it-admin", simcloud_args=SIMCLOUD_ARGS)
    try:
        procs["temporal"].start()
        client = await wait_temporal(env["TEMPORAL_ADDRESS"], procs["temporal"])
        warden = Warden(
            api_url=f"http://127.0.0.1:{env['WARDEN_API_PORT']}",
            worker_health_url=env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://")
            + "/health",
            simcloud_url=f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}",
            temporal=client,
            env=env,
            procs=procs,
        )
        # Started together, as compose or systemd would: worker and API both migrate
        # the new database at once (see the last test).
        for name in ("simcloud", "worker", "api"):
            procs[name].start()
        for name in ("simcloud", "worker", "api"):
            wait_ready(warden, name)
        yield warden
    finally:
        for proc in reversed(list(procs.values())):
            proc.stop()


def start(warden: Warden, name: str) -> None:
    """Start one of the Python processes and wait until it answers."""
    warden.procs[name].start()
    wait_ready(warden, name)


def wait_ready(warden: Warden, name: str) -> None:
    ready = {
        "simcloud": f"{warden.simcloud_url}/sim/state",
        "worker": warden.worker_health_url,
        "api": f"{warden.api_url}/health",
    }
    wait_http(ready[name], warden.procs[name])


def kill(warden: Warden, name: str) -> None:
    """SIGKILL a process (its whole group): no graceful shutdown of any kind."""
    warden.procs[name].stop(signal.SIGKILL)


async def cluster_servers(warden: Warden, cluster_id: str) -> list[Server]:
    """The simcloud servers Warden tagged with the cluster, but those being deleted."""
    settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        servers = await cloud.compute.list_servers()
    return [
        s
        for s in servers
        if s.metadata.get("warden_cluster") == cluster_id and s.status != "DELETED"
    ]


async def assert_one_server_per_node(
    warden: Warden, api: httpx.AsyncClient, cluster_id: str
) -> list[dict[str, Any]]:
    """Nodes ACTIVE, each on its own ACTIVE server; no other server of the cluster."""
    nodes = await nodes_of(api, cluster_id)
    servers = await cluster_servers(warden, cluster_id)
    assert [n["status"] for n in nodes] == ["ACTIVE"] * len(nodes), nodes
    assert sorted(s.id for s in servers) == sorted(n["physical_id"] for n in nodes), servers
    assert sorted(s.metadata["warden_node"] for s in servers) == sorted(n["id"] for n in nodes)
    assert all(s.status == "ACTIVE" for s in servers), servers
    return nodes


async def finished(api: httpx.AsyncClient, location: str, timeout: float) -> dict[str, Any]:
    """The action once it SUCCEEDED or FAILED (`action_done` with a longer wait)."""

    async def done() -> dict[str, Any] | None:
        action: dict[str, Any] = (await api.get(location)).json()["action"]
        return action if action["status"] in ("SUCCEEDED", "FAILED") else None

    return await eventually(done, timeout=timeout, interval=0.2, what=f"{location} finished")


async def new_cluster(api: httpx.AsyncClient, size: int) -> str:
    cluster_id, location = await create_cluster(api, f"f-{uuid.uuid4().hex[:6]}", size)
    assert (await action_done(api, location))["status"] == "SUCCEEDED"
    return cluster_id


@pytest.mark.timeout(180)
async def test_temporal_restarted_on_its_db_mid_create_finishes_the_create(
    own_warden: Warden,
) -> None:
    """Workflows, timers and activity retries live in the db file; clients reconnect."""
    warden = own_warden
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, f"tr-{uuid.uuid4().hex[:6]}", 4)

        async def building() -> list[Server] | None:
            servers = await cluster_servers(warden, cluster_id)
            return servers if [s.status for s in servers] == ["BUILD"] * 4 else None

        await eventually(building, timeout=30, what="4 servers building")
        assert (await api.get(location)).json()["action"]["status"] == "RUNNING"
        temporal = warden.procs["temporal"]
        kill(warden, "temporal")
        # Reads come from the database: the API answers while Temporal is down.
        assert (await api.get(location)).json()["action"]["status"] == "RUNNING"
        # The server ran its file in WAL mode as `make run` does (`cli.dev.store_args`),
        # where a killed process loses no commit: the rest of this test shows none lost.
        db_file = temporal.argv[temporal.argv.index("--db-filename") + 1]
        with contextlib.closing(sqlite3.connect(db_file)) as db:
            assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        temporal.start()
        await wait_temporal(warden.env["TEMPORAL_ADDRESS"], temporal)

        # A completion lost in the outage would wait for its activity's timeout (60 s).
        done = await finished(api, location, timeout=100)
        assert done["status"] == "SUCCEEDED", done
        await assert_one_server_per_node(warden, api, cluster_id)
        # The API and the worker reconnected: an update goes through both.
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        assert scaled.status_code == 202, scaled.text
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"
        assert len(await assert_one_server_per_node(warden, api, cluster_id)) == 3


@pytest.mark.timeout(90)
async def test_api_killed_mid_create_has_no_effect_on_the_create(own_warden: Warden) -> None:
    warden = own_warden
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, f"ak-{uuid.uuid4().hex[:6]}", 3)
        kill(warden, "api")

        async def active() -> list[Server] | None:
            servers = await cluster_servers(warden, cluster_id)
            return servers if [s.status for s in servers] == ["ACTIVE"] * 3 else None

        await eventually(active, timeout=30, what="servers ACTIVE while the API is down")
        start(warden, "api")
        done = await action_done(api, location)
        assert (done["name"], done["status"]) == ("CLUSTER_CREATE", "SUCCEEDED"), done
        nodes = await assert_one_server_per_node(warden, api, cluster_id)
        assert len(nodes) == 3
        cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
        assert (cluster["status"], cluster["desired_capacity"]) == ("ACTIVE", 3), cluster
        listed = (await api.get("/v1/actions", params={"target": cluster_id})).json()["actions"]
        assert [(a["name"], a["status"]) for a in listed] == [("CLUSTER_CREATE", "SUCCEEDED")]


@pytest.mark.timeout(420)
async def test_flaky_slow_cloud_scale_in_and_recovery_leave_no_orphans(own_warden: Warden) -> None:
    """30 % of cloud calls fail with a 503, each takes 500 ms; fencing is on.

    Usually 15-50 s, with a tail: a 5xx on a write fails a whole multi-call attempt
    (`create_server`: list + POST + GET; a removal's reads are repeated on the spot, its
    DELETE is not) and retries back off exponentially to 30 s (CLOUD_RETRY). A recovery
    whose fence fails (three attempts to delete, three to power off, each ended by its
    first 5xx) is tried again by the health manager.
    """
    warden = own_warden
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        control = SimControl(sim)
        cluster_id = await new_cluster(api, 3)
        spec = health_spec([{"name": "RECREATE"}])
        # A failed recovery is retried after retry_backoff (doubling), at most
        # node_retry_limit times: keep the test about convergence, not about waiting.
        spec["properties"]["recovery"] |= {"retry_backoff": 1, "node_retry_limit": 10}
        policy_id = await attach_health(api, cluster_id, spec)
        await control.api_faults(error_rate=0.3, status=503, latency_ms=500)
        try:
            scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
            assert scaled.status_code == 202, scaled.text
            done = await finished(api, scaled.headers["Location"], timeout=200)
            assert done["status"] == "SUCCEEDED", done
            kept, victim = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
            await control.fault(victim["physical_id"], "error", cured_by=["RECREATE"])

            async def recovered() -> list[dict[str, Any]] | None:
                node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
                if node["physical_id"] == victim["physical_id"] or node["status"] != "ACTIVE":
                    return None
                params = {"target": cluster_id, "name": "CLUSTER_RECOVER"}
                actions: list[dict[str, Any]] = (
                    await api.get("/v1/actions", params=params)
                ).json()["actions"]
                settled = all(a["status"] in ("SUCCEEDED", "FAILED") for a in actions)
                return actions if settled else None

            recoveries = await eventually(recovered, timeout=200, what="node recreated")
        finally:
            await control.api_faults(error_rate=0)
        assert recoveries[-1]["status"] == "SUCCEEDED", recoveries
        # No recovery storm: the healthy node was never touched.
        assert all(a["inputs"]["nodes"] == [victim["id"]] for a in recoveries), recoveries
        nodes = await assert_one_server_per_node(warden, api, cluster_id)
        assert {n["id"]: n["physical_id"] for n in nodes}[kept["id"]] == kept["physical_id"]
        detached = await act(api, cluster_id, {"policy_detach": {"policy_id": policy_id}})
        assert detached.status_code == 202, detached.text
        await warden.temporal.get_workflow_handle(f"health:{cluster_id}").result()


async def node_delete_tokens(api: httpx.AsyncClient, parent: str, n: int) -> list[str]:
    """The NODE_DELETE actions (lifecycle tokens) a removal started, once there are `n`."""

    async def started() -> list[str] | None:
        params: dict[str, str | int] = {"name": "NODE_DELETE", "limit": 1000}
        actions = (await api.get("/v1/actions", params=params)).json()["actions"]
        found = [a["id"] for a in actions if parent in (a.get("depended_by") or [])]
        return found if len(found) >= n else None

    return await eventually(started, timeout=30, what=f"{n} NODE_DELETE actions of {parent}")


async def remove_node_running(warden: Warden, token: str) -> bool:
    """Whether a worker has started `remove_node` of this victim and not finished it."""
    handle = warden.temporal.get_workflow_handle(f"node-delete:{token}")
    try:
        described = await handle.describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:  # its action is recorded before it starts
            return False
        raise
    return any(
        p.activity_type.name == "remove_node"
        and p.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        for p in described.raw_description.pending_activities
    )


async def remove_node_attempts(warden: Warden, token: str) -> list[int]:
    """The attempt of each `remove_node` that was started, from the victim's history."""
    history = await warden.temporal.get_workflow_handle(f"node-delete:{token}").fetch_history()
    return [
        e.activity_task_started_event_attributes.attempt
        for e in history.events
        if e.HasField("activity_task_started_event_attributes")
    ]


@pytest.mark.timeout(120)
async def test_worker_killed_while_servers_are_deleted_deletes_each_exactly_once(
    own_warden: Warden,
) -> None:
    """The deletions in flight are retried once their 30 s heartbeat timeout expires."""
    warden = own_warden
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        control = SimControl(sim)
        cluster_id = await new_cluster(api, 4)
        before = {n["id"]: n["physical_id"] for n in await nodes_of(api, cluster_id)}
        await control.api_faults(error_rate=0, latency_ms=1500)
        try:
            scaled = await act(api, cluster_id, {"scale_in": {"count": 3}})
            assert scaled.status_code == 202, scaled.text
            parent = scaled.headers["Location"].rsplit("/", 1)[-1]
            tokens = await node_delete_tokens(api, parent, 3)

            async def all_in_flight() -> bool:
                return all([await remove_node_running(warden, t) for t in tokens])

            await eventually(all_in_flight, timeout=30, what="3 remove_node in flight")
            kill(warden, "worker")
        finally:
            await control.api_faults(error_rate=0)
        start(warden, "worker")
        done = await action_done(api, scaled.headers["Location"])
        assert done["status"] == "SUCCEEDED", done
        [left] = await assert_one_server_per_node(warden, api, cluster_id)
        assert before[left["id"]] == left["physical_id"]
        for token in tokens:
            assert await remove_node_attempts(warden, token) == [2]
            final = (await api.get(f"/v1/actions/{token}")).json()["action"]
            assert final["status"] == "SUCCEEDED", final
            events = (await api.get("/v1/events", params={"action_id": token})).json()["events"]
            assert [e["action"] for e in events] == ["NODE_DELETE"], events
        victims = {pid for nid, pid in before.items() if nid != left["id"]}

        async def shut_down() -> Counter[str] | None:
            # simcloud announces a deletion once the server is gone (1 s after it).
            sent = (await sim.get("/sim/notifications")).json()["notifications"]
            counts = Counter(
                n["payload"]["nova_object.data"]["uuid"]
                for n in sent
                if n["event_type"] == "compute.instance.shutdown.end"
            )
            return counts if victims <= counts.keys() else None

        shutdowns = await eventually(shut_down, timeout=10, what="deletions announced")
        assert {pid: shutdowns[pid] for pid in victims} == dict.fromkeys(victims, 1)


#: Migrate a database at an agreed instant (argv: URL, epoch seconds).
MIGRATE_AT = (
    "import sys, time; from store.db import make_engine, migrate; "
    "engine = make_engine(sys.argv[1]); time.sleep(max(0, float(sys.argv[2]) - time.time())); "
    "migrate(engine)"
)


@pytest.mark.timeout(60)
def test_processes_starting_at_once_on_a_new_database_all_migrate_it(
    new_database: Callable[[], str],
) -> None:
    """The worker and the API may start together on a fresh database (both migrate);
    on SQLite and on PostgreSQL."""
    at = str(time.time() + 3)
    urls = [new_database() for _ in range(3)]
    procs = [
        subprocess.Popen(
            [PYTHON, "-c", MIGRATE_AT, urls[n // 2], at],
            cwd=Path(__file__).parents[2],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    errors = [p.communicate(timeout=45)[1] for p in procs]
    failures = [line for e in errors for line in e.splitlines() if "Error:" in line]
    assert [p.returncode for p in procs] == [0] * 6, failures
