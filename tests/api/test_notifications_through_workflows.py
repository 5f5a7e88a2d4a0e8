"""`POST /v1/notifications` takes Nova's versioned notifications as well as the legacy
ones, through the real workflows in process: a versioned `instance.pause.end` reaches
the node's health manager, which unpauses the server."""

from __future__ import annotations

from typing import Any

from tests.api.test_clusters_through_workflows import cluster_with, nodes_of
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

#: Detection by Nova's notifications only: the policy never polls.
HEALTH = {
    "type": "senlin.policy.health",
    "version": "1.1",
    "properties": {
        "detection": {
            "interval": 3600,
            "node_update_timeout": 0,
            "detection_modes": [{"type": "LIFECYCLE_EVENTS"}],
        },
        "recovery": {"actions": [{"name": "RECREATE"}]},
    },
}


async def watched_cluster(api: Any) -> tuple[str, dict[str, Any]]:
    """A cluster of 2 whose health policy only listens; and its first node."""
    cluster_id = await cluster_with(api, 2, HEALTH)
    return cluster_id, sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])[0]


async def recovered_by(api: Any, node_id: str, step: str) -> list[dict[str, Any]]:
    async def done() -> list[dict[str, Any]] | None:
        events = (await api.get("/v1/events", params={"obj_id": node_id})).json()["events"]
        return [e for e in events if e["action"] == step] or None

    return await eventually(done, timeout=60, what=f"{step} of node {node_id}")


async def test_a_versioned_notification_is_accepted_and_recovers_the_node(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    _, victim = await watched_cluster(api)
    await running_warden.cloud.compute.pause(victim["physical_id"])
    note = {
        "event_type": "instance.pause.end",
        "payload": {
            "nova_object.name": "InstanceActionPayload",
            "nova_object.data": {"uuid": victim["physical_id"], "state": "paused"},
        },
    }

    accepted = await api.post("/v1/notifications", json=note)

    assert accepted.status_code == 202, accepted.text
    assert accepted.json() == {"accepted": True, "node_id": victim["id"], "reason": ""}
    [unpaused] = await recovered_by(api, victim["id"], "RECOVER_UNPAUSE")
    assert "healthy again" in unpaused["status_reason"]


async def test_other_events_are_answered_with_why_they_were_ignored(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    _, victim = await watched_cluster(api)
    for event_type, reason in [
        ("instance.rebuild.end", "event type not used by Warden"),
        ("instance.power_off.end", "no node runs on this server"),
    ]:
        note = {"event_type": event_type, "payload": {"nova_object.data": {"uuid": "other"}}}
        ignored = (await api.post("/v1/notifications", json=note)).json()
        assert (ignored["accepted"], ignored["reason"]) == (False, reason)
    assert victim["status"] == "ACTIVE"
