"""Senlin's node check (`POST /v1/nodes/{id}/actions {"check": {}}`), end to end.

The operation added by following docs/ARCHITECTURE.md's checklist: it checks the one
node named, not the whole cluster, and leaves the other nodes' recorded status alone.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.test_clusters_through_workflows import (
    PROFILE,
    act,
    action_done,
    action_id_of,
    hooked_cluster,
    nodes_of,
)
from tests.api.test_stacks_api import assert_error
from tests.support.warden_in_process import InProcessWarden


async def _cluster(api: httpx.AsyncClient, size: int) -> str:
    profile = await api.post("/v1/profiles", json={"profile": PROFILE})
    body = {"name": "web", "profile_id": profile.json()["profile"]["id"], "desired_capacity": size}
    created = await api.post("/v1/clusters", json={"cluster": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    cluster_id: str = created.json()["cluster"]["id"]
    return cluster_id


async def _check(api: httpx.AsyncClient, node_id: str) -> dict[str, Any]:
    accepted = await api.post(f"/v1/nodes/{node_id}/actions", json={"check": {}})
    return await action_done(api, action_id_of(accepted))


async def test_node_check_refreshes_only_the_node_named(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    cluster_id = await _cluster(api, 2)
    first, second = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
    await running_warden.cloud.compute.stop(first["physical_id"])
    await running_warden.cloud.compute.stop(second["physical_id"])

    action = await _check(api, first["id"])

    assert action["action"] == "NODE_CHECK"
    assert action["status"] == "FAILED"  # the checked node's server is SHUTOFF
    after = {n["id"]: n for n in await nodes_of(api, cluster_id)}
    assert after[first["id"]]["status"] == "ERROR"
    assert after[second["id"]]["status"] == "ACTIVE"  # stopped too, but not checked
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert cluster["status"] == "WARNING"

    await running_warden.cloud.compute.start(first["physical_id"])
    assert (await _check(api, first["id"]))["status"] == "SUCCEEDED"
    after = {n["id"]: n for n in await nodes_of(api, cluster_id)}
    assert after[first["id"]]["status"] == "ACTIVE"
    # One node's check says nothing of the others: the cluster keeps its WARNING.
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert cluster["status"] == "WARNING"


async def test_node_check_is_refused_while_the_cluster_is_busy(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await hooked_cluster(api, 2)
    scaling_in = await act(api, cluster_id, {"scale_in": {"count": 1}})
    assert scaling_in.status_code == 202, scaling_in.text  # its victim waits on the hook
    node = (await nodes_of(api, cluster_id))[0]

    refused = await api.post(f"/v1/nodes/{node['id']}/actions", json={"check": {}})

    assert_error(refused, 409, "NODE_CHECK for cluster")
    assert_error(refused, 409, "cannot be completed because it is already locked.")
