"""Health policy end to end: detection by polling, ordered recovery, fencing, over HTTP."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.integration.conftest import Warden
from tests.integration.test_lifecycle_hooks import act, hooked_cluster, nodes_of, waiting_tokens
from tests.integration.test_platform import action_done, sim_servers
from tests.support.eventually import eventually
from tests.support.simcloud_server import SimControl

pytestmark = pytest.mark.integration


def health_spec(actions: list[dict[str, Any]], **detection: Any) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "interval": 1,
                "node_update_timeout": 0,
                "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
                **detection,
            },
            "recovery": {"actions": actions, "fencing": ["COMPUTE"]},
        },
    }


async def attach_health(api: httpx.AsyncClient, cluster_id: str, spec: dict[str, Any]) -> str:
    created = await api.post(
        "/v1/policies", json={"policy": {"name": f"h-{uuid.uuid4().hex[:6]}", "spec": spec}}
    )
    assert created.status_code == 201, created.text
    policy_id = str(created.json()["policy"]["id"])
    attached = await act(api, cluster_id, {"policy_attach": {"policy_id": policy_id}})
    assert attached.status_code == 202, attached.text
    return policy_id


async def test_powered_off_node_is_detected_and_recovered_in_order(warden: Warden) -> None:
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        cluster_id, _ = await hooked_cluster(api, None, size=3)
        policy_id = await attach_health(
            api, cluster_id, health_spec([{"name": "REBOOT", "params": {"type": "HARD"}}])
        )
        victim = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])[0]
        await SimControl(sim).fault(victim["physical_id"], "shutoff", cured_by=["REBOOT"])

        async def healed() -> list[dict[str, Any]] | None:
            events = (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
            return events if any(e["action"] == "RECOVER_REBOOT" for e in events) else None

        # SHUTOFF is seen by status polling; its cheap fix (START) is tried before the
        # policy's REBOOT, and fails here because only a reboot cures this fault.
        events = await eventually(healed, timeout=60, what="recovery of the powered-off node")
        kinds = [e["action"] for e in events]
        assert kinds.index("HEALTH_CHECK") < kinds.index("NODE_RECOVER")
        assert kinds.index("RECOVER_START") < kinds.index("RECOVER_REBOOT")
        reasons = [e["status_reason"] for e in events]
        assert any("Step 1 START failed" in r for r in reasons), reasons
        assert any("Step 2 REBOOT: healthy again" in r for r in reasons), reasons
        node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
        assert node["status"] == "ACTIVE" and node["physical_id"] == victim["physical_id"]
        shown = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["health"]
        assert shown["available"] is True
        assert [r["name"] for r in shown["recoveries"]] == [victim["name"]]
        assert {n["name"] for n in shown["nodes"]} == {
            n["name"] for n in await nodes_of(api, cluster_id)
        }
        listed = (await api.get("/v1/actions", params={"target": cluster_id})).json()["actions"]
        [recover] = [a for a in listed if a["name"] == "CLUSTER_RECOVER"]
        assert (await action_done(api, f"/v1/actions/{recover['id']}"))["status"] == "SUCCEEDED"
        detach = await act(api, cluster_id, {"policy_detach": {"policy_id": policy_id}})
        assert detach.status_code == 202, detach.text
        await warden.temporal.get_workflow_handle(f"health:{cluster_id}").result()


async def test_manual_recreate_fences_the_old_server_first(warden: Warden) -> None:
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        cluster_id, _ = await hooked_cluster(api, None, size=1)
        [node] = await nodes_of(api, cluster_id)
        await SimControl(sim).fault(node["physical_id"], "error", cured_by=["RECREATE"])
        bad = await api.post(
            f"/v1/nodes/{node['id']}/actions", json={"recover": {"operation": "EXPLODE"}}
        )
        assert bad.status_code == 400
        recovered = await api.post(
            f"/v1/nodes/{node['id']}/actions", json={"recover": {"operation": "recreate"}}
        )
        assert recovered.status_code == 202, recovered.text
        assert (await action_done(api, recovered.headers["Location"]))["status"] == "SUCCEEDED"
        after = (await api.get(f"/v1/nodes/{node['id']}")).json()["node"]
        assert after["status"] == "ACTIVE"
        assert after["physical_id"] != node["physical_id"]
        servers = await sim_servers(warden)
        assert node["physical_id"] not in servers and after["physical_id"] in servers


async def test_cloud_outage_is_not_a_recovery_storm(warden: Warden) -> None:
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        cluster_id, _ = await hooked_cluster(api, None, size=2)
        await attach_health(api, cluster_id, health_spec([{"name": "RECREATE"}]))
        control = SimControl(sim)
        await control.api_faults(error_rate=1.0)
        try:

            async def warned() -> dict[str, Any] | None:
                cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
                return cluster if cluster["status"] == "WARNING" else None

            cluster = await eventually(warned, timeout=60, what="cluster WARNING")
            assert "inconclusive" in cluster["status_reason"]
        finally:
            await control.api_faults(error_rate=0)
        for node in await nodes_of(api, cluster_id):
            assert node["status"] == "ACTIVE"
        recoveries = (await api.get("/v1/actions", params={"target": cluster_id})).json()
        assert not [a for a in recoveries["actions"] if a["name"] == "CLUSTER_RECOVER"]


async def test_lifecycle_event_triggers_the_cheap_fix_at_once(warden: Warden) -> None:
    spec = health_spec([{"name": "RECREATE"}])
    spec["properties"]["detection"] = {
        "interval": 3600,  # no polling: only the notification can start this recovery
        "node_update_timeout": 0,
        "detection_modes": [{"type": "LIFECYCLE_EVENTS"}],
    }
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        cluster_id, _ = await hooked_cluster(api, None, size=2)
        await attach_health(api, cluster_id, spec)
        victim = (await nodes_of(api, cluster_id))[0]
        # simcloud POSTs compute.instance.pause.end to /v1/notifications.
        await SimControl(sim).fault(victim["physical_id"], "pause", cured_by=["UNPAUSE"])

        async def unpaused() -> list[dict[str, Any]] | None:
            events = (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
            done = [e for e in events if e["action"] == "RECOVER_UNPAUSE"]
            return done or None

        [event] = await eventually(unpaused, timeout=60, what="UNPAUSE from the event hint")
        assert "healthy again" in event["status_reason"]
        node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
        assert node["physical_id"] == victim["physical_id"]  # no recreate was needed


async def test_notifications_need_a_token_and_ignore_other_events(warden: Warden) -> None:
    body = {"event_type": "compute.instance.update", "payload": {}}
    async with httpx.AsyncClient(base_url=warden.api_url) as anon:
        assert (await anon.post("/v1/notifications", json=body)).status_code == 401
    async with warden.client() as api:
        ignored = await api.post("/v1/notifications", json=body)
        assert ignored.status_code == 202 and ignored.json()["accepted"] is False


async def test_failing_app_found_by_url_polling_is_rebuilt(warden: Warden) -> None:
    poll = {
        "type": "NODE_STATUS_POLL_URL",
        "options": {
            "poll_url": f"{warden.simcloud_url}/sim/apps/{{nodename}}/health",
            "poll_url_healthy_response": "passing",
            "poll_url_retry_limit": 1,
            "poll_url_retry_interval": 0,
        },
    }
    spec = health_spec([{"name": "REBUILD"}], detection_modes=[poll])
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        cluster_id, _ = await hooked_cluster(api, None, size=2)
        await attach_health(api, cluster_id, spec)
        victim = (await nodes_of(api, cluster_id))[0]
        await SimControl(sim).fault(victim["physical_id"], "app_failing", cured_by=["REBUILD"])

        async def rebuilt() -> list[dict[str, Any]] | None:
            events = (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
            return [e for e in events if e["action"] == "RECOVER_REBUILD"] or None

        [event] = await eventually(rebuilt, timeout=60, what="REBUILD after URL polling")
        assert "healthy again" in event["status_reason"]
        checks = [
            e["status_reason"]
            for e in (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
            if e["action"] == "HEALTH_CHECK"
        ]
        assert any("UNHEALTHY" in c and "503" in c for c in checks), checks


async def _events_of(api: httpx.AsyncClient, node_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (await api.get("/v1/events", params={"obj_id": node_id})).json()[
        "events"
    ]
    return found


async def _checked_twice_since(api: httpx.AsyncClient, cluster_id: str, node_id: str) -> None:
    """Wait until the manager has probed the node in two rounds that began after now."""
    first: list[str] = []

    async def rounds() -> bool | None:
        health = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["health"]
        for node in health.get("nodes", []):
            seen = node["checked_at"]
            if node["node_id"] == node_id and seen and seen not in first:
                first.append(seen)
        return len(first) >= 3 or None

    await eventually(rounds, timeout=60, what="two more probe rounds")


async def test_lb_polling_with_all_failed_waits_for_every_mode_then_any_failed_acts(
    warden: Warden,
) -> None:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    profile = {
        "profile": {
            "name": f"lb-{uuid.uuid4().hex[:6]}",
            "spec": {
                "type": "os.nova.server",
                "version": "1.0",
                # simcloud puts servers with this metadata into the Octavia pool.
                "properties": {
                    "flavor": "m1.tiny",
                    "image": "cirros",
                    "metadata": {"lb_pool_id": pool},
                },
            },
        }
    }
    modes = [
        {"type": "NODE_STATUS_POLLING"},
        {"type": "LB_STATUS_POLLING", "options": {"pool_id": pool}},
    ]
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        made = await api.post("/v1/profiles", json=profile)
        assert made.status_code == 201, made.text
        created = await api.post(
            "/v1/clusters",
            json={
                "cluster": {
                    "name": f"lb-{uuid.uuid4().hex[:6]}",
                    "profile_id": made.json()["profile"]["id"],
                    "desired_capacity": 2,
                }
            },
        )
        assert created.status_code == 202, created.text
        cluster_id = created.json()["cluster"]["id"]
        assert (await action_done(api, created.headers["Location"]))["status"] == "SUCCEEDED"
        policy_id = await attach_health(
            api,
            cluster_id,
            health_spec(
                [{"name": "REBOOT"}], detection_modes=modes, recovery_conditional="ALL_FAILED"
            ),
        )
        victim = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])[0]
        control = SimControl(sim)

        # Only the load balancer sees it OFFLINE; the server is ACTIVE: not ALL failed.
        await control.fault(victim["physical_id"], "lb_offline", cured_by=["REBOOT"])
        await _checked_twice_since(api, cluster_id, victim["id"])
        assert not [
            e for e in await _events_of(api, victim["id"]) if e["action"].startswith("RECOVER_")
        ]

        # With ANY_FAILED the pool member's status alone is enough.
        detach = await act(api, cluster_id, {"policy_detach": {"policy_id": policy_id}})
        assert detach.status_code == 202, detach.text
        await warden.temporal.get_workflow_handle(f"health:{cluster_id}").result()
        await attach_health(
            api,
            cluster_id,
            health_spec(
                [{"name": "REBOOT"}], detection_modes=modes, recovery_conditional="ANY_FAILED"
            ),
        )

        async def healed() -> list[dict[str, Any]] | None:
            events = await _events_of(api, victim["id"])
            return events if any(e["action"] == "RECOVER_REBOOT" for e in events) else None

        events = await eventually(healed, timeout=60, what="recovery of the OFFLINE member")
        checks = [e["status_reason"] for e in events if e["action"] == "HEALTH_CHECK"]
        assert any("LB_STATUS_POLLING" in r and "OFFLINE" in r for r in checks), checks


async def test_health_checks_pause_during_scale_in_and_resume_after(warden: Warden) -> None:
    hooks = {"type": "zaqar", "params": {"queue": f"q-{uuid.uuid4().hex[:6]}"}, "timeout": 3600}
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        cluster_id, _ = await hooked_cluster(api, hooks, size=3)
        await attach_health(api, cluster_id, health_spec([{"name": "REBOOT"}]))
        nodes = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        assert scaled.status_code == 202, scaled.text

        async def paused() -> bool | None:
            health = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["health"]
            return health.get("paused") or None

        await eventually(paused, timeout=30, what="health checks paused by the scale-in")
        # A node breaks while the cluster waits on the victim's hook: no recovery yet.
        survivor = nodes[-1]
        await SimControl(sim).fault(survivor["physical_id"], "shutoff", cured_by=["REBOOT"])
        [waiting] = await waiting_tokens(api, scaled.json()["action"])
        token = waiting["id"]
        health = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["health"]
        assert health["paused"] is True
        assert not [
            e for e in await _events_of(api, survivor["id"]) if e["action"] == "NODE_RECOVER"
        ]

        done = await act(api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": token}})
        assert done.status_code == 202, done.text
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"

        async def healed() -> bool | None:
            events = await _events_of(api, survivor["id"])
            return any(e["action"] == "RECOVER_REBOOT" for e in events) or None

        await eventually(healed, timeout=60, what="recovery once the checks resumed")
