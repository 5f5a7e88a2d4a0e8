"""The load-balancing policy end to end: a cluster's nodes as members of an Octavia
pool on simcloud, following scale out, scale in with a hook, recovery and detach."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import httpx
import pytest

from activities.cloud.collections import collection
from activities.cloud.config import CloudConfig
from activities.cloud.session import CloudSession
from config.settings import Settings
from tests.integration.conftest import Warden
from tests.integration.test_health import attach_health, health_spec
from tests.integration.test_lifecycle_hooks import act, deletion_policy, nodes_of, waiting_tokens
from tests.integration.test_platform import action_done
from tests.support.eventually import eventually
from tests.support.lb_spec import LB_SPEC
from tests.support.simcloud_server import SimControl

pytestmark = pytest.mark.integration


class Octavia:
    """simcloud's Octavia and Nova, as an operator would look at them."""

    def __init__(self, warden: Warden) -> None:
        settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))
        self.config = CloudConfig.from_settings(settings)

    async def _list(self, kind: str, parent: str | None = None, **filters: str) -> Any:
        async with CloudSession(self.config) as cloud:
            return await cloud.collections.list(collection(kind), filters, parent=parent)

    async def loadbalancers(self, cluster_name: str) -> list[dict[str, Any]]:
        return list(await self._list("loadbalancer", name=f"senlin-lb-{cluster_name}"))

    async def pool_of(self, cluster_name: str) -> dict[str, Any]:
        [pool] = await self._list("pool", name=f"senlin-pool-{cluster_name}")
        return dict(pool)

    async def members(self, pool_id: str) -> dict[str, str]:
        """Member id → address."""
        return {m["id"]: m["address"] for m in await self._list("member", parent=pool_id)}

    async def address_of(self, server_id: str) -> str:
        async with CloudSession(self.config) as cloud:
            server = await cloud.collections.show(collection("server"), server_id)
        return str(server["addresses"]["private"][0]["addr"])


async def lb_cluster(api: httpx.AsyncClient, size: int) -> tuple[str, str]:
    """A cluster of servers on `private` (the tempest profile's network)."""
    profile = {
        "name": f"lbp-{uuid.uuid4().hex[:6]}",
        "spec": {
            "type": "os.nova.server",
            "version": 1.0,
            "properties": {
                "flavor": "m1.tiny",
                "image": "cirros",
                "networks": [{"network": "private"}],
            },
        },
    }
    made = await api.post("/v1/profiles", json={"profile": profile})
    assert made.status_code == 201, made.text
    name = f"lb-{uuid.uuid4().hex[:6]}"
    body = {"name": name, "profile_id": made.json()["profile"]["id"], "desired_capacity": size}
    created = await api.post("/v1/clusters", json={"cluster": body | {"max_size": 5}})
    assert created.status_code == 202, created.text
    assert (await action_done(api, created.headers["Location"]))["status"] == "SUCCEEDED"
    return created.json()["cluster"]["id"], name


async def attach_lb(api: httpx.AsyncClient, cluster_id: str) -> str:
    created = await api.post(
        "/v1/policies", json={"policy": {"name": f"lb-{uuid.uuid4().hex[:6]}", "spec": LB_SPEC}}
    )
    assert created.status_code == 201, created.text
    policy_id = str(created.json()["policy"]["id"])
    attached = await act(api, cluster_id, {"policy_attach": {"policy_id": policy_id}})
    assert attached.status_code == 202, attached.text
    done = await action_done(api, attached.headers["Location"])
    assert done["status"] == "SUCCEEDED", done
    return policy_id


async def in_pool(octavia: Octavia, api: httpx.AsyncClient, cluster_id: str, pool: str) -> None:
    """Each node is a member (its `lb_member`) at its server's address; no other member."""
    nodes = await nodes_of(api, cluster_id)
    members = await octavia.members(pool)
    assert {n["data"].get("lb_member") for n in nodes} == set(members)
    for node in nodes:
        assert members[node["data"]["lb_member"]] == await octavia.address_of(node["physical_id"])


@pytest.mark.timeout(240)
async def test_members_follow_scale_out_and_a_hooked_scale_in_drains_first(
    warden: Warden,
) -> None:
    octavia = Octavia(warden)
    hooks = {"type": "zaqar", "params": {"queue": f"q-{uuid.uuid4().hex[:6]}"}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, name = await lb_cluster(api, 2)
        assert not any("lb_member" in n["data"] for n in await nodes_of(api, cluster_id))
        lb_policy = await attach_lb(api, cluster_id)
        [lb] = await octavia.loadbalancers(name)
        assert lb["provisioning_status"] == "ACTIVE"
        pool = await octavia.pool_of(name)
        # Octavia takes a cookie name only with APP_COOKIE: Warden leaves it out.
        assert pool["session_persistence"]["type"] == "SOURCE_IP"
        assert not pool["session_persistence"].get("cookie_name")
        assert pool["healthmonitor_id"]
        await in_pool(octavia, api, cluster_id, pool["id"])

        scaled = await act(api, cluster_id, {"scale_out": {"count": 1}})
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"
        assert len(await octavia.members(pool["id"])) == 3
        await in_pool(octavia, api, cluster_id, pool["id"])

        # A standalone node taken over joins too.
        profile_id = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]["profile_id"]
        body = {"node": {"name": f"solo-{uuid.uuid4().hex[:6]}", "profile_id": profile_id}}
        made = await api.post("/v1/nodes", json=body)
        assert made.status_code == 202, made.text
        assert (await action_done(api, made.headers["Location"]))["status"] == "SUCCEEDED"
        added = await act(api, cluster_id, {"add_nodes": {"nodes": [made.json()["node"]["id"]]}})
        assert (await action_done(api, added.headers["Location"]))["status"] == "SUCCEEDED"
        assert len(await octavia.members(pool["id"])) == 4
        await in_pool(octavia, api, cluster_id, pool["id"])

        hooked = await deletion_policy(api, hooks)
        attached = await act(api, cluster_id, {"policy_attach": {"policy_id": hooked}})
        assert (await action_done(api, attached.headers["Location"]))["status"] == "SUCCEEDED"
        scaled = await act(api, cluster_id, {"scale_in": {"count": 1}})
        assert scaled.status_code == 202, scaled.text
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        [token] = await waiting_tokens(api, parent)
        # The hook is waiting, and the victim is already out of the pool: drained.
        members = await octavia.members(pool["id"])
        assert len(members) == 3
        victim = (await api.get(f"/v1/nodes/{token['target']}")).json()["node"]
        assert "lb_member" not in victim["data"]
        completed = await act(
            api, cluster_id, {"complete_lifecycle": {"lifecycle_action_token": token["id"]}}
        )
        assert completed.status_code == 202, completed.text
        assert (await action_done(api, scaled.headers["Location"]))["status"] == "SUCCEEDED"
        await in_pool(octavia, api, cluster_id, pool["id"])

        detached = await act(api, cluster_id, {"policy_detach": {"policy_id": lb_policy}})
        assert detached.status_code == 202, detached.text
        assert (await action_done(api, detached.headers["Location"]))["status"] == "SUCCEEDED"
        assert not any("lb_member" in n["data"] for n in await nodes_of(api, cluster_id))
        assert await octavia.loadbalancers(name) == []
        bound = (await api.get(f"/v1/clusters/{cluster_id}/policies")).json()["cluster_policies"]
        assert [b["policy_id"] for b in bound] == [hooked]


@pytest.mark.timeout(240)
async def test_a_member_the_lb_reports_down_is_recreated_and_rejoins(warden: Warden) -> None:
    octavia = Octavia(warden)
    async with (
        warden.client() as api,
        httpx.AsyncClient(base_url=warden.simcloud_url) as sim,
    ):
        cluster_id, name = await lb_cluster(api, 2)
        await attach_lb(api, cluster_id)
        pool = await octavia.pool_of(name)
        # No pool_id: the pool of the cluster's load-balancing policy.
        modes = [{"type": "LB_STATUS_POLLING"}]
        await attach_health(
            api, cluster_id, health_spec([{"name": "RECREATE"}], detection_modes=modes)
        )
        victim = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])[0]
        old_member = victim["data"]["lb_member"]
        await SimControl(sim).fault(victim["physical_id"], "lb_offline", cured_by=["REBOOT"])

        async def recreated() -> dict[str, Any] | None:
            node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
            moved = node["physical_id"] != victim["physical_id"]
            rejoined = node["data"].get("lb_member") not in (None, old_member)
            return node if moved and rejoined and node["status"] == "ACTIVE" else None

        node = await eventually(recreated, timeout=90, what="the OFFLINE member recreated")
        members = await octavia.members(pool["id"])
        assert old_member not in members
        assert members[node["data"]["lb_member"]] == await octavia.address_of(node["physical_id"])
        await in_pool(octavia, api, cluster_id, pool["id"])

        # Deleting the cluster deletes its load balancer first, as Senlin detaches.
        deleted = await api.delete(f"/v1/clusters/{cluster_id}")
        assert deleted.status_code == 202, deleted.text
        assert (await action_done(api, deleted.headers["Location"]))["status"] == "SUCCEEDED"
        assert await octavia.loadbalancers(name) == []


@pytest.mark.timeout(180)
async def test_a_rolling_update_puts_the_new_nodes_in_the_pool_in_place_of_the_old(
    warden: Warden,
) -> None:
    octavia = Octavia(warden)
    async with warden.client() as api:
        cluster_id, name = await lb_cluster(api, 2)
        await attach_lb(api, cluster_id)
        pool = await octavia.pool_of(name)
        before = {n["data"]["lb_member"] for n in await nodes_of(api, cluster_id)}
        shown = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
        profile = (await api.get(f"/v1/profiles/{shown['profile_id']}")).json()["profile"]
        spec = copy.deepcopy(profile["spec"])
        spec["properties"]["user_data"] = "#!/bin/sh\n"  # new servers (a flavor: in place)
        made = await api.post(
            "/v1/profiles", json={"profile": {"name": f"v2-{uuid.uuid4().hex[:6]}", "spec": spec}}
        )
        assert made.status_code == 201, made.text
        updated = await api.patch(
            f"/v1/clusters/{cluster_id}",
            json={"cluster": {"profile_id": made.json()["profile"]["id"]}},
        )
        assert updated.status_code == 202, updated.text
        assert (await action_done(api, updated.headers["Location"]))["status"] == "SUCCEEDED"
        after = {n["data"]["lb_member"] for n in await nodes_of(api, cluster_id)}
        assert len(after) == 2 and not before & after
        await in_pool(octavia, api, cluster_id, pool["id"])


@pytest.mark.timeout(120)
async def test_an_attach_whose_nodes_cannot_join_fails_and_leaves_nothing(warden: Warden) -> None:
    octavia = Octavia(warden)
    spec = copy.deepcopy(LB_SPEC)
    spec["properties"]["pool"]["subnet"] = "no-such-subnet"
    async with warden.client() as api:
        cluster_id, name = await lb_cluster(api, 1)
        created = await api.post(
            "/v1/policies", json={"policy": {"name": f"lb-{uuid.uuid4().hex[:6]}", "spec": spec}}
        )
        assert created.status_code == 201, created.text
        policy_id = created.json()["policy"]["id"]
        attached = await act(api, cluster_id, {"policy_attach": {"policy_id": policy_id}})
        assert attached.status_code == 202, attached.text
        done = await action_done(api, attached.headers["Location"])
        assert done["status"] == "FAILED"
        assert "Failed in adding node into lb pool." in done["status_reason"], done
        assert "no-such-subnet" in done["status_reason"], done
        # The load balancer it made is gone, nothing is bound, the nodes are as before.
        assert await octavia.loadbalancers(name) == []
        bound = (await api.get(f"/v1/clusters/{cluster_id}/policies")).json()["cluster_policies"]
        assert bound == []
        [node] = await nodes_of(api, cluster_id)
        assert node["status"] == "ACTIVE" and "lb_member" not in node["data"]
        cluster = (await api.get(f"/v1/clusters/{cluster_id}")).json()["cluster"]
        assert cluster["status"] == "ACTIVE"
