"""What users do with Warden, on simcloud and on real OpenStack alike (see conftest.py).

Each scenario names servers, images, flavors and networks as users write them, ends by
deleting what it made, and checks at the compute API that no server it made is left.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from activities.errors import INTERNAL_ERROR_ATTEMPTS
from domain.servers import CLUSTER_KEY
from tests.conformance.conftest import CLOUD_TIMEOUT_S, ConformanceWarden
from tests.support.eventually import eventually
from tests.support.fault_proxy import FaultProxy

#: On one xdist worker: one Warden on the target for the lane, not one per worker.
pytestmark = pytest.mark.xdist_group("conformance")

IMAGE = "cirros-0.6.2-x86_64-disk"
PROFILE = {
    "type": "os.nova.server",
    "version": 1.0,
    "properties": {"flavor": "m1.tiny", "image": IMAGE, "networks": [{"network": "private"}]},
}
#: Nova's answer to a request its code failed on (webob's 500 explanation).
NOVA_500 = {
    "computeFault": {
        "code": 500,
        "message": "The server has either erred or is incapable of performing the requested "
        "operation.",
    }
}
#: A real Nova with the fake driver builds in a few seconds; creates and deletes of a
#: few servers take well under a minute.
OPERATION_TIMEOUT = 180


async def finished(api: httpx.AsyncClient, accepted: httpx.Response) -> dict[str, Any]:
    """The action an accepted request started, once it ends."""
    assert accepted.status_code == 202, accepted.text
    action_id = accepted.headers["Location"].rsplit("/", 1)[-1]

    async def ended() -> dict[str, Any] | None:
        action: dict[str, Any] = (await api.get(f"/v1/actions/{action_id}")).json()["action"]
        return action if action["status"] in ("SUCCEEDED", "FAILED") else None

    return await eventually(ended, timeout=OPERATION_TIMEOUT, what=f"action {action_id}")


async def succeeded(api: httpx.AsyncClient, accepted: httpx.Response) -> dict[str, Any]:
    action = await finished(api, accepted)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    return action


async def new_cluster(api: httpx.AsyncClient, size: int, **policies: dict[str, Any]) -> str:
    """A cluster of `size` ACTIVE nodes with the given policy specs attached."""
    name = f"cf-{uuid.uuid4().hex[:6]}"
    profile = await api.post("/v1/profiles", json={"profile": {"name": name, "spec": PROFILE}})
    assert profile.status_code == 201, profile.text
    body = {"name": name, "profile_id": profile.json()["profile"]["id"], "desired_capacity": size}
    created = await api.post("/v1/clusters", json={"cluster": body})
    await succeeded(api, created)
    cluster_id: str = created.json()["cluster"]["id"]
    for kind, spec in policies.items():
        policy = await api.post("/v1/policies", json={"policy": {"name": kind, "spec": spec}})
        assert policy.status_code == 201, policy.text
        attach = {"policy_attach": {"policy_id": policy.json()["policy"]["id"]}}
        await succeeded(api, await act(api, cluster_id, attach))
    return cluster_id


async def act(api: httpx.AsyncClient, cluster_id: str, body: dict[str, Any]) -> httpx.Response:
    return await api.post(f"/v1/clusters/{cluster_id}/actions", json=body)


async def nodes_of(api: httpx.AsyncClient, cluster_id: str) -> list[dict[str, Any]]:
    listed = await api.get("/v1/nodes", params={"cluster_id": cluster_id})
    return sorted(listed.json()["nodes"], key=lambda n: n["name"])


async def servers_of(warden: ConformanceWarden, cluster_id: str) -> list[str]:
    """Live servers Warden made for the cluster, as the compute API lists them."""
    async with warden.target.session() as cloud:
        servers = await cloud.compute.list_servers(metadata={CLUSTER_KEY: cluster_id})
    return [s.id for s in servers if s.status != "DELETED"]


async def delete_cluster(
    warden: ConformanceWarden, api: httpx.AsyncClient, cluster_id: str
) -> None:
    """Delete the cluster once no action holds it (a recovery may still be ending after
    its node reads ACTIVE: the delete is then Senlin's 409, tried again as a client would)."""

    async def accepted() -> httpx.Response | None:
        answer = await api.delete(f"/v1/clusters/{cluster_id}")
        locked = answer.status_code == 409 and "already locked" in answer.text
        return None if locked else answer

    await succeeded(api, await eventually(accepted, timeout=OPERATION_TIMEOUT, interval=0.5))
    assert await servers_of(warden, cluster_id) == []


async def test_a_cluster_by_names_on_a_network_scales_in_through_its_hook(
    conformance: ConformanceWarden,
) -> None:
    deletion = {
        "type": "senlin.policy.deletion",
        "version": "1.1",
        "properties": {
            "criteria": "OLDEST_FIRST",
            "hooks": {
                "type": "webhook",
                "params": {"url": conformance.receiver.url},
                "timeout": 300,
            },
        },
    }
    async with conformance.client() as api:
        cluster_id = await new_cluster(api, 2, drain=deletion)
        nodes = await nodes_of(api, cluster_id)
        async with conformance.target.session() as cloud:
            for node in nodes:
                server = await cloud.compute.get_server(node["physical_id"])
                assert server.status == "ACTIVE" and list(server.addresses) == ["private"]

        scale_in = await act(api, cluster_id, {"scale_in": {"count": 1}})
        token = await eventually(
            lambda: _token_for(conformance, cluster_id), timeout=60, what="a lifecycle message"
        )
        complete = {"complete_lifecycle": {"lifecycle_action_token": token}}
        assert (await act(api, cluster_id, complete)).status_code == 202
        await succeeded(api, scale_in)
        assert [n["name"] for n in await nodes_of(api, cluster_id)] == [nodes[1]["name"]]
        assert await servers_of(conformance, cluster_id) == [nodes[1]["physical_id"]]
        await delete_cluster(conformance, api, cluster_id)


async def _token_for(warden: ConformanceWarden, cluster_id: str) -> str | None:
    for message in warden.receiver.received:
        if message.get("cluster_id") == cluster_id:
            return str(message["lifecycle_action_token"])
    return None


async def test_a_recover_clears_a_mark_and_then_leaves_the_healthy_server_alone(
    conformance: ConformanceWarden,
) -> None:
    async with conformance.client() as api:
        cluster_id = await new_cluster(api, 1)
        [node] = await nodes_of(api, cluster_id)
        marked = await api.patch(f"/v1/nodes/{node['id']}", json={"mark_unhealthy": True})
        assert marked.status_code == 200, marked.text
        recover = {"recover": {"operation": "REBOOT", "operation_params": {"type": "SOFT"}}}
        await succeeded(api, await api.post(f"/v1/nodes/{node['id']}/actions", json=recover))
        v113 = {"OpenStack-API-Version": "clustering 1.13"}  # `tainted` shows from 1.13
        shown = (await api.get(f"/v1/nodes/{node['id']}", headers=v113)).json()["node"]
        assert (shown["status"], shown["tainted"]) == ("ACTIVE", False)

        health = _health_policy([{"type": "NODE_STATUS_POLLING"}], interval=1)
        policy = await api.post("/v1/policies", json={"policy": {"name": "poll", "spec": health}})
        attach = {"policy_attach": {"policy_id": policy.json()["policy"]["id"]}}
        await succeeded(api, await act(api, cluster_id, attach))
        started = time.monotonic()
        await eventually(lambda: _after(started, 5), timeout=10, what="five intervals")
        recoveries = (await api.get("/v1/actions", params={"target": cluster_id})).json()
        recovers = [a for a in recoveries["actions"] if a["name"].endswith("_RECOVER")]
        assert len(recovers) == 1, f"a healthy server was recovered again: {recovers}"
        reset = await api.patch(f"/v1/nodes/{node['id']}", json={"mark_unhealthy": False})
        assert reset.status_code == 200, reset.text
        await delete_cluster(conformance, api, cluster_id)


async def _after(started: float, seconds: float) -> bool:
    return time.monotonic() - started >= seconds


def _health_policy(
    modes: list[dict[str, Any]], *, interval: int = 3600, **recovery: Any
) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {"interval": interval, "node_update_timeout": 0, "detection_modes": modes},
            "recovery": {"actions": [{"name": "RECREATE"}], **recovery},
        },
    }


async def test_a_recreate_past_an_admin_lock_loses_no_server(
    conformance: ConformanceWarden,
) -> None:
    forced = _health_policy([{"type": "NODE_STATUS_POLLING"}], node_force_recreate=True)
    async with conformance.client() as api:
        cluster_id = await new_cluster(api, 1, heal=forced)
        [node] = await nodes_of(api, cluster_id)
        old = node["physical_id"]
        async with conformance.target.session(admin=True) as admin:
            await admin.compute.lock(old, reason="forensics")
            recover = {"recover": {"operation": "RECREATE"}}
            await succeeded(api, await api.post(f"/v1/nodes/{node['id']}/actions", json=recover))
            [recreated] = await nodes_of(api, cluster_id)
            assert recreated["physical_id"] != old
            assert sorted(await servers_of(conformance, cluster_id)) == sorted(
                [old, recreated["physical_id"]]
            )
            refused = await finished(api, await api.delete(f"/v1/clusters/{cluster_id}"))
            assert refused["status"] == "FAILED" and "locked" in refused["status_reason"]
            await admin.compute.unlock(old)
        await delete_cluster(conformance, api, cluster_id)


async def test_a_power_off_is_recovered_from_novas_own_notification(
    conformance: ConformanceWarden,
) -> None:
    async with conformance.client() as api:
        cluster_id = await new_cluster(
            api, 1, events=_health_policy([{"type": "LIFECYCLE_EVENTS"}])
        )
        [node] = await nodes_of(api, cluster_id)
        async with conformance.target.session() as cloud:
            stopped_at = time.monotonic()
            await cloud.compute.stop(node["physical_id"])

            async def started() -> list[dict[str, Any]] | None:
                events = (await api.get("/v1/events", params={"obj_id": node["id"]})).json()
                return [e for e in events["events"] if e["action"] == "RECOVER_START"] or None

            [event] = await eventually(started, timeout=60, what="the node powered on again")
            took = time.monotonic() - stopped_at
            assert "healthy again" in event["status_reason"]
            assert (await cloud.compute.get_server(node["physical_id"])).status == "ACTIVE"
        print(f"{conformance.target.name}: power-off to recovered in {took:.2f} s")  # noqa: T201
        await eventually(lambda: _recovered(api, cluster_id), what="the recover action ended")
        await delete_cluster(conformance, api, cluster_id)


async def _recovered(api: httpx.AsyncClient, cluster_id: str) -> bool:
    listed = (await api.get("/v1/actions", params={"target": cluster_id})).json()["actions"]
    recovers = [a["status"] for a in listed if a["name"].endswith("_RECOVER")]
    return bool(recovers) and all(status == "SUCCEEDED" for status in recovers)


async def test_a_stack_by_names_shows_addresses_and_locks_with_its_reason(
    conformance: ConformanceWarden,
) -> None:
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "web": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": IMAGE,
                    "flavor": "m1.tiny",
                    "networks": [{"network": "private"}],
                },
            }
        },
        "outputs": {
            "address": {"value": {"get_attr": ["web", "first_address"]}},
            "networks": {"value": {"get_attr": ["web", "networks"]}},
        },
    }
    name = f"cf-{uuid.uuid4().hex[:6]}"
    async with conformance.client() as api:
        base = "/v1/demo/stacks"
        created = await api.post(base, json={"stack_name": name, "template": template})
        assert created.status_code == 201, created.text
        url = f"{base}/{name}/{created.json()['stack']['id']}"
        stack = await _settled(api, url)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
        assert outputs["address"] and list(outputs["networks"]) == ["private"]
        assert outputs["networks"]["private"] == [outputs["address"]]

        lock = {"lock": {"level": "all", "reason": "patching", "owner": "ops"}}
        assert (await api.post(f"{url}/actions", json=lock)).status_code == 200
        assert (await _settled(api, url))["stack_status"] == "LOCK_COMPLETE"
        web = (await api.get(f"{url}/resources/web")).json()["resource"]
        async with conformance.target.session(admin=True) as admin:
            server = await admin.compute.get_server(web["physical_resource_id"])
        assert (server.locked, server.locked_reason) == (
            True,
            f"Stack {name} is locked (level all by ops: patching)",
        )
        assert (await api.post(f"{url}/actions", json={"unlock": None})).status_code == 200
        assert (await _settled(api, url))["stack_status"] == "UNLOCK_COMPLETE"
        assert (await api.delete(url)).status_code == 204
        await eventually(lambda: _gone(api, url), timeout=OPERATION_TIMEOUT, what="stack deleted")


async def _settled(api: httpx.AsyncClient, url: str) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        stack: dict[str, Any] = (await api.get(url)).json()["stack"]
        return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

    return await eventually(done, timeout=OPERATION_TIMEOUT, what=f"{url} settled")


async def _gone(api: httpx.AsyncClient, url: str) -> bool:
    response = await api.get(url)
    return response.status_code == 404 or response.json()["stack"]["stack_status"] == (
        "DELETE_COMPLETE"
    )


async def attempted_cluster(api: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    """A cluster of one node whose create may fail: its id and its ended create action."""
    name = f"cf-{uuid.uuid4().hex[:6]}"
    spec = {"name": name, "spec": PROFILE}
    profile = (await api.post("/v1/profiles", json={"profile": spec})).json()["profile"]
    body = {"name": name, "profile_id": profile["id"], "desired_capacity": 1}
    created = await api.post("/v1/clusters", json={"cluster": body})
    action = await finished(api, created)
    return created.json()["cluster"]["id"], action


async def test_a_create_over_quota_fails_the_node_with_novas_words(
    conformance: ConformanceWarden,
) -> None:
    async with (
        conformance.client() as api,
        conformance.target.session() as member,
        conformance.target.session(admin=True) as admin,
    ):
        project = (await member.auth.token()).project_id
        quotas = f"/os-quota-sets/{project}"
        before = (await admin.request("compute", "GET", quotas)).json()["quota_set"]["instances"]
        used = len([s for s in await member.compute.list_servers() if s.status != "DELETED"])
        await admin.request("compute", "PUT", quotas, json={"quota_set": {"instances": used}})
        try:
            cluster_id, action = await attempted_cluster(api)
        finally:
            await admin.request("compute", "PUT", quotas, json={"quota_set": {"instances": before}})
        [node] = await nodes_of(api, cluster_id)
        assert action["status"] == "FAILED" and node["status"] == "ERROR"
        assert (
            f"Quota exceeded for instances: Requested 1, but already used {used} of {used} "
            "instances"
        ) in node["status_reason"]
        await delete_cluster(conformance, api, cluster_id)


@pytest.fixture
def compute(conformance: ConformanceWarden) -> Iterator[FaultProxy]:
    """The proxy in front of the target's compute API, with no rule and no call recorded
    when the test starts; its rules are cleared after it."""
    conformance.compute.clear()
    try:
        yield conformance.compute
    finally:
        conformance.compute.clear()


async def test_a_create_answered_after_wardens_timeout_leaves_no_server_behind(
    conformance: ConformanceWarden, compute: FaultProxy
) -> None:
    """Nova gets the first POST only after Warden gave up on it and POSTed again: two
    servers with the node's name and request id. The node keeps one; deleting the
    cluster deletes both."""
    compute.hold("POST", "/servers$", CLOUD_TIMEOUT_S + 5)
    async with conformance.client() as api:
        cluster_id = await new_cluster(api, 1)
        [node] = await nodes_of(api, cluster_id)
        twins = await eventually(
            lambda: _servers_if(conformance, cluster_id, count=2),
            timeout=60,
            what="the held create's server",
        )
        assert node["physical_id"] in twins
        # The held POST's server shows in Nova before its answer is back through the proxy.
        answers = await eventually(
            lambda: _answers_if(compute, "POST", "/servers$", count=2),
            timeout=30,
            what="the held create's answer",
        )
        assert answers == [202, 202]
        await delete_cluster(conformance, api, cluster_id)


async def _answers_if(proxy: FaultProxy, method: str, path: str, *, count: int) -> list[int]:
    answers = proxy.answered(method, path)
    return answers if len(answers) >= count else []


async def _servers_if(warden: ConformanceWarden, cluster_id: str, *, count: int) -> list[str]:
    servers = await servers_of(warden, cluster_id)
    return servers if len(servers) == count else []


async def test_a_persistent_500_on_create_fails_the_node_in_seconds(
    conformance: ConformanceWarden, compute: FaultProxy
) -> None:
    compute.fail("POST", "/servers$", 500, NOVA_500)
    async with conformance.client() as api:
        started = time.monotonic()
        cluster_id, action = await attempted_cluster(api)
        took = time.monotonic() - started
        answered = compute.answered("POST", "/servers$")
        compute.clear()
        [node] = await nodes_of(api, cluster_id)
        assert action["status"] == "FAILED" and node["status"] == "ERROR"
        assert NOVA_500["computeFault"]["message"] in node["status_reason"]
        assert answered == [500] * INTERNAL_ERROR_ATTEMPTS
        assert took < 60, f"a persistent 500 took {took:.0f} s to fail the node"
        assert await servers_of(conformance, cluster_id) == []
        await delete_cluster(conformance, api, cluster_id)


async def test_a_node_whose_build_failed_is_recreated_when_nova_refuses_its_reboot(
    conformance: ConformanceWarden,
) -> None:
    """With its one compute service disabled, Nova fails the build ("No valid host"):
    a server that never launched, which Nova will not reboot (409). The health policy's
    REBOOT is refused, and its next action, RECREATE, heals the node once the service is
    enabled again."""
    async with conformance.client() as api, conformance.target.session(admin=True) as admin:
        v253 = {"OpenStack-API-Version": "compute 2.53"}  # services by UUID, PUT by body
        listed = await admin.request(
            "compute", "GET", "/os-services", params={"binary": "nova-compute"}, headers=v253
        )
        service = f"/os-services/{listed.json()['services'][0]['id']}"
        disable = {"status": "disabled", "disabled_reason": "conformance: no host"}
        await admin.request("compute", "PUT", service, json=disable, headers=v253)
        try:
            cluster_id, action = await attempted_cluster(api)
        finally:
            enable = {"status": "enabled"}
            await admin.request("compute", "PUT", service, json=enable, headers=v253)
        [node] = await nodes_of(api, cluster_id)
        assert action["status"] == "FAILED" and node["status"] == "ERROR"
        assert "No valid host was found" in node["status_reason"]
        failed_server = node["physical_id"]

        actions = [{"name": "REBOOT", "params": {"type": "HARD"}}, {"name": "RECREATE"}]
        heal = _health_policy([{"type": "NODE_STATUS_POLLING"}], interval=1)
        heal["properties"]["recovery"]["actions"] = actions
        policy = await api.post("/v1/policies", json={"policy": {"name": "heal", "spec": heal}})
        attach = {"policy_attach": {"policy_id": policy.json()["policy"]["id"]}}
        await succeeded(api, await act(api, cluster_id, attach))

        async def healed() -> dict[str, Any] | None:
            shown: dict[str, Any] = (await api.get(f"/v1/nodes/{node['id']}")).json()["node"]
            return shown if shown["status"] == "ACTIVE" else None

        recreated = await eventually(healed, timeout=OPERATION_TIMEOUT, what="node recreated")
        assert recreated["physical_id"] != failed_server
        events = (await api.get("/v1/events", params={"obj_id": node["id"]})).json()["events"]
        reasons = " ".join(e["status_reason"] or "" for e in events)
        assert f"Instance {failed_server} is in an invalid state for 'reboot'" in reasons
        assert await servers_of(conformance, cluster_id) == [recreated["physical_id"]]
        await delete_cluster(conformance, api, cluster_id)


def _server_on(subnet: str) -> dict[str, Any]:
    """A stack of its own network with two subnets, and a server on `subnet`."""

    def on(cidr: str) -> dict[str, Any]:
        props = {"network": {"get_resource": "net"}, "cidr": cidr}
        return {"type": "OS::Neutron::Subnet", "properties": props}

    server = {
        "image": IMAGE,
        "flavor": "m1.tiny",
        "networks": [{"subnet": {"get_resource": subnet}}],
    }
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "net": {"type": "OS::Neutron::Net"},
            "subnet_a": on("11.11.11.0/24"),
            "subnet_b": on("12.12.12.0/24"),
            "web": {"type": "OS::Nova::Server", "properties": server},
        },
        "outputs": {"address": {"value": {"get_attr": ["web", "first_address"]}}},
    }


async def test_a_servers_new_subnet_is_attached_in_place(
    conformance: ConformanceWarden,
) -> None:
    """Heat's interface update: the server stays, its port on the old subnet is detached
    and one on the new subnet attached; the stack then deletes cleanly."""
    async with conformance.client() as api:
        url, server_id = await _server_stack(api, _server_on("subnet_a"))
        await _updated_in_place(api, url, _server_on("subnet_b"), server_id)

        async def on_new_subnet() -> list[str] | None:
            async with conformance.target.session() as cloud:
                listed = await cloud.compute.interfaces(server_id)
            addresses = [ip["ip_address"] for i in listed for ip in i["fixed_ips"]]
            return (
                addresses
                if addresses and all(a.startswith("12.12.12.") for a in addresses)
                else None
            )

        assert len(await eventually(on_new_subnet, timeout=60, what="only the new port")) == 1
        await _deleted(api, url)


def _sized(flavor: str) -> dict[str, Any]:
    server = {"image": IMAGE, "flavor": flavor, "networks": [{"network": "private"}]}
    return {
        "heat_template_version": "2021-04-16",
        "resources": {"web": {"type": "OS::Nova::Server", "properties": server}},
    }


async def test_a_servers_new_flavor_resizes_it_in_place(conformance: ConformanceWarden) -> None:
    """Heat's RESIZE: Nova resizes the same server, Warden confirms it once Nova waits in
    VERIFY_RESIZE; the stack then deletes cleanly."""
    async with conformance.client() as api:
        url, server_id = await _server_stack(api, _sized("m1.tiny"))
        await _updated_in_place(api, url, _sized("m1.small"), server_id)
        async with conformance.target.session() as cloud:
            server = await cloud.compute.get_server(server_id)
        assert (server.status, server.flavor) == ("ACTIVE", "m1.small")
        await _deleted(api, url)


async def _server_stack(api: httpx.AsyncClient, template: dict[str, Any]) -> tuple[str, str]:
    """A new stack of `template` once CREATE_COMPLETE: its URL and its `web` server's id."""
    name = f"cf-{uuid.uuid4().hex[:6]}"
    base = "/v1/demo/stacks"
    created = await api.post(base, json={"stack_name": name, "template": template})
    assert created.status_code == 201, created.text
    url = f"{base}/{name}/{created.json()['stack']['id']}"
    stack = await _settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    web = (await api.get(f"{url}/resources/web")).json()["resource"]
    return url, str(web["physical_resource_id"])


async def _updated_in_place(
    api: httpx.AsyncClient, url: str, template: dict[str, Any], server_id: str
) -> None:
    """The stack updated to `template`, UPDATE_COMPLETE, on the same `web` server."""
    updated = await api.put(url, json={"template": template})
    assert updated.status_code == 202, updated.text
    stack = await _settled(api, url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    web = (await api.get(f"{url}/resources/web")).json()["resource"]
    assert web["physical_resource_id"] == server_id


async def _deleted(api: httpx.AsyncClient, url: str) -> None:
    """The stack deleted, and gone."""
    assert (await api.delete(url)).status_code == 204
    await eventually(lambda: _gone(api, url), timeout=OPERATION_TIMEOUT, what="stack deleted")
