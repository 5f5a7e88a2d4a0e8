"""Scale-in lifecycle hooks end to end: API over HTTP, real Temporal, worker, simcloud.

The webhook path uses the example consumer app (examples/lifecycle_consumer.py) as a
real process: it verifies the signature, drains and calls complete_lifecycle.
"""

from __future__ import annotations

import json
import signal
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from activities.cloud import CloudConfig, CloudSession
from config import Settings
from tests.integration.conftest import Warden
from tests.integration.test_platform import action_done, create_cluster, sim_servers
from tests.support.eventually import eventually
from tests.support.processes import PYTHON, Proc, free_port, wait_http

pytestmark = pytest.mark.integration

SECRET = "it-hook-secret-123"


@pytest.fixture(scope="module")
def consumer(warden: Warden) -> Iterator[str]:
    """The example consumer app, draining each node for one second."""
    port = free_port()
    var = warden.env["WARDEN_VAR_DIR"]
    proc = Proc(
        "consumer",
        [
            PYTHON,
            "-m",
            "examples.lifecycle_consumer",
            "--port",
            str(port),
            "--secret",
            SECRET,
            "--warden-token",
            "it-admin",
            "--drain-seconds",
            "1",
        ],
        warden.env,
        Path(var) / "consumer.log",
    )
    proc.start()
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/received", proc)
    yield url
    proc.stop()


async def deletion_policy(api: httpx.AsyncClient, hooks: dict[str, Any] | None) -> str:
    spec: dict[str, Any] = {
        "type": "senlin.policy.deletion",
        "version": "1.1",
        "properties": {"criteria": "OLDEST_FIRST", **({"hooks": hooks} if hooks else {})},
    }
    created = await api.post(
        "/v1/policies", json={"policy": {"name": f"del-{uuid.uuid4().hex[:6]}", "spec": spec}}
    )
    assert created.status_code == 201, created.text
    return str(created.json()["policy"]["id"])


async def hooked_cluster(
    api: httpx.AsyncClient, hooks: dict[str, Any] | None, size: int = 2
) -> tuple[str, str]:
    cluster_id, location = await create_cluster(api, f"lc-{uuid.uuid4().hex[:6]}", size)
    assert (await action_done(api, location))["status"] == "SUCCEEDED"
    policy_id = await deletion_policy(api, hooks)
    attached = await api.post(
        f"/v1/clusters/{cluster_id}/actions", json={"policy_attach": {"policy_id": policy_id}}
    )
    assert attached.status_code == 202, attached.text
    return cluster_id, policy_id


async def act(api: httpx.AsyncClient, cluster_id: str, body: dict[str, Any]) -> httpx.Response:
    return await api.post(f"/v1/clusters/{cluster_id}/actions", json=body)


async def waiting_tokens(api: httpx.AsyncClient, parent: str, n: int = 1) -> list[dict[str, Any]]:
    async def waiting() -> list[dict[str, Any]] | None:
        actions = await api.get("/v1/actions", params={"status": "WAITING_LIFECYCLE_COMPLETION"})
        found = [a for a in actions.json()["actions"] if parent in (a.get("depended_by") or [])]
        return found if len(found) >= n else None

    return await eventually(waiting, timeout=30, what="victims waiting on hooks")


async def queued_messages(warden: Warden, queue: str, at_least: int = 1) -> list[Any]:
    """Lifecycle messages in a simcloud Zaqar queue, once there are `at_least`."""
    settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))

    async def posted() -> list[Any] | None:
        async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
            bodies = [m.body for m in await cloud.messaging.list_messages(queue)]
        return bodies if len(bodies) >= at_least else None

    return await eventually(posted, timeout=30, what=f"messages in Zaqar queue {queue}")


async def lifecycle_deadline(api: httpx.AsyncClient, token_id: str) -> datetime:
    """When the victim's hook times out, as its workflow says (GET /v1/actions/{id}).

    The API answers `available: false` when the workflow's query is not answered within
    its 2 s (a busy worker, a workflow not yet started): asked again until it is.
    """

    async def deadline() -> datetime | None:
        lifecycle = (await api.get(f"/v1/actions/{token_id}")).json()["action"]["lifecycle"]
        return datetime.fromisoformat(lifecycle["deadline"]) if lifecycle["available"] else None

    return await eventually(deadline, timeout=10, interval=0.1, what="the hook's deadline")


async def clock_reaches(moment: datetime) -> None:
    """Wait until `moment` has passed (the dev server's timers run on this clock)."""

    async def passed() -> bool:
        return datetime.now(UTC) > moment

    await eventually(passed, timeout=30, what=f"the clock past {moment.isoformat()}")


async def nodes_of(api: httpx.AsyncClient, cluster_id: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = (
        await api.get("/v1/nodes", params={"cluster_id": cluster_id})
    ).json()["nodes"]
    return listed


async def test_webhook_consumer_completes_the_hook_and_the_node_is_deleted(
    warden: Warden, consumer: str
) -> None:
    hooks = {
        "type": "webhook",
        "params": {"url": f"{consumer}/hooks/lifecycle", "secret": SECRET},
        "timeout": 120,
    }
    async with warden.client() as api:
        cluster_id, policy_id = await hooked_cluster(api, hooks)
        shown = (await api.get(f"/v1/policies/{policy_id}")).json()["policy"]
        assert shown["has_secret"] is True and SECRET not in str(shown)
        before = await nodes_of(api, cluster_id)
        victim = min(before, key=lambda n: n["name"])
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        assert scaled.status_code == 202, scaled.text
        done = await action_done(api, scaled.headers["Location"])
        assert done["status"] == "SUCCEEDED", done
        [token] = [
            a
            for a in (await api.get("/v1/actions", params={"target": victim["id"]})).json()[
                "actions"
            ]
            if a["name"] == "NODE_DELETE"
        ]
        assert token["status"] == "SUCCEEDED"
        assert "complete_lifecycle received" in token["status_reason"]
        assert [n["id"] for n in await nodes_of(api, cluster_id)] != []
        assert victim["id"] not in {n["id"] for n in await nodes_of(api, cluster_id)}
        assert victim["physical_id"] not in await sim_servers(warden)
        events = (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
        kinds = [e["action"] for e in events]
        assert "LIFECYCLE_HOOK" in kinds and "LIFECYCLE_COMPLETE" in kinds, kinds
        assert any("delivered to webhook" in e["status_reason"] for e in events)
    async with httpx.AsyncClient(base_url=consumer) as app:
        received = (await app.get("/received")).json()
        mine = [r for r in received if r["message"]["node_id"] == victim["id"]]
        assert mine and mine[0]["state"] == "completed"
    # docs/api-contract.md §Reliability: the webhook secret never enters workflow history
    # (the delivery activity looks it up by policy id); check every workflow this scale-in ran.
    parent = scaled.headers["Location"].rsplit("/", 1)[-1]
    for workflow_id in (
        f"cluster:{cluster_id}",
        f"cluster-op:{cluster_id}:{parent}",
        f"node-delete:{token['id']}",
    ):
        history = await warden.temporal.get_workflow_handle(workflow_id).fetch_history()
        assert SECRET not in json.dumps(history.to_json_dict()), workflow_id


async def test_zaqar_hook_complete_lifecycle_is_idempotent_and_scoped(
    warden_on_each_database: Warden,
) -> None:
    """On SQLite, and on PostgreSQL through replicas (see `warden_on_each_database`)."""
    warden = warden_on_each_database
    queue = f"hooks-{uuid.uuid4().hex[:8]}"
    hooks = {"type": "zaqar", "params": {"queue": queue}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks)
        other_id, _ = await hooked_cluster(api, None, size=0)
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        [token] = await waiting_tokens(api, parent)
        parent_action = (await api.get(f"/v1/actions/{parent}")).json()["action"]
        assert parent_action["status"] == "WAITING"

        [message] = await queued_messages(warden, queue)
        assert message["lifecycle_action_token"] == token["id"]
        assert message["lifecycle_transition_type"] == "termination"
        assert message["complete_url"].endswith(f"/v1/clusters/{cluster_id}/actions")

        body = {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
        wrong = await act(api, other_id, body)
        assert wrong.status_code == 404
        unknown = await act(
            api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": "nope"}}
        )
        assert unknown.status_code == 404
        first = await act(api, cluster_id, body)
        assert (
            first.status_code == 202 and first.headers["Location"] == f"/v1/actions/{token['id']}"
        )
        assert (await action_done(api, f"/v1/actions/{token['id']}"))["status"] == "SUCCEEDED"
        again = await act(api, cluster_id, body)
        assert again.status_code == 202  # no longer waiting: a no-op
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"
        assert len(await nodes_of(api, cluster_id)) == 1


async def test_hook_times_out_and_deletion_proceeds(warden: Warden) -> None:
    hooks = {"type": "zaqar", "params": {"queue": f"q-{uuid.uuid4().hex[:8]}"}, "timeout": 2}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks)
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        done = await action_done(api, scaled.headers["Location"])
        assert done["status"] == "SUCCEEDED"
        tokens = [
            a
            for a in (
                await api.get("/v1/actions", params={"name": "NODE_DELETE", "limit": 1000})
            ).json()["actions"]
            if scaled.headers["Location"].rsplit("/", 1)[-1] in (a.get("depended_by") or [])
        ]
        assert tokens and "timed out" in tokens[0]["status_reason"]
        assert len(await nodes_of(api, cluster_id)) == 1


async def test_heartbeat_lifecycle_moves_the_deadline(warden: Warden) -> None:
    # 8 s: room for a loaded machine to read the first deadline before it passes.
    hooks = {"type": "zaqar", "params": {"queue": f"q-{uuid.uuid4().hex[:8]}"}, "timeout": 8}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks)
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        [token] = await waiting_tokens(api, parent)
        first_deadline = await lifecycle_deadline(api, token["id"])
        # Beat with 1.5 s of the 8 s left, so the moved deadline lies 6.5 s past the first.
        await clock_reaches(first_deadline - timedelta(seconds=1.5))
        beat = await act(
            api, cluster_id, {"heartbeat_lifecycle": {"lifecycle_action_token": token["id"]}}
        )
        assert beat.status_code == 202
        moved_deadline = await lifecycle_deadline(api, token["id"])
        assert moved_deadline >= first_deadline + timedelta(seconds=2), moved_deadline
        await clock_reaches(first_deadline + timedelta(seconds=0.5))
        still = (await api.get(f"/v1/actions/{token['id']}")).json()["action"]
        assert still["status"] == "WAITING_LIFECYCLE_COMPLETION", still
        assert still["outputs"]["heartbeats"] == 1
        done = await action_done(api, f"/v1/actions/{token['id']}")
        assert "timed out" in done["status_reason"]


async def test_app_completes_lifecycle_by_signalling_temporal_directly(warden: Warden) -> None:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    hooks = {"type": "zaqar", "params": {"queue": queue}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks)
        node = (await nodes_of(api, cluster_id))[0]
        deleted = await api.delete(f"/v1/nodes/{node['id']}")
        assert deleted.status_code == 202, deleted.text
        parent = deleted.headers["Location"].rsplit("/", 1)[-1]
        [token] = await waiting_tokens(api, parent)
        [message] = await queued_messages(warden, queue)  # apps learn the token here
        assert message["lifecycle_action_token"] == token["id"]
        handle = warden.temporal.get_workflow_handle(f"node-delete:{token['id']}")
        await handle.signal("complete_lifecycle")
        done = await action_done(api, f"/v1/actions/{token['id']}")
        assert done["status"] == "SUCCEEDED" and "complete_lifecycle" in done["status_reason"]
        assert node["id"] not in {n["id"] for n in await nodes_of(api, cluster_id)}


async def test_webhook_target_down_is_retried_then_deleted_at_deadline(warden: Warden) -> None:
    hooks = {
        "type": "webhook",
        "params": {"url": f"http://127.0.0.1:{free_port()}/down"},
        "timeout": 3,
    }
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks)
        node = (await nodes_of(api, cluster_id))[0]
        removed = await act(api, cluster_id, {"del_nodes": {"nodes": [node["id"]]}})
        assert (await action_done(api, removed.headers["Location"]))["status"] == "SUCCEEDED"
        events = (await api.get("/v1/events", params={"obj_id": node["id"]})).json()["events"]
        reasons = " | ".join(e["status_reason"] for e in events)
        assert "not delivered before the wait ended" in reasons or "failed" in reasons, reasons
        assert sum("attempt" in e["status_reason"] for e in events) >= 2, reasons


async def test_marked_unhealthy_node_goes_first_and_skips_its_hook(warden: Warden) -> None:
    hooks = {"type": "zaqar", "params": {"queue": f"q-{uuid.uuid4().hex[:8]}"}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks, size=3)
        nodes = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
        youngest = nodes[-1]
        bad = await api.patch(f"/v1/nodes/{youngest['id']}", json={"mark_unhealthy": "yes"})
        assert bad.status_code == 400
        marked = await api.patch(
            f"/v1/nodes/{youngest['id']}",
            json={"mark_unhealthy": True, "status_reason": "disk errors"},
        )
        assert marked.status_code == 200, marked.text
        assert (marked.json()["node"]["status"], marked.json()["node"]["status_reason"]) == (
            "ERROR",
            "disk errors",
        )
        cleared = await api.patch(f"/v1/nodes/{nodes[1]['id']}", json={"mark_unhealthy": False})
        assert cleared.json()["node"]["status"] == "ACTIVE"
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"
        left = {n["id"] for n in await nodes_of(api, cluster_id)}
        assert youngest["id"] not in left and len(left) == 2


async def test_size_bounds_busy_and_lock_rules_over_http(warden: Warden) -> None:
    hooks = {"type": "zaqar", "params": {"queue": f"q-{uuid.uuid4().hex[:8]}"}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks, size=2)
        too_far = await act(
            api, cluster_id, {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 9}}
        )
        assert too_far.status_code == 400
        assert "greater than the cluster's max_size (5)" in too_far.json()["error"]["message"]
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        [token] = await waiting_tokens(api, parent)
        busy = await act(api, cluster_id, {"scale_out": {"count": 1}})
        assert busy.status_code == 409
        assert "because it is already locked" in busy.json()["error"]["message"]
        done = await act(
            api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
        )
        assert done.status_code == 202
        await action_done(api, scaled.headers["Location"])

        locked = await act(api, cluster_id, {"lock": {"reason": "patching", "owner": "ops"}})
        assert locked.status_code == 202
        node = (await nodes_of(api, cluster_id))[0]
        for body in ({"scale_in": {"count": 1}}, {"del_nodes": {"nodes": [node["id"]]}}):
            refused = await act(api, cluster_id, body)
            assert refused.status_code == 409, body
            assert "locked by ops (patching)" in refused.json()["error"]["message"]
        assert (await api.delete(f"/v1/nodes/{node['id']}")).status_code == 409
        assert (await act(api, cluster_id, {"unlock": {}})).status_code == 202
        beyond = await act(api, cluster_id, {"scale_out": {"count": 9}})
        assert beyond.status_code == 202  # the action fails, as Senlin's does
        failed = await action_done(api, beyond.headers["Location"])
        assert (failed["status"], failed["status_reason"]) == (
            "FAILED",
            "The target capacity (10) is greater than the cluster's max_size (5).",
        )


async def test_invalid_policy_specs_are_400_naming_the_property(warden: Warden) -> None:
    async with warden.client() as api:
        for properties, needle in (
            ({"hooks": {"type": "webhook", "params": {"url": "ftp://x/y"}, "timeout": 5}}, "url"),
            ({"hooks": {"type": "zaqar", "params": {"queue": "q"}, "timeout": -1}}, "timeout"),
            ({"criteria": "NEWEST"}, "criteria"),
            ({"grace_period": "soon"}, "grace_period"),
        ):
            spec = {"type": "senlin.policy.deletion", "version": "1.1", "properties": properties}
            bad = await api.post("/v1/policies", json={"policy": {"name": "bad", "spec": spec}})
            assert bad.status_code == 400, (properties, bad.text)
            assert needle in bad.json()["error"]["message"], bad.text


async def test_worker_killed_while_nodes_wait_deletes_each_node_exactly_once(
    warden: Warden,
) -> None:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    hooks = {"type": "zaqar", "params": {"queue": queue}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks, size=3)
        servers_before = await sim_servers(warden)
        scaled = await act(api, cluster_id, {"scale_in": {"count": 2}})
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        tokens = await waiting_tokens(api, parent, n=2)
        await queued_messages(warden, queue, at_least=2)
        worker = warden.procs["worker"]
        worker.stop(signal.SIGKILL)
        worker.start()
        wait_http(warden.worker_health_url, worker)
        for token in tokens:
            body = {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
            assert (await act(api, cluster_id, body)).status_code == 202
        done = await action_done(api, scaled.headers["Location"])
        assert done["status"] == "SUCCEEDED", done
        left = await nodes_of(api, cluster_id)
        assert len(left) == 1
        servers_after = await sim_servers(warden)
        gone = set(servers_before) - set(servers_after)
        mine = {n["physical_id"] for n in left}
        assert len(gone & set(servers_before)) >= 2 and mine <= set(servers_after)
        for token in tokens:
            final = (await api.get(f"/v1/actions/{token['id']}")).json()["action"]
            assert final["status"] == "SUCCEEDED"
            events = (await api.get("/v1/events", params={"action_id": token["id"]})).json()[
                "events"
            ]
            assert sum(e["action"] == "NODE_DELETE" for e in events) == 1
