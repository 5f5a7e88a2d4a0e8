"""The platform end to end: real Temporal dev server, worker, API over HTTP, simcloud."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from activities.cloud import CloudConfig, CloudSession
from config import Settings
from domain.cluster.requests import LockClusterRequest
from tests.integration.conftest import Warden
from tests.support.eventually import eventually

pytestmark = pytest.mark.integration

PROFILE = {
    "profile": {
        "name": "it-small",
        "spec": {
            "type": "os.nova.server",
            "version": "1.0",
            "properties": {"flavor": "m1.tiny", "image": "cirros", "metadata": {"app": "web"}},
        },
    }
}


async def profile_id(api: httpx.AsyncClient) -> str:
    listed = (await api.get("/v1/profiles")).json()["profiles"]
    found = [p["id"] for p in listed if p["name"] == "it-small"]
    if found:
        return str(found[0])
    created = await api.post("/v1/profiles", json=PROFILE)
    assert created.status_code == 201, created.text
    return str(created.json()["profile"]["id"])


async def action_done(api: httpx.AsyncClient, location: str) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        action: dict[str, Any] = (await api.get(location)).json()["action"]
        return action if action["status"] in ("SUCCEEDED", "FAILED") else None

    return await eventually(done, timeout=60, what=f"{location} finished")


async def sim_servers(warden: Warden) -> dict[str, str]:
    settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        return {s.id: s.status for s in await cloud.compute.list_servers()}


async def create_cluster(api: httpx.AsyncClient, name: str, size: int) -> tuple[str, str]:
    body = {
        "cluster": {
            "name": name,
            "profile_id": await profile_id(api),
            "desired_capacity": size,
            "max_size": 5,
        }
    }
    response = await api.post("/v1/clusters", json=body)
    assert response.status_code == 202, response.text
    assert response.headers["location"].startswith("/v1/actions/")
    return response.json()["cluster"]["id"], response.headers["location"]


async def test_api_and_worker_answer_health_json(warden: Warden) -> None:
    async with warden.client() as api:
        await api.get("/v1/actions")
        response = await api.get("/health")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/health+json"
    assert response.json()["checks"]["database:connection"][0]["status"] == "pass"

    async def worker_checks() -> dict[str, Any] | None:
        body: dict[str, Any] = httpx.get(warden.worker_health_url, timeout=5).json()
        checks = body["checks"]
        return body if {"temporal:connection", "cloud:compute"} <= checks.keys() else None

    body = await eventually(worker_checks, what="worker checks recorded")
    assert body["status"] == "pass" and body["description"] == "warden-worker"
    assert body["checks"]["cloud:compute"][0]["status"] == "pass"


async def test_cluster_lifecycle_creates_locks_and_deletes_real_servers(warden: Warden) -> None:
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, "it-web", 2)
        created = await action_done(api, location)
        assert created["name"] == "CLUSTER_CREATE" and created["status"] == "SUCCEEDED", created
        nodes = (await api.get(f"/v1/nodes?cluster_id={cluster_id}")).json()["nodes"]
        assert sorted(n["name"] for n in nodes) == ["it-web-1", "it-web-2"]
        servers = await sim_servers(warden)
        assert all(servers[n["physical_id"]] == "ACTIVE" for n in nodes)

        lock = await api.post(
            f"/v1/clusters/{cluster_id}/actions",
            json={"lock": {"reason": "kernel patch", "owner": "ops"}},
        )
        assert lock.status_code == 202
        refused = await api.delete(f"/v1/clusters/{cluster_id}")
        assert refused.status_code == 409
        assert "locked by ops (kernel patch)" in refused.json()["error"]["message"]
        shown = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
        assert shown["lock"]["owner"] == "ops" and shown["status"] == "ACTIVE"

        assert (
            await api.post(f"/v1/clusters/{cluster_id}/actions", json={"unlock": {}})
        ).status_code == 202
        deleted = await api.delete(f"/v1/clusters/{cluster_id}")
        assert deleted.status_code == 202
        assert (await action_done(api, deleted.headers["location"]))["status"] == "SUCCEEDED"
        assert (await api.get(f"/v1/clusters/{cluster_id}")).status_code == 404
        servers = await sim_servers(warden)
        assert not {n["physical_id"] for n in nodes} & servers.keys()
        events = (await api.get(f"/v1/events?cluster_id={cluster_id}")).json()["events"]
        assert [e["action"] for e in events if e["obj_type"] == "cluster"] == [
            "CLUSTER_CREATE",
            "CLUSTER_LOCK",
            "CLUSTER_UNLOCK",
            "CLUSTER_DELETE",
        ]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
async def test_the_worker_names_its_threads_by_pool(warden: Warden) -> None:
    """`top -H` tells the worker's pools apart (worker/threads.py): a scale-in runs all of
    them (workflow code, `record_changes`, `remove_node`'s database write)."""
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, "it-threads", 2)
        assert (await action_done(api, location))["status"] == "SUCCEEDED"
        scaled = await api.post(
            f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": 1}}
        )
        assert scaled.status_code == 202, scaled.text
        assert (await action_done(api, scaled.headers["location"]))["status"] == "SUCCEEDED"
    worker = warden.procs["worker"].process
    assert worker is not None
    names = {
        (task / "comm").read_text().strip() for task in Path(f"/proc/{worker.pid}/task").iterdir()
    }
    pools = {name.rstrip("0123456789") for name in names}
    assert {"workflow_", "activity_", "blocking_"} <= pools, sorted(names)


async def test_unlocking_a_cluster_that_is_not_locked_is_409(warden: Warden) -> None:
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, "it-busy", 1)
        await action_done(api, location)
        refused = await api.post(f"/v1/clusters/{cluster_id}/actions", json={"unlock": {}})
        assert refused.status_code == 409
        assert "is not locked" in refused.json()["error"]["message"]


async def test_auth_rules_over_http(warden: Warden) -> None:
    async with warden.client() as admin:
        cluster_id, location = await create_cluster(admin, "it-auth", 0)
        await action_done(admin, location)
    async with warden.client("it-reader") as reader:
        assert (await reader.get(f"/v1/clusters/{cluster_id}")).status_code == 200
        denied = await reader.post(f"/v1/clusters/{cluster_id}/actions", json={"check": {}})
        assert denied.status_code == 403
    async with warden.client("it-other") as other:
        assert (await other.get(f"/v1/clusters/{cluster_id}")).status_code == 404
        assert (await other.get(location)).status_code == 404
    async with warden.client("") as anonymous:
        assert (await anonymous.get("/v1/clusters")).status_code == 401


async def test_the_service_lists_show_the_live_worker(warden: Warden) -> None:
    """`openstack orchestration service list` and `cluster service list`: the worker is
    up, seen by Temporal polling for both kinds of task; only an admin may look."""
    async with warden.client() as admin:
        heat = await admin.get("/v1/demo/services")
        senlin = await admin.get("/cluster/v1/services")
    assert heat.status_code == senlin.status_code == 200, heat.text + senlin.text
    # Up: this stack's worker (and any a fault test restarted in the last 150 s).
    engines = {s["id"]: s for s in heat.json()["services"] if s["status"] == "up"}
    assert engines and all(
        e["binary"] == "warden-worker" and "@" in e["host"] for e in engines.values()
    )
    clustering = {s["id"]: s for s in senlin.json()["services"] if s["state"] == "up"}
    assert clustering.keys() == engines.keys()
    assert all(clustering[i]["host"] == engines[i]["hostname"] for i in engines)
    async with warden.client("it-reader") as reader:
        assert (await reader.get("/v1/services")).status_code == 403


async def test_app_locks_a_cluster_by_signalling_temporal_directly(warden: Warden) -> None:
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, "it-signal", 1)
        await action_done(api, location)
        handle = warden.temporal.get_workflow_handle(f"cluster:{cluster_id}")
        await handle.signal("lock", LockClusterRequest(reason="deploy", owner="ci-bot"))

        async def locked() -> dict[str, Any] | None:
            cluster: dict[str, Any] = (await api.get(f"/v1/clusters/{cluster_id}")).json()[
                "cluster"
            ]
            return cluster if cluster["lock"] else None

        cluster = await eventually(locked, what="lock by signal visible in the API")
        assert cluster["lock"]["owner"] == "ci-bot"


async def test_every_operation_is_findable_by_search_attributes(warden: Warden) -> None:
    async with warden.client() as api:
        cluster_id, location = await create_cluster(api, "it-ui", 1)
        await action_done(api, location)

    async def listed() -> list[str]:
        query = f'WardenTarget="{cluster_id}"'
        return sorted([w.id async for w in warden.temporal.list_workflows(query)])

    ids = await eventually(lambda: _two(listed), what="entity + op in visibility")
    assert f"cluster:{cluster_id}" in ids
    assert any(i.startswith(f"cluster-op:{cluster_id}:") for i in ids)
    described = await warden.temporal.get_workflow_handle(f"cluster:{cluster_id}").describe()
    assert await described.static_summary() == "cluster it-ui"
    assert described.typed_search_attributes is not None

    # A finished operation says how it ended, so `WardenStatus="FAILED"` finds failures.
    async def succeeded() -> list[str] | None:
        query = (
            f'WardenKind="cluster-op" AND WardenTarget="{cluster_id}" AND WardenStatus="SUCCEEDED"'
        )
        found = [w.id async for w in warden.temporal.list_workflows(query)]
        return found or None

    assert (await eventually(succeeded, what="final WardenStatus"))[0].startswith("cluster-op:")


async def _two(listed: Any) -> list[str] | None:
    ids: list[str] = await listed()
    return ids if len(ids) >= 2 else None
