"""A cluster whose profile gives each node a network and a floating IP, through the real
workflows on simcloud: it scales in through a lifecycle hook and recovers by RECREATE,
and every node keeps its network while the ports and floating IPs Warden made for a
deleted server go with it (Senlin's `os.nova.server` behaviour)."""

from __future__ import annotations

from typing import Any

import httpx

from activities.cloud.collections import collection
from activities.cloud.session import CloudSession
from tests.api.test_clusters_through_workflows import (
    DELETION,
    act,
    action_done,
    action_id_of,
    cluster_with,
    nodes_of,
    waiting_victim,
)
from tests.support.networks import route_private_to_public
from tests.support.warden_in_process import InProcessWarden

PROFILE = {
    "name": "public-web",
    "spec": {
        "type": "os.nova.server",
        "version": 1.0,
        "properties": {
            "flavor": 1,
            "image": "cirros",
            "networks": [{"network": "private", "floating_network": "public"}],
        },
    },
}


async def cluster_with_hook(api: httpx.AsyncClient) -> str:
    return await cluster_with(api, 2, DELETION, profile=PROFILE)


async def floating_of(cloud: CloudSession, server_id: str) -> list[dict[str, Any]]:
    server = await cloud.compute.get_server(server_id)
    assert list(server.addresses) == ["private"]
    return [a for a in server.address_entries["private"] if a["OS-EXT-IPS:type"] == "floating"]


async def test_a_networked_cluster_scales_in_through_its_hook_and_recreates_on_its_network(
    running_warden: InProcessWarden,
) -> None:
    api, cloud = running_warden.api, running_warden.cloud
    await route_private_to_public(cloud)
    cluster_id = await cluster_with_hook(api)
    nodes = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
    for node in nodes:
        assert len(await floating_of(cloud, node["physical_id"])) == 1
    assert len(await cloud.collections.list(collection("floating_ip"))) == 2

    scale_in = action_id_of(await act(api, cluster_id, {"scale_in": {"count": 1}}))
    token = await waiting_victim(api, scale_in)
    complete = {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
    assert (await act(api, cluster_id, complete)).status_code == 202
    assert (await action_done(api, scale_in))["status"] == "SUCCEEDED"
    # The victim's floating IP and port went with its server.
    assert len(await cloud.collections.list(collection("floating_ip"))) == 1
    assert await cloud.collections.list(collection("port"), {"device_id": token["target"]}) == []

    [survivor] = await nodes_of(api, cluster_id)
    old_server = survivor["physical_id"]
    recover = {"recover": {"operation": "RECREATE"}}
    recovering = await api.post(f"/v1/nodes/{survivor['id']}/actions", json=recover)
    assert (await action_done(api, action_id_of(recovering)))["status"] == "SUCCEEDED"
    [recreated] = await nodes_of(api, cluster_id)
    assert recreated["physical_id"] != old_server
    assert len(await floating_of(cloud, recreated["physical_id"])) == 1  # its network kept
    fips = await cloud.collections.list(collection("floating_ip"))
    assert len(fips) == 1  # the old server's floating IP was released, not leaked
