"""No server is lost track of, through the real workflows and activities on simcloud: a
RECREATE whose old server the cloud refuses to delete (locked by an admin) leaves the
node on its replacement, and deleting the node deletes every server made for it."""

from __future__ import annotations

from typing import Any

from tests.api.test_clusters_through_workflows import (
    action_done,
    action_id_of,
    cluster_with,
    nodes_of,
    server_ids,
)
from tests.support.warden_in_process import InProcessWarden

#: Fencing asked for, but a server neither deleted nor powered off is replaced anyway.
HEALTH = {
    "type": "senlin.policy.health",
    "version": "1.1",
    "properties": {
        "detection": {"interval": 600, "detection_modes": [{"type": "NODE_STATUS_POLLING"}]},
        "recovery": {
            "actions": [{"name": "RECREATE"}],
            "fencing": ["COMPUTE"],
            "node_force_recreate": True,
        },
    },
}


async def one_node_cluster(warden: InProcessWarden) -> tuple[str, dict[str, Any]]:
    cluster_id = await cluster_with(warden.api, 1, HEALTH)
    [node] = await nodes_of(warden.api, cluster_id)
    return cluster_id, node


async def test_a_recreate_past_a_locked_server_tracks_both_and_the_delete_removes_both(
    running_warden: InProcessWarden,
) -> None:
    api, compute = running_warden.api, running_warden.cloud.compute
    cluster_id, node = await one_node_cluster(running_warden)
    old = node["physical_id"]
    await compute.lock(old, reason="kept for forensics")

    recover = {"recover": {"operation": "RECREATE"}}
    recovering = await api.post(f"/v1/nodes/{node['id']}/actions", json=recover)
    assert (await action_done(api, action_id_of(recovering)))["status"] == "SUCCEEDED"

    [recreated] = await nodes_of(api, cluster_id)
    new = recreated["physical_id"]
    assert recreated["status"] == "ACTIVE" and new != old
    assert await server_ids(running_warden) == {old, new}  # the old one is locked, not lost
    events = (await api.get("/v1/events", params={"obj_id": node["id"]})).json()["events"]
    assert any(f"Old server {old} could not be deleted" in e["status_reason"] for e in events)

    # While the old server is locked the cluster cannot be deleted whole, and says why.
    deleting = await api.delete(f"/v1/clusters/{cluster_id}")
    failed = await action_done(api, action_id_of(deleting))
    assert failed["status"] == "FAILED" and "is locked" in failed["status_reason"]
    await compute.unlock(old)
    deleting = await api.delete(f"/v1/clusters/{cluster_id}")
    assert (await action_done(api, action_id_of(deleting)))["status"] == "SUCCEEDED"
    assert await server_ids(running_warden) == set()
