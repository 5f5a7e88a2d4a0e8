"""Clusters of Heat stacks (`os.heat.stack`) end to end: each node is a stack that the
worker makes through the catalog's orchestration API (Warden's own Heat API here), as
Senlin makes them through Heat's. Driven with a Keystone token of simcloud's `warden`
user, as `make run` drives it: the worker's stacks are in that user's project.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.integration.conftest import Warden
from tests.integration.test_health import attach_health, health_spec
from tests.integration.test_keystone import keystone_token
from tests.integration.test_lifecycle_hooks import (
    act,
    deletion_policy,
    nodes_of,
    queued_messages,
    waiting_tokens,
)
from tests.integration.test_platform import action_done
from tests.support.eventually import eventually
from tests.unit.cluster.test_stack_profile import TEMPEST_SPEC

pytestmark = pytest.mark.integration

#: senlin-tempest-plugin's `spec_heat_stack` template: one `random` resource, its output.
TEMPLATE: dict[str, Any] = TEMPEST_SPEC["properties"]["template"]


def stack_spec(**properties: Any) -> dict[str, Any]:
    return {
        "type": "os.heat.stack",
        "version": "1.0",
        "properties": {"template": TEMPLATE, **properties},
    }


async def stack_cluster(api: httpx.AsyncClient, size: int) -> str:
    """A cluster of `size` stack nodes, ACTIVE."""
    profile = await api.post(
        "/v1/profiles",
        json={"profile": {"name": f"stk-{uuid.uuid4().hex[:6]}", "spec": stack_spec()}},
    )
    assert profile.status_code == 201, profile.text
    created = await api.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": f"stacks-{uuid.uuid4().hex[:6]}",
                "profile_id": profile.json()["profile"]["id"],
                "desired_capacity": size,
            }
        },
    )
    assert created.status_code == 202, created.text
    done = await action_done(api, created.headers["Location"])
    assert done["status"] == "SUCCEEDED", done
    return str(created.json()["cluster"]["id"])


async def stack_of(api: httpx.AsyncClient, project_id: str, node: dict[str, Any]) -> dict[str, Any]:
    name = node["data"]["stack_name"]
    shown = await api.get(f"/v1/{project_id}/stacks/{name}/{node['physical_id']}")
    assert shown.status_code == 200, shown.text
    stack: dict[str, Any] = shown.json()["stack"]
    return stack


async def resource(
    api: httpx.AsyncClient, project_id: str, node: dict[str, Any], name: str
) -> dict[str, Any]:
    path = f"/v1/{project_id}/stacks/{node['data']['stack_name']}/{node['physical_id']}"
    shown = await api.get(f"{path}/resources/{name}")
    assert shown.status_code == 200, shown.text
    found: dict[str, Any] = shown.json()["resource"]
    return found


async def test_each_node_is_a_stack_and_a_marked_stack_is_recovered_by_stack_update(
    warden: Warden,
) -> None:
    token, project_id = await keystone_token(warden)
    async with warden.client(token) as api:
        cluster_id = await stack_cluster(api, 2)
        nodes = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
        assert [n["status"] for n in nodes] == ["ACTIVE", "ACTIVE"]
        for node in nodes:
            stack = await stack_of(api, project_id, node)
            assert stack["stack_status"] == "CREATE_COMPLETE"
            assert stack["stack_name"].startswith(node["name"])
            assert len(stack["outputs"][0]["output_value"]) == 64
            assert stack["tags"] == [  # Senlin's tags
                f"cluster_node_id={node['id']}",
                f"cluster_id={cluster_id}",
                f"cluster_node_index={node['index']}",
            ]

        await attach_health(api, cluster_id, health_spec([{"name": "STACK_UPDATE"}]))
        victim = nodes[0]
        before = await resource(api, project_id, victim, "random")
        path = f"/v1/{project_id}/stacks/{victim['data']['stack_name']}/{victim['physical_id']}"
        marked = await api.patch(
            f"{path}/resources/random",
            json={"mark_unhealthy": True, "resource_status_reason": "the app says it is broken"},
        )
        assert marked.status_code == 200, marked.text

        async def recovered() -> list[dict[str, Any]] | None:
            events = (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
            healed = any(
                e["action"] == "RECOVER_STACK_UPDATE" and "healthy again" in e["status_reason"]
                for e in events
            )
            return events if healed else None

        events = await eventually(recovered, timeout=90, what="the marked stack recovered")
        reasons = [e["status_reason"] for e in events]
        assert any(
            "Resource random is CHECK_FAILED: the app says it is broken" in r for r in reasons
        )
        after = await resource(api, project_id, victim, "random")
        # Heat's mark-unhealthy contract: the update replaced the marked resource.
        assert after["resource_status"] != "CHECK_FAILED"
        assert after["physical_resource_id"] != before["physical_resource_id"]
        node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
        assert (node["status"], node["physical_id"]) == ("ACTIVE", victim["physical_id"])
        untouched = await resource(api, project_id, nodes[1], "random")
        assert untouched["resource_status"] == "CREATE_COMPLETE"


async def test_scale_in_of_a_stack_node_waits_for_its_hook_then_deletes_the_stack(
    warden: Warden,
) -> None:
    token, project_id = await keystone_token(warden)
    queue = f"stk-{uuid.uuid4().hex[:8]}"
    async with warden.client(token) as api:
        cluster_id = await stack_cluster(api, 2)
        policy_id = await deletion_policy(
            api, {"type": "zaqar", "params": {"queue": queue}, "timeout": 300}
        )
        attached = await act(api, cluster_id, {"policy_attach": {"policy_id": policy_id}})
        assert attached.status_code == 202, attached.text
        assert (await action_done(api, attached.headers["Location"]))["status"] == "SUCCEEDED"
        nodes = await nodes_of(api, cluster_id)
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        assert scaled.status_code == 202, scaled.text
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        [waiting] = await waiting_tokens(api, parent)
        [message] = await queued_messages(warden, queue)
        victim = next(n for n in nodes if n["id"] == message["node_id"])
        # The stack stays while the app drains it, whatever the server listing says.
        assert (await stack_of(api, project_id, victim))["stack_status"] == "CREATE_COMPLETE"
        cancel = await api.patch(
            f"/v1/actions/{waiting['id']}",
            json={"action": {"status": "CANCELLED"}},
            headers={"OpenStack-API-Version": "clustering 1.12"},
        )
        assert cancel.status_code == 409 and "cannot cancel a running action" in cancel.text
        body = {"complete_lifecycle": {"lifecycle_action_token": waiting["id"]}}
        assert (await act(api, cluster_id, body)).status_code == 202
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"
        assert [n["id"] for n in await nodes_of(api, cluster_id)] == [
            n["id"] for n in nodes if n["id"] != victim["id"]
        ]
        gone = await api.get(
            f"/v1/{project_id}/stacks/{victim['data']['stack_name']}/{victim['physical_id']}"
        )
        assert gone.status_code == 404 or gone.json()["stack"]["stack_status"] == "DELETE_COMPLETE"


async def test_recreate_replaces_the_stack_and_deleting_the_cluster_deletes_every_stack(
    warden: Warden,
) -> None:
    token, project_id = await keystone_token(warden)
    async with warden.client(token) as api:
        cluster_id = await stack_cluster(api, 1)
        [node] = await nodes_of(api, cluster_id)
        recover = await api.post(
            f"/v1/nodes/{node['id']}/actions", json={"recover": {"operation": "RECREATE"}}
        )
        assert recover.status_code == 202, recover.text
        assert (await action_done(api, recover.headers["Location"]))["status"] == "SUCCEEDED"
        [again] = await nodes_of(api, cluster_id)
        assert again["status"] == "ACTIVE" and again["physical_id"] != node["physical_id"]
        assert (await stack_of(api, project_id, again))["stack_status"] == "CREATE_COMPLETE"
        old = await api.get(
            f"/v1/{project_id}/stacks/{node['data']['stack_name']}/{node['physical_id']}"
        )
        assert old.status_code == 404 or old.json()["stack"]["stack_status"] == "DELETE_COMPLETE"

        refused = await act(api, cluster_id, {"recover": {"operation": "REBOOT"}})
        assert refused.status_code == 400
        assert "REBOOT is only applicable to os.nova.server clusters" in refused.text

        deleted = await api.delete(f"/v1/clusters/{cluster_id}")
        assert deleted.status_code == 202, deleted.text
        assert (await action_done(api, deleted.headers["Location"]))["status"] == "SUCCEEDED"
        listed = (await api.get(f"/v1/{project_id}/stacks")).json()["stacks"]
        assert again["physical_id"] not in {s["id"] for s in listed}


async def test_a_profile_update_updates_each_stack_in_place(warden: Warden) -> None:
    token, project_id = await keystone_token(warden)
    async with warden.client(token) as api:
        cluster_id = await stack_cluster(api, 2)
        before = {n["id"]: n for n in await nodes_of(api, cluster_id)}
        shorter = await api.post(
            "/v1/profiles",
            json={
                "profile": {
                    "name": f"stk-{uuid.uuid4().hex[:6]}",
                    "spec": stack_spec(parameters={"str_length": 16}),
                }
            },
        )
        assert shorter.status_code == 201, shorter.text
        profile_id = shorter.json()["profile"]["id"]
        updated = await api.patch(
            f"/v1/clusters/{cluster_id}", json={"cluster": {"profile_id": profile_id}}
        )
        assert updated.status_code == 202, updated.text
        done = await action_done(api, updated.headers["Location"])
        assert done["status"] == "SUCCEEDED", done
        after = {n["id"]: n for n in await nodes_of(api, cluster_id)}
        # Senlin's StackProfile.do_update: the same stacks, updated (no replacement).
        assert set(after) == set(before)
        for node_id, node in after.items():
            assert node["physical_id"] == before[node_id]["physical_id"]
            assert (node["status"], node["profile_id"]) == ("ACTIVE", profile_id)
            stack = await stack_of(api, project_id, node)
            assert stack["stack_status"] == "UPDATE_COMPLETE"
            assert len(stack["outputs"][0]["output_value"]) == 16
        cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
        assert cluster["profile_id"] == profile_id


async def test_a_stack_node_that_leaves_or_joins_has_its_stack_retagged(warden: Warden) -> None:
    """Senlin's `do_leave` / `do_join`: the cluster tags go with the membership."""
    token, project_id = await keystone_token(warden)
    async with warden.client(token) as api:
        cluster_id = await stack_cluster(api, 2)
        leaver = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])[0]
        left = await act(
            api,
            cluster_id,
            {"del_nodes": {"nodes": [leaver["id"]], "destroy_after_deletion": False}},
        )
        assert (await action_done(api, left.headers["Location"]))["status"] == "SUCCEEDED"

        async def untagged() -> tuple[list[str]] | None:
            tags: list[str] = (await stack_of(api, project_id, leaver))["tags"] or []
            return (tags,) if not any(t.startswith("cluster_id=") for t in tags) else None

        assert await eventually(untagged, timeout=30, what="cluster tags removed") == ([],)

        other = await stack_cluster(api, 0)
        joined = await act(api, other, {"add_nodes": {"nodes": [leaver["id"]]}})
        assert (await action_done(api, joined.headers["Location"]))["status"] == "SUCCEEDED"
        node = (await api.get(f"/v1/nodes/{leaver['id']}")).json()["node"]

        async def tagged() -> list[str] | None:
            tags: list[str] = (await stack_of(api, project_id, node))["tags"] or []
            return tags if f"cluster_id={other}" in tags else None

        assert await eventually(tagged, timeout=30, what="the new cluster's tags") == [
            f"cluster_id={other}",
            f"cluster_node_id={leaver['id']}",
            f"cluster_node_index={node['index']}",
        ]
