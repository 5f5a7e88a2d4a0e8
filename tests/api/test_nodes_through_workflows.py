"""`/v1/nodes` end to end: standalone nodes, members created by name, and the cluster
actions that move nodes in (`add_nodes`) and out (`del_nodes`), with Senlin's 400s."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from domain.errors import BackendNotFound
from tests.api.test_clusters_through_workflows import (
    DELETION,
    PROFILE,
    act,
    action_done,
    action_id_of,
    cluster_with,
)
from tests.api.test_stacks_api import assert_error
from tests.support.warden_in_process import InProcessWarden


async def _profile(api: httpx.AsyncClient) -> str:
    created = await api.post("/v1/profiles", json={"profile": PROFILE})
    profile_id: str = created.json()["profile"]["id"]
    return profile_id


async def _node(api: httpx.AsyncClient, profile_id: str, **extra: Any) -> dict[str, Any]:
    body = {"name": "solo", "profile_id": profile_id, **extra}
    created = await api.post("/v1/nodes", json={"node": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    node: dict[str, Any] = (await api.get(f"/v1/nodes/{created.json()['node']['id']}")).json()[
        "node"
    ]
    return node


async def _cluster(api: httpx.AsyncClient, profile_id: str, size: int, **extra: Any) -> str:
    body = {"name": "web", "profile_id": profile_id, "desired_capacity": size, **extra}
    created = await api.post("/v1/clusters", json={"cluster": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    cluster_id: str = created.json()["cluster"]["id"]
    return cluster_id


async def test_a_standalone_node_lives_updates_and_dies_on_its_own(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile_id = await _profile(api)
    node = await _node(api, profile_id, role="db", metadata={"tier": 1})
    assert (node["cluster_id"], node["status"], node["role"]) == ("", "ACTIVE", "db")
    assert node["metadata"] == {"tier": 1}
    server = await running_warden.cloud.compute.get_server(node["physical_id"])
    assert server is not None and server.name == "solo"

    changed = await api.patch(f"/v1/nodes/{node['id']}", json={"node": {"name": "solo-2"}})
    assert changed.status_code == 202, changed.text
    assert changed.json()["node"]["name"] == "solo-2"
    assert (await action_done(api, action_id_of(changed)))["status"] == "SUCCEEDED"

    recovered = await api.post(
        f"/v1/nodes/{node['id']}/actions", json={"recover": {"operation": "REBOOT"}}
    )
    assert (await action_done(api, action_id_of(recovered)))["status"] == "SUCCEEDED"

    deleted = await api.delete(f"/v1/nodes/{node['id']}")
    assert (await action_done(api, action_id_of(deleted)))["status"] == "SUCCEEDED"
    assert (await api.get(f"/v1/nodes/{node['id']}")).status_code == 404
    with pytest.raises(BackendNotFound):
        await running_warden.cloud.compute.get_server(node["physical_id"])


async def test_a_node_created_in_a_cluster_grows_it_by_one(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile_id = await _profile(api)
    cluster_id = await _cluster(api, profile_id, 1)
    node = await _node(api, profile_id, cluster_id=cluster_id, role="member")
    assert (node["cluster_id"], node["name"], node["role"]) == (cluster_id, "solo", "member")
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert cluster["desired_capacity"] == 2 and node["id"] in cluster["nodes"]


async def test_add_nodes_and_del_nodes_move_a_node_in_and_out(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile_id = await _profile(api)
    cluster_id = await _cluster(api, profile_id, 1)
    node = await _node(api, profile_id)

    added = await act(api, cluster_id, {"add_nodes": {"nodes": [node["name"]]}})
    assert (await action_done(api, action_id_of(added)))["status"] == "SUCCEEDED"
    member = (await api.get(f"/v1/nodes/{node['id']}")).json()["node"]
    assert member["cluster_id"] == cluster_id

    again = await act(api, cluster_id, {"add_nodes": {"nodes": [node["id"]]}})
    assert_error(again, 400, f"Nodes ['{node['id']}'] already owned by some cluster.")

    removed = await act(api, cluster_id, {"del_nodes": {"nodes": [node["id"]]}})
    assert (await action_done(api, action_id_of(removed)))["status"] == "SUCCEEDED"
    left = (await api.get(f"/v1/nodes/{node['id']}")).json()["node"]
    assert (left["cluster_id"], left["physical_id"]) == ("", node["physical_id"])
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert cluster["desired_capacity"] == 1 and node["id"] not in cluster["nodes"]


async def test_node_lists_in_cluster_actions_get_senlins_400s(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    for body, message in (
        ({"add_nodes": {}}, "Value for 'nodes' must have at least 1 item(s)."),
        ({"add_nodes": {"nodes": []}}, "Value for 'nodes' must have at least 1 item(s)."),
        ({"add_nodes": {"nodes": ["a", "a"]}}, "Items for 'nodes' must be unique"),
        ({"del_nodes": {"nodes": "node_id"}}, "Items for 'nodes' must be unique"),
        (
            {"del_nodes": {"nodes": ["x"], "destroy_after_deletion": "maybe"}},
            "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', "
            "'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
        ),
    ):
        assert_error(await act(api, "no-such-cluster", body), 400, message)
    profile_id = await _profile(api)
    cluster_id = await _cluster(api, profile_id, 1, min_size=1)
    missing = await act(api, cluster_id, {"add_nodes": {"nodes": ["ghost"]}})
    assert_error(missing, 400, "Nodes not found: ['ghost'].")
    [member] = (await api.get("/v1/nodes", params={"cluster_id": cluster_id})).json()["nodes"]
    below = await act(api, cluster_id, {"del_nodes": {"nodes": [member["id"]]}})
    assert_error(below, 400, "The target capacity (0) is less than the cluster's min_size (1).")


async def test_node_create_refusals_are_senlins(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    profile_id = await _profile(api)
    for body, status, message in (
        ({}, 400, "Request body missing 'node' key."),
        ({"node": {"profile_id": profile_id}}, 400, "'name' is a required property"),
        ({"node": {"name": "n"}}, 400, "'profile_id' is a required property"),
        ({"node": {"name": "n", "profile_id": "nope"}}, 400, "The specified profile 'nope'"),
        (
            {"node": {"name": "n", "profile_id": profile_id, "cluster_id": "nope"}},
            400,
            "The specified cluster 'nope' could not be found.",
        ),
        (
            {"node": {"name": "n", "profile_id": profile_id, "boo": 1}},
            400,
            "Additional properties are not allowed",
        ),
    ):
        assert_error(await api.post("/v1/nodes", json=body), status, message)


async def test_replace_nodes_swaps_members_with_senlins_checks(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    for nodes, message in (
        ([], "The data provided is not a map"),
        ({}, "The data provided is not a map"),
        ({"a": None}, "Field `nodes[a]' cannot be None"),
        ({"a": "n", "b": "n"}, "Map contains duplicated values"),
    ):
        refused = await act(api, "no-such-cluster", {"replace_nodes": {"nodes": nodes}})
        assert_error(refused, 400, message)
    profile_id = await _profile(api)
    cluster_id = await _cluster(api, profile_id, 1)
    [member] = (await api.get("/v1/nodes", params={"cluster_id": cluster_id})).json()["nodes"]
    spare = await _node(api, profile_id)
    for nodes, message in (
        ({"ghost": spare["id"]}, "Original nodes not found: ['ghost']."),
        ({member["id"]: "ghost"}, "Replacement nodes not found: ['ghost']."),
        (
            {spare["id"]: member["id"]},
            f"The specified nodes ['{spare['id']}'] to be replaced are not members of the "
            f"cluster {cluster_id}.\nNodes ['{member['id']}'] already member of a cluster.",
        ),
    ):
        refused = await act(api, cluster_id, {"replace_nodes": {"nodes": nodes}})
        assert_error(refused, 400, message)

    swapped = await act(api, cluster_id, {"replace_nodes": {"nodes": {member["id"]: "solo"}}})
    assert (await action_done(api, action_id_of(swapped)))["status"] == "SUCCEEDED"
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert cluster["nodes"] == [spare["id"]]
    left = (await api.get(f"/v1/nodes/{member['id']}")).json()["node"]
    assert (left["cluster_id"], left["physical_id"]) == ("", member["physical_id"])


async def test_policy_update_switches_a_bound_policy_off_and_on(
    running_warden: InProcessWarden,
) -> None:
    """With the deletion policy disabled, `del_nodes` takes Senlin's default again
    (the node leaves standalone); a policy not bound, or unknown, is Senlin's 400."""
    api = running_warden.api
    cluster_id = await cluster_with(api, 2, DELETION)
    [policy] = (await api.get("/v1/policies")).json()["policies"]
    for body, message in (
        ({"policy_id": policy["id"], "enabled": "not-bool"}, "Unrecognized value 'not-bool'"),
        ({}, "'policy_id' is a required property"),
        ({"policy_id": "ghost"}, "The specified policy 'ghost' could not be found."),
    ):
        assert_error(await act(api, cluster_id, {"policy_update": body}), 400, message)

    off = await act(
        api, cluster_id, {"policy_update": {"policy_id": policy["id"], "enabled": "no"}}
    )
    assert (await action_done(api, action_id_of(off)))["status"] == "SUCCEEDED"
    [binding] = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["policies"]
    assert binding["enabled"] is False

    [victim, _] = (await api.get("/v1/nodes", params={"cluster_id": cluster_id})).json()["nodes"]
    removed = await act(api, cluster_id, {"del_nodes": {"nodes": [victim["id"]]}})
    assert (await action_done(api, action_id_of(removed)))["status"] == "SUCCEEDED"
    assert (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]["cluster_id"] == ""

    other = await _cluster(api, await _profile(api), 0)
    unbound = await act(api, other, {"policy_update": {"policy_id": policy["id"]}})
    assert_error(
        unbound,
        400,
        f"The policy '{policy['id']}' is not attached to the specified cluster '{other}'.",
    )
