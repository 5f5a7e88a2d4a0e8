"""Cluster routes followed into the cluster, scale-in and node-deletion workflows.

A deletion policy with a Zaqar lifecycle hook makes each scale-in victim wait; the
tests answer the hook through the API (or let it time out) and skip Temporal time
instead of sleeping: a 300 s hook timeout passes in milliseconds.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx

from activities.cloud.collections import collection
from tests.api.test_stacks_api import assert_error
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

HOOK_TIMEOUT = timedelta(seconds=300)
QUEUE = "lifecycle"
PROFILE = {
    "name": "small",
    "spec": {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": "cirros"},
    },
}
DELETION = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {
        "criteria": "OLDEST_FIRST",
        "hooks": {
            "type": "zaqar",
            "params": {"queue": QUEUE},
            "timeout": int(HOOK_TIMEOUT.total_seconds()),
        },
    },
}


async def action_done(api: httpx.AsyncClient, action_id: str) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        action: dict[str, Any] = (await api.get(f"/v1/actions/{action_id}")).json()["action"]
        return action if action["status"] in ("SUCCEEDED", "FAILED") else None

    return await eventually(done, timeout=30, what=f"action {action_id} finished")


async def act(api: httpx.AsyncClient, cluster_id: str, body: dict[str, Any]) -> httpx.Response:
    return await api.post(f"/v1/clusters/{cluster_id}/actions", json=body)


def action_id_of(accepted: httpx.Response) -> str:
    assert accepted.status_code == 202, accepted.text
    return accepted.headers["Location"].rsplit("/", 1)[-1]


async def cluster_with(
    api: httpx.AsyncClient,
    size: int,
    *policies: dict[str, Any],
    profile: dict[str, Any] | None = None,
) -> str:
    """A cluster of `size` ACTIVE nodes of `profile` (PROFILE by default), with each
    policy spec attached."""
    made = await api.post("/v1/profiles", json={"profile": profile or PROFILE})
    assert made.status_code == 201, made.text
    body = {"name": "web", "profile_id": made.json()["profile"]["id"], "desired_capacity": size}
    created = await api.post("/v1/clusters", json={"cluster": body})
    cluster_id: str = created.json()["cluster"]["id"]
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    for number, spec in enumerate(policies):
        policy = await api.post(
            "/v1/policies", json={"policy": {"name": f"p{number}", "spec": spec}}
        )
        assert policy.status_code == 201, policy.text
        attach = {"policy_attach": {"policy_id": policy.json()["policy"]["id"]}}
        attached = await act(api, cluster_id, attach)
        assert (await action_done(api, action_id_of(attached)))["status"] == "SUCCEEDED"
    return cluster_id


async def hooked_cluster(api: httpx.AsyncClient, size: int = 2) -> str:
    """A cluster of `size` ACTIVE nodes with the hooked deletion policy attached."""
    return await cluster_with(api, size, DELETION)


async def nodes_of(api: httpx.AsyncClient, cluster_id: str) -> list[dict[str, Any]]:
    listed = await api.get("/v1/nodes", params={"cluster_id": cluster_id})
    nodes: list[dict[str, Any]] = listed.json()["nodes"]
    return nodes


async def waiting_victim(api: httpx.AsyncClient, parent_id: str) -> dict[str, Any]:
    """The NODE_DELETE action (its id is the lifecycle token) waiting on its hook, once
    its lifecycle shows (listed as waiting, the query answering may lag under load)."""

    async def waiting() -> dict[str, Any] | None:
        listed = await api.get("/v1/actions", params={"status": "WAITING_LIFECYCLE_COMPLETION"})
        found = [a for a in listed.json()["actions"] if parent_id in (a["depended_by"] or [])]
        if not found:
            return None
        shown: dict[str, Any] = (await api.get(f"/v1/actions/{found[0]['id']}")).json()["action"]
        return shown if shown["lifecycle"]["available"] is True else None

    return await eventually(waiting, timeout=30, what=f"a victim of {parent_id} waiting")


def deadline_of(action: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(action["lifecycle"]["deadline"])


async def server_ids(warden: InProcessWarden) -> set[str]:
    return {s.id for s in await warden.cloud.compute.list_servers()}


async def test_scale_in_waits_on_the_hook_until_complete_lifecycle_then_deletes_the_node(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await hooked_cluster(api)
    victim = min(await nodes_of(api, cluster_id), key=lambda n: n["name"])  # OLDEST_FIRST
    scale_in = action_id_of(await act(api, cluster_id, {"scale_in": {"count": 1}}))
    token = await waiting_victim(api, scale_in)
    assert token["target"] == victim["id"]
    [message] = [m.body for m in await running_warden.cloud.messaging.list_messages(QUEUE)]
    assert message["lifecycle_action_token"] == token["id"]
    assert message["complete_url"] == f"http://api/v1/clusters/{cluster_id}/actions"

    await running_warden.skip(HOOK_TIMEOUT * 2 / 3)  # most of the timeout: still waiting
    assert (await api.get(f"/v1/actions/{scale_in}")).json()["action"]["status"] == "WAITING"
    complete = {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
    completed = await act(api, cluster_id, complete)
    assert action_id_of(completed) == token["id"]

    done = await action_done(api, token["id"])
    assert done["status"] == "SUCCEEDED" and "complete_lifecycle" in done["status_reason"]
    assert (await action_done(api, scale_in))["status"] == "SUCCEEDED"
    assert victim["id"] not in {n["id"] for n in await nodes_of(api, cluster_id)}
    assert victim["physical_id"] not in await server_ids(running_warden)
    assert len(await nodes_of(api, cluster_id)) == 1


async def test_heartbeat_moves_the_hook_deadline_and_the_timeout_then_deletes_the_node(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await hooked_cluster(api)
    scale_in = action_id_of(await act(api, cluster_id, {"scale_in": {"count": 1}}))
    token = await waiting_victim(api, scale_in)
    first_deadline = deadline_of(token)

    await running_warden.skip(HOOK_TIMEOUT / 2)
    beat = await act(
        api, cluster_id, {"heartbeat_lifecycle": {"lifecycle_action_token": token["id"]}}
    )
    assert action_id_of(beat) == token["id"]
    beaten = (await api.get(f"/v1/actions/{token['id']}")).json()["action"]
    assert beaten["lifecycle"]["heartbeats"] == 1
    assert deadline_of(beaten) >= first_deadline + HOOK_TIMEOUT / 2

    await running_warden.skip(HOOK_TIMEOUT * 3 / 4)  # past the first deadline only
    still = (await api.get(f"/v1/actions/{token['id']}")).json()["action"]
    assert still["status"] == "WAITING_LIFECYCLE_COMPLETION", still

    await running_warden.skip(HOOK_TIMEOUT)  # past the moved deadline
    done = await action_done(api, token["id"])
    assert done["status"] == "SUCCEEDED" and "timed out" in done["status_reason"], done
    assert (await action_done(api, scale_in))["status"] == "SUCCEEDED"
    assert token["target"] not in {n["id"] for n in await nodes_of(api, cluster_id)}


async def test_operations_the_cluster_rejects_answer_the_documented_errors(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await hooked_cluster(api, size=1)
    scale_in = action_id_of(await act(api, cluster_id, {"scale_in": {"count": 1}}))
    token = await waiting_victim(api, scale_in)
    busy = await act(api, cluster_id, {"scale_out": {"count": 1}})
    assert_error(
        busy,
        409,
        f"CLUSTER_SCALE_OUT for cluster '{cluster_id}' cannot be completed because it is "
        "already locked.",
    )
    complete = {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
    assert action_id_of(await act(api, cluster_id, complete)) == token["id"]
    assert (await action_done(api, scale_in))["status"] == "SUCCEEDED"

    locked = await act(api, cluster_id, {"lock": {"reason": "patching", "owner": "ops"}})
    assert (await action_done(api, action_id_of(locked)))["status"] == "SUCCEEDED"
    refused = await act(api, cluster_id, {"scale_out": {"count": 1}})
    assert_error(refused, 409, "locked by ops (patching)")
    unlocked = await act(api, cluster_id, {"unlock": {}})
    assert (await action_done(api, action_id_of(unlocked)))["status"] == "SUCCEEDED"
    grown = await act(api, cluster_id, {"scale_out": {"count": 1}})
    assert (await action_done(api, action_id_of(grown)))["status"] == "SUCCEEDED"
    assert len(await nodes_of(api, cluster_id)) == 1


async def test_recover_takes_senlins_check_flags(running_warden: InProcessWarden) -> None:
    """What `openstack cluster recover [--check true]` and `openstack cluster node recover
    --check true` send; `check_capacity` is refused with what to do instead."""
    api = running_warden.api
    cluster_id = await hooked_cluster(api, size=1)
    for body in ({"recover": {"check": False}}, {"recover": {"check": True}}):
        accepted = await act(api, cluster_id, body)
        assert (await action_done(api, action_id_of(accepted)))["status"] == "SUCCEEDED"
    [node] = await nodes_of(api, cluster_id)
    one = await api.post(f"/v1/nodes/{node['id']}/actions", json={"recover": {"check": True}})
    assert (await action_done(api, action_id_of(one)))["status"] == "SUCCEEDED"
    refused = await act(api, cluster_id, {"recover": {"check_capacity": True}})
    assert_error(refused, 400, "check_capacity: not supported")
    assert_error(await act(api, cluster_id, {"recover": {"check": "maybe"}}), 400, "check")


async def test_a_webhook_receiver_scales_the_cluster_when_its_url_is_called(
    running_warden: InProcessWarden,
) -> None:
    """Senlin's receiver: the alarm URL needs no token, ignores the alarm's own fields,
    and a locked cluster refuses it like any scaling signal."""
    api = running_warden.api
    cluster_id = await hooked_cluster(api, size=0)
    body = {
        "name": "grow",
        "cluster_id": "web",
        "action": "CLUSTER_SCALE_OUT",
        "params": {"count": 1},
    }
    created = await api.post("/v1/receivers", json={"receiver": body})
    assert created.status_code == 201, created.text
    receiver = created.json()["receiver"]
    url = httpx.URL(receiver["channel"]["alarm_url"])
    assert url.path == f"/v1/webhooks/{receiver['id']}/trigger" and url.params["count"] == "1"
    assert (await api.get("/v1/receivers/grow")).json()["receiver"]["id"] == receiver["id"]

    alarm = {"alarm_name": "cpu high", "current": "alarm", "previous": "ok"}
    fired = await api.post(url.path, json=alarm, headers={"X-Auth-Token": ""})
    assert (await action_done(api, action_id_of(fired)))["status"] == "SUCCEEDED"
    assert len(await nodes_of(api, cluster_id)) == 1
    twice = await api.post(url.path, json={"params": {"count": "2"}}, headers={"X-Auth-Token": ""})
    assert (await action_done(api, action_id_of(twice)))["status"] == "SUCCEEDED"
    assert len(await nodes_of(api, cluster_id)) == 3

    locked = await act(api, cluster_id, {"lock": {"reason": "patching"}})
    assert (await action_done(api, action_id_of(locked)))["status"] == "SUCCEEDED"
    assert_error(await api.post(url.path, headers={"X-Auth-Token": ""}), 409, "locked")
    assert_error(
        await api.post(url.path, json={"count": "many"}, headers={"X-Auth-Token": ""}), 400, "count"
    )

    receiver_url = f"/v1/receivers/{receiver['id']}"
    changed = await api.patch(
        receiver_url, json={"receiver": {"name": "shrink", "action": "CLUSTER_SCALE_IN"}}
    )
    assert changed.status_code == 200, changed.text
    shown = (await api.get(receiver_url)).json()["receiver"]
    assert (shown["name"], shown["action"], shown["params"]) == (
        "shrink",
        "CLUSTER_SCALE_IN",
        {"count": 1},
    )
    assert shown["channel"] == receiver["channel"]  # the same URL
    bad = {"receiver": {"action": "CLUSTER_DELETE"}}
    assert_error(await api.patch(receiver_url, json=bad), 400, "cannot be run by a receiver")
    assert_error(await api.patch(receiver_url, json={}), 400, "missing 'receiver' key")

    assert (await api.delete(receiver_url)).status_code == 204
    assert_error(await api.post(url.path, headers={"X-Auth-Token": ""}), 404, "webhook")
    unknown = {**body, "cluster_id": "nope"}
    assert_error(
        await api.post("/v1/receivers", json={"receiver": unknown}),
        400,
        "The specified cluster 'nope' could not be found.",
    )
    message = {**body, "type": "message"}
    assert_error(await api.post("/v1/receivers", json={"receiver": message}), 400, "message")


async def test_a_scaling_policy_sizes_a_scale_without_a_count(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    grow = {
        "type": "senlin.policy.scaling",
        "version": "1.0",
        "properties": {
            "event": "CLUSTER_SCALE_OUT",
            "adjustment": {"type": "EXACT_CAPACITY", "number": 4},
        },
    }
    cluster_id = await cluster_with(api, 1, grow)

    out = await act(api, cluster_id, {"scale_out": {"count": None}})
    assert (await action_done(api, action_id_of(out)))["status"] == "SUCCEEDED"
    assert len(await nodes_of(api, cluster_id)) == 4  # to the exact capacity: 3 more
    # at the exact capacity the policy has nothing to add: Senlin's action fails
    again = await act(api, cluster_id, {"scale_out": {}})
    refused = await action_done(api, action_id_of(again))
    assert (refused["status"], refused["status_reason"]) == (
        "FAILED",
        "Policy check failure: Failed policy 'p0': Invalid count (0) for action "
        "'CLUSTER_SCALE_OUT'.",
    )
    shown = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert (shown["status"], shown["desired_capacity"]) == ("ACTIVE", 4)
    shrink = await act(api, cluster_id, {"scale_in": {}})
    assert (await action_done(api, action_id_of(shrink)))["status"] == "SUCCEEDED"
    assert len(await nodes_of(api, cluster_id)) == 3  # no scale-in policy: one


async def test_a_zone_placement_policy_spreads_servers_and_takes_victims_zone_by_zone(
    running_warden: InProcessWarden,
) -> None:
    api, compute = running_warden.api, running_warden.cloud.compute
    spread = {
        "type": "senlin.policy.zone_placement",
        "version": "1.0",
        "properties": {"zones": [{"name": "nova"}, {"name": "az-2", "weight": 100}]},
    }
    cluster_id = await cluster_with(api, 0, spread)

    async def zones() -> list[str]:
        found = []
        for n in await nodes_of(api, cluster_id):
            shown = await running_warden.cloud.collections.show(
                collection("server"), n["physical_id"]
            )
            found.append(shown["OS-EXT-AZ:availability_zone"])
        return sorted(found)

    grown = await act(api, cluster_id, {"scale_out": {"count": 4}})
    assert (await action_done(api, action_id_of(grown)))["status"] == "SUCCEEDED"
    assert await zones() == ["az-2", "az-2", "nova", "nova"]
    shrunk = await act(api, cluster_id, {"scale_in": {"count": 2}})
    assert (await action_done(api, action_id_of(shrunk)))["status"] == "SUCCEEDED"
    assert await zones() == ["az-2", "nova"]
    live = {s.id for s in await compute.list_servers()}
    assert {n["physical_id"] for n in await nodes_of(api, cluster_id)} <= live


async def test_an_affinity_policy_places_new_servers_by_its_server_group(
    running_warden: InProcessWarden,
) -> None:
    """simcloud here has two compute hosts. The attach makes an anti-affinity group;
    two new nodes land on hosts of their own, a third finds none (Nova's words); a
    detach deletes the group the attach made."""
    api, objects = running_warden.api, running_warden.cloud.collections
    apart = {"type": "senlin.policy.affinity", "version": "1.0", "properties": {}}
    cluster_id = await cluster_with(api, 0, apart)
    [bound] = (await api.get(f"/v1/clusters/{cluster_id}/policies")).json()["cluster_policies"]
    [group] = await objects.list(collection("server_group"), {})
    assert (group["name"].startswith("server_group_"), group["policy"]) == (True, "anti-affinity")

    grown = await act(api, cluster_id, {"scale_out": {"count": 2}})
    assert (await action_done(api, action_id_of(grown)))["status"] == "SUCCEEDED"
    nodes = await nodes_of(api, cluster_id)
    hosts = {(await objects.show(collection("server"), n["physical_id"]))["hostId"] for n in nodes}
    assert len(hosts) == 2
    assert (await objects.show(collection("server_group"), group["id"]))["members"]
    crowded = await act(api, cluster_id, {"scale_out": {"count": 1}})
    failed = await action_done(api, action_id_of(crowded))
    assert failed["status"] == "FAILED"
    assert "No valid host was found" in failed["status_reason"]

    detach = await act(api, cluster_id, {"policy_detach": {"policy_id": bound["policy_id"]}})
    assert (await action_done(api, action_id_of(detach)))["status"] == "SUCCEEDED"
    assert await objects.list(collection("server_group"), {}) == []


async def test_an_affinity_policy_inherits_a_named_group_only_when_its_policy_matches(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    shared = await objects.create(
        collection("server_group"), {"name": "shared", "policy": "anti-affinity"}
    )
    together = {
        "type": "senlin.policy.affinity",
        "version": "1.0",
        "properties": {"servergroup": {"name": "shared", "policies": "affinity"}},
    }
    made = await api.post("/v1/policies", json={"policy": {"name": "t", "spec": together}})
    cluster_id = await cluster_with(api, 0)
    attach = {"policy_attach": {"policy_id": made.json()["policy"]["id"]}}
    refused = await action_done(api, action_id_of(await act(api, cluster_id, attach)))
    assert refused["status"] == "FAILED"
    assert refused["status_reason"].endswith(
        "Policies specified (affinity) doesn't match that of the existing servergroup "
        "(anti-affinity)."
    ), refused["status_reason"]

    apart = {**together, "properties": {"servergroup": {"name": "shared"}}}
    made = await api.post("/v1/policies", json={"policy": {"name": "a", "spec": apart}})
    attach = {"policy_attach": {"policy_id": made.json()["policy"]["id"]}}
    attached = await action_done(api, action_id_of(await act(api, cluster_id, attach)))
    assert attached["status"] == "SUCCEEDED", attached
    detach = {"policy_detach": {"policy_id": made.json()["policy"]["id"]}}
    assert (await action_done(api, action_id_of(await act(api, cluster_id, detach))))[
        "status"
    ] == "SUCCEEDED"
    # An inherited group outlives the policy.
    assert [g["id"] for g in await objects.list(collection("server_group"), {})] == [shared["id"]]
