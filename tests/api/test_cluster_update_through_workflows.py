"""`PATCH /v1/clusters/{id}` with a new profile: a rolling replacement, end to end, or an
update of each server in place when the new profile's changes allow it.

The batch policy shapes the batches (Senlin's sizing), failed and marked nodes go
first, the pause between batches is a durable timer skipped here in milliseconds,
and each replaced node is removed through the deletion policy like any removal.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from activities.cloud.collections import collection
from tests.api.test_clusters_through_workflows import (
    PROFILE,
    QUEUE,
    act,
    action_done,
    action_id_of,
    hooked_cluster,
    nodes_of,
)
from tests.api.test_stacks_api import assert_error
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

PAUSE = timedelta(seconds=120)


async def _profile(api: httpx.AsyncClient, name: str, image: str, **extra: Any) -> str:
    properties = {"flavor": "m1.tiny", "image": image, **extra}
    spec = {**PROFILE["spec"], "properties": properties}  # type: ignore[dict-item]
    created = await api.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})
    assert created.status_code == 201, created.text
    profile_id: str = created.json()["profile"]["id"]
    return profile_id


async def _attach(api: httpx.AsyncClient, cluster_id: str, name: str, spec: dict[str, Any]) -> None:
    policy = await api.post("/v1/policies", json={"policy": {"name": name, "spec": spec}})
    assert policy.status_code == 201, policy.text
    attach = {"policy_attach": {"policy_id": policy.json()["policy"]["id"]}}
    attached = await act(api, cluster_id, attach)
    assert (await action_done(api, action_id_of(attached)))["status"] == "SUCCEEDED"


def _batch_policy(min_in_service: int, max_batch_size: int) -> dict[str, Any]:
    return {
        "type": "senlin.policy.batch",
        "version": "1.0",
        "properties": {
            "min_in_service": min_in_service,
            "max_batch_size": max_batch_size,
            "pause_time": int(PAUSE.total_seconds()),
        },
    }


async def _cluster(api: httpx.AsyncClient, size: int) -> str:
    profile_id = await _profile(api, "v1", "cirros")
    body = {"name": "web", "profile_id": profile_id, "desired_capacity": size}
    created = await api.post("/v1/clusters", json={"cluster": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    cluster_id: str = created.json()["cluster"]["id"]
    return cluster_id


async def test_update_rolls_in_batches_failed_first_and_pauses_between(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await _cluster(api, 4)
    await _attach(api, cluster_id, "batches", _batch_policy(min_in_service=2, max_batch_size=2))
    before = sorted(await nodes_of(api, cluster_id), key=lambda n: n["index"])
    marked = before[-1]  # the youngest: without the mark it would go last
    mark = {"mark_unhealthy": True, "status_reason": "app says so"}
    assert (await api.patch(f"/v1/nodes/{marked['id']}", json=mark)).status_code == 200
    v2 = await _profile(api, "v2", "cirros-v2", user_data="#!/bin/sh\necho v2\n")  # replaces

    updating = await api.patch(f"/v1/clusters/{cluster_id}", json={"cluster": {"profile_id": v2}})

    assert updating.status_code == 202, updating.text
    action_id = action_id_of(updating)

    async def first_batch_done() -> list[dict[str, Any]] | None:
        nodes = await nodes_of(api, cluster_id)
        fresh = [n for n in nodes if n["profile_id"] == v2 and n["status"] == "ACTIVE"]
        return nodes if len(fresh) == 2 and len(nodes) == 4 else None

    during = await eventually(first_batch_done, timeout=30, what="the first batch")
    assert marked["id"] not in {n["id"] for n in during}  # the marked node went first
    old_left = [n for n in during if n["profile_id"] != v2]
    assert len(old_left) == 2  # never fewer than min_in_service: 4 in service throughout
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert cluster["status"] == "UPDATING"

    await running_warden.skip(PAUSE + timedelta(seconds=5))
    action = await action_done(api, action_id)

    assert action["status"] == "SUCCEEDED", action
    after = await nodes_of(api, cluster_id)
    assert len(after) == 4 and {n["profile_id"] for n in after} == {v2}
    assert not {n["id"] for n in before} & {n["id"] for n in after}
    assert len({n["name"] for n in after}) == 4  # fresh names, none reused
    cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
    assert (cluster["status"], cluster["profile_id"]) == ("ACTIVE", v2)
    servers = {s.id: s for s in await running_warden.cloud.compute.list_servers()}
    assert {n["physical_id"] for n in after} == set(servers)  # old servers all deleted


async def test_each_replaced_node_fires_the_deletion_hook(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    cluster_id = await hooked_cluster(api, 2)
    v2 = await _profile(api, "v2", "cirros-v2", user_data="#!/bin/sh\n")  # replaces

    updating = await api.patch(f"/v1/clusters/{cluster_id}", json={"cluster": {"profile_id": v2}})
    action_id = action_id_of(updating)

    async def hook_messages() -> list[dict[str, Any]] | None:
        messages = [m.body for m in await running_warden.cloud.messaging.list_messages(QUEUE)]
        return messages if len(messages) == 2 else None

    messages = await eventually(hook_messages, timeout=30, what="both hook messages")
    for message in messages:
        token = message["lifecycle_action_token"]
        done = await act(api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": token}})
        assert done.status_code == 202, done.text

    action = await action_done(api, action_id)
    assert action["status"] == "SUCCEEDED", action
    assert {n["profile_id"] for n in await nodes_of(api, cluster_id)} == {v2}


async def test_a_new_image_and_flavor_update_healthy_servers_in_place(
    running_warden: InProcessWarden,
) -> None:
    """Senlin's `do_update`: same nodes, same servers, rebuilt and resized; a node
    marked unhealthy is replaced, as the update is what heals it."""
    api = running_warden.api
    cluster_id = await _cluster(api, 3)
    before = sorted(await nodes_of(api, cluster_id), key=lambda n: n["index"])
    marked = before[0]
    mark = {"mark_unhealthy": True, "status_reason": "app says so"}
    assert (await api.patch(f"/v1/nodes/{marked['id']}", json=mark)).status_code == 200
    v2 = await _profile(api, "v2", "cirros-v2", flavor="m1.small", metadata={"tier": "web"})

    updating = await api.patch(f"/v1/clusters/{cluster_id}", json={"cluster": {"profile_id": v2}})
    action = await action_done(api, action_id_of(updating))

    assert action["status"] == "SUCCEEDED", action
    after = {n["id"]: n for n in await nodes_of(api, cluster_id)}
    kept = before[1:]
    assert marked["id"] not in after and len(after) == 3
    servers = {s.id: s for s in await running_warden.cloud.compute.list_servers()}
    images = {
        i["name"]: i["id"]
        for i in await running_warden.cloud.collections.list(collection("image"), {})
    }
    for node in kept:
        now = after[node["id"]]
        assert (now["profile_id"], now["physical_id"]) == (v2, node["physical_id"])
        server = servers[node["physical_id"]]
        assert (server.status, server.flavor, server.image_id) == (
            "ACTIVE",
            "m1.small",
            images["cirros-v2"],
        )
        assert server.metadata["tier"] == "web"
        assert server.metadata["warden_node"] == node["id"]  # still traced to its node
    assert set(servers) == {n["physical_id"] for n in after.values()}


async def test_update_refusals(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    cluster_id = await _cluster(api, 1)
    current = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["profile_id"]
    url = f"/v1/clusters/{cluster_id}"

    same = await api.patch(url, json={"cluster": {"profile_id": current}})
    assert_error(same, 400, "No property needs an update.")
    unknown = await api.patch(url, json={"cluster": {"profile_id": "nope"}})
    assert_error(unknown, 400, "nope")
    bad_name = await api.patch(url, json={"cluster": {"name": "no spaces"}})
    assert_error(bad_name, 400, "name")
    locked = await act(api, cluster_id, {"lock": {}})
    assert (await action_done(api, action_id_of(locked)))["status"] == "SUCCEEDED"
    assert_error(await api.patch(url, json={"cluster": {"name": "other"}}), 409, "locked")
    v2 = await _profile(api, "v2", "cirros-v2")
    assert_error(await api.patch(url, json={"cluster": {"profile_id": v2}}), 409, "locked")
