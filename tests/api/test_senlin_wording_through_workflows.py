"""Clustering API answers as Senlin gives them: ambiguous names, cluster updates of
name, metadata, timeout and config, `profile_only`, binding ids, free `check`
parameters, and events shown one by one."""

from __future__ import annotations

from typing import Any

import httpx

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


async def _cluster(api: httpx.AsyncClient, name: str, profile_id: str, **extra: Any) -> str:
    body = {"name": name, "profile_id": profile_id, "desired_capacity": 1, **extra}
    created = await api.post("/v1/clusters", json={"cluster": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    cluster_id: str = created.json()["cluster"]["id"]
    return cluster_id


async def test_an_ambiguous_name_is_senlins_400(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    for _ in range(2):
        await _cluster(api, "c-01", profile["id"])
    message = "Multiple results found matching the query criteria 'c-01'. Please be more specific."
    assert_error(await api.get("/v1/clusters/c-01"), 400, message)
    assert_error(await api.delete("/v1/clusters/c-01"), 400, message)


async def test_a_cluster_update_changes_properties_at_once(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    cluster_id = await _cluster(api, "web", profile["id"], timeout=120)
    assert (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["timeout"] == 120

    changes = {"name": "web-2", "metadata": {"k2": "v2"}, "timeout": 240}
    updated = await api.patch(f"/v1/clusters/{cluster_id}", json={"cluster": changes})
    assert (await action_done(api, action_id_of(updated)))["status"] == "SUCCEEDED"
    shown = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert (shown["name"], shown["metadata"], shown["timeout"]) == ("web-2", {"k2": "v2"}, 240)

    for body, message in (
        ({}, "Malformed request data, missing 'cluster' key in request body."),
        ({"cluster": {}}, "No property needs an update."),
        ({"cluster": {"bad": 1}}, "Additional properties are not allowed"),
    ):
        assert_error(await api.patch(f"/v1/clusters/{cluster_id}", json=body), 400, message)


async def test_profile_only_moves_the_cluster_not_its_nodes(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    old = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    new = (await api.post("/v1/profiles", json={"profile": {**PROFILE, "name": "bigger"}})).json()[
        "profile"
    ]
    cluster_id = await _cluster(api, "web", old["id"])
    body = {"cluster": {"profile_id": new["id"], "profile_only": True}}
    v16 = {"OpenStack-API-Version": "clustering 1.6"}  # below it, Senlin ignores the flag
    updated = await api.patch(f"/v1/clusters/{cluster_id}", json=body, headers=v16)
    assert (await action_done(api, action_id_of(updated)))["status"] == "SUCCEEDED"
    assert (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["profile_id"] == new[
        "id"
    ]
    [node] = (await api.get("/v1/nodes", params={"cluster_id": cluster_id})).json()["nodes"]
    assert node["profile_id"] == old["id"]


async def test_bindings_have_ids_and_check_takes_any_parameters(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await cluster_with(api, 1, DELETION)
    [binding] = (await api.get(f"/v1/clusters/{cluster_id}/policies")).json()["cluster_policies"]
    again = (await api.get(f"/v1/clusters/{cluster_id}/policies")).json()["cluster_policies"]
    assert binding["id"] and again[0]["id"] == binding["id"]

    checked = await act(api, cluster_id, {"check": {"k1": "v1"}})
    assert (await action_done(api, action_id_of(checked)))["status"] == "SUCCEEDED"
    refused = await act(api, cluster_id, {"recover": {"k1": "v1"}})
    assert_error(refused, 400, "Action parameter ['k1'] is not recognizable.")
    assert_error(await act(api, "ghost", {"recover": {"k1": "v1"}}), 404, "'ghost'")

    events = (await api.get("/v1/events", params={"oid": cluster_id})).json()["events"]
    shown = await api.get(f"/v1/events/{events[0]['id']}")
    assert shown.status_code == 200 and shown.json()["event"]["id"] == events[0]["id"]
    assert_error(await api.get("/v1/events/nope"), 404, "The event 'nope' could not be found.")
    assert_error(
        await api.get("/v1/events", params={"level": "bad-level"}),
        400,
        "Field value bad-level is invalid",
    )
    assert_error(
        await api.get("/v1/events", params={"action": "bad-action"}),
        400,
        "Field value bad-action is invalid",
    )
    for action in ("CLUSTER_CREATE", "RECOVER_my-fix"):  # Senlin's, and Warden's own
        assert (await api.get("/v1/events", params={"action": action})).status_code == 200
    by_action = await api.get(
        "/v1/events", params={"oid": cluster_id, "action": events[0]["action"]}
    )
    assert events[0]["id"] in {e["id"] for e in by_action.json()["events"]}


async def test_complete_lifecycle_of_an_action_without_a_hook_is_a_no_op(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    cluster_id = await _cluster(api, "web", profile["id"])
    scaled = action_id_of(await act(api, cluster_id, {"scale_out": {"count": "1"}}))
    await action_done(api, scaled)
    done = await act(api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": scaled}})
    assert done.status_code == 202, done.text
    unknown = await act(api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": "x"}})
    assert_error(unknown, 404, "The lifecycle action token 'x' could not be found")


async def test_a_standalone_node_moves_to_another_profile(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    old = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    new = (await api.post("/v1/profiles", json={"profile": {**PROFILE, "name": "bigger"}})).json()[
        "profile"
    ]
    made = await api.post("/v1/nodes", json={"node": {"name": "solo", "profile_id": old["id"]}})
    await action_done(api, action_id_of(made))
    node_id = made.json()["node"]["id"]
    moved = await api.patch(f"/v1/nodes/{node_id}", json={"node": {"profile_id": new["id"]}})
    assert (await action_done(api, action_id_of(moved)))["status"] == "SUCCEEDED"
    assert (await api.get(f"/v1/nodes/{node_id}")).json()["node"]["profile_id"] == new["id"]
    missing = await api.patch(f"/v1/nodes/{node_id}", json={"node": {"profile_id": "ghost"}})
    assert_error(missing, 400, "The specified profile 'ghost' could not be found.")
    refused = await api.delete(f"/v1/profiles/{new['id']}")
    assert_error(refused, 409, "still referenced by some clusters and/or nodes")


async def test_an_action_update_is_checked_as_senlin_checks_it(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    created = await api.post(
        "/v1/clusters",
        json={"cluster": {"name": "c-up", "profile_id": profile["id"], "desired_capacity": 0}},
    )
    action_id = action_id_of(created)
    assert (await action_done(api, action_id))["status"] == "SUCCEEDED"
    latest = {"OpenStack-API-Version": "clustering 1.12"}

    def patch(target: str, body: object, **extra: Any) -> Any:
        return api.patch(f"/v1/actions/{target}", json=body, headers=latest, **extra)

    cancel = {"action": {"status": "CANCELLED"}}
    assert_error(
        await api.patch(f"/v1/actions/{action_id}", json=cancel),
        400,
        "API version '1.0' is not supported on this method.",
    )
    assert_error(await patch("nope", cancel), 404, "The action 'nope' could not be found.")
    assert_error(
        await patch(action_id, {"action": {"status": "invalid"}}),
        400,
        f"Unknown status invalid for action {action_id}",
    )
    assert_error(await patch(action_id, {"status": "CANCELLED"}), 400, "missing 'action' key")
    assert_error(
        await patch(action_id, cancel, params={"force": "maybe"}),
        400,
        "Invalid value 'maybe' specified for 'force'",
    )
    assert_error(
        await patch(action_id, cancel),
        409,
        f"Action ({action_id[:8]}) is in status (SUCCEEDED) while expected status must be "
        "one of (INIT, WAITING, READY, RUNNING, WAITING_LIFECYCLE_COMPLETION).",
    )
