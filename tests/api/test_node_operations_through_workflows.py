"""Senlin's node and cluster operations (API 1.4) on simcloud's servers, end to end."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.test_clusters_through_workflows import PROFILE, act, action_done, action_id_of
from tests.api.test_stacks_api import assert_error
from tests.support.warden_in_process import InProcessWarden

V14 = {"OpenStack-API-Version": "clustering 1.4"}


async def _ops(api: httpx.AsyncClient, path: str, body: dict[str, Any]) -> httpx.Response:
    return await api.post(path, json=body, headers=V14)


async def _status(warden: InProcessWarden, physical_id: str) -> str:
    return (await warden.cloud.compute.get_server(physical_id)).status


async def test_operations_run_on_a_standalone_node_and_on_members(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    made = await api.post("/v1/nodes", json={"node": {"name": "solo", "profile_id": profile["id"]}})
    assert (await action_done(api, action_id_of(made)))["status"] == "SUCCEEDED"
    node = (await api.get(f"/v1/nodes/{made.json()['node']['id']}")).json()["node"]

    stopped = await _ops(api, f"/v1/nodes/{node['id']}/ops", {"stop": {}})
    assert (await action_done(api, action_id_of(stopped)))["status"] == "SUCCEEDED"
    assert await _status(running_warden, node["physical_id"]) == "SHUTOFF"
    started = await _ops(api, f"/v1/nodes/{node['id']}/ops", {"start": {}})
    assert (await action_done(api, action_id_of(started)))["status"] == "SUCCEEDED"
    assert await _status(running_warden, node["physical_id"]) == "ACTIVE"

    body = {"name": "web", "profile_id": profile["id"], "desired_capacity": 2}
    created = await api.post("/v1/clusters", json={"cluster": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    cluster_id = created.json()["cluster"]["id"]
    rebooted = await _ops(
        api, f"/v1/clusters/{cluster_id}/ops", {"reboot": {"params": {"type": "HARD"}}}
    )
    done = await action_done(api, action_id_of(rebooted))
    assert (done["action"], done["status"]) == ("CLUSTER_OPERATION", "SUCCEEDED")
    members = (await api.get("/v1/nodes", params={"cluster_id": cluster_id})).json()["nodes"]
    paused = await _ops(api, f"/v1/nodes/{members[0]['id']}/ops", {"pause": {}})
    assert (await action_done(api, action_id_of(paused)))["status"] == "SUCCEEDED"
    assert await _status(running_warden, members[0]["physical_id"]) == "PAUSED"
    assert await _status(running_warden, members[1]["physical_id"]) == "ACTIVE"

    # While the cluster is locked (maintenance), operations are refused.
    locked = await act(api, cluster_id, {"lock": {"reason": "patching", "owner": "ops"}})
    await action_done(api, action_id_of(locked))
    refused = await _ops(api, f"/v1/clusters/{cluster_id}/ops", {"unpause": {}})
    assert_error(refused, 409, "locked by ops (patching)")


async def test_operation_refusals_are_senlins(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    old = await api.post(
        "/v1/nodes/x/ops", json={"reboot": {}}, headers={"OpenStack-API-Version": "clustering 1.3"}
    )
    assert_error(old, 400, "API version '1.3' is not supported on this method.")
    assert_error(await _ops(api, "/v1/nodes/x/ops", {}), 400, "No operation specified.")
    assert_error(
        await _ops(api, "/v1/nodes/x/ops", {"a": {}, "b": {}}),
        400,
        "Multiple operations specified.",
    )
    assert_error(await _ops(api, "/v1/nodes/x/ops", {"dance": {}}), 404, "The node 'x' could not")
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    made = await api.post("/v1/nodes", json={"node": {"name": "solo", "profile_id": profile["id"]}})
    await action_done(api, action_id_of(made))
    node_ops = f"/v1/nodes/{made.json()['node']['id']}/ops"
    assert_error(
        await _ops(api, node_ops, {"dance": {}}),
        400,
        "The requested operation 'dance' is not supported by the profile type "
        "'os.nova.server-1.0'.",
    )
    assert_error(
        await _ops(api, node_ops, {"reboot": {"type": "Unknown"}}),
        400,
        "'Unknown' must be one of the allowed values: SOFT, HARD.",
    )
    assert_error(await _ops(api, node_ops, {"evacuate": {}}), 400, "not supported by Warden")

    listed = await api.get("/v1/profile-types/os.nova.server-1.0/ops", headers=V14)
    assert listed.status_code == 200, listed.text
    operations = listed.json()["operations"]
    assert {"reboot", "change_password", "stop"} <= set(operations)
    assert set(operations["change_password"]) == {"description", "parameters"}
