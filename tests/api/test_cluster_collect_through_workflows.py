"""Senlin's cluster config (`node.name.format`) and cluster collect (`GET
/v1/clusters/{id}/attrs/{path}`, API 1.2), end to end."""

from __future__ import annotations

import re

from tests.api.test_clusters_through_workflows import PROFILE, action_done, action_id_of
from tests.api.test_stacks_api import assert_error
from tests.support.warden_in_process import InProcessWarden

V12 = {"OpenStack-API-Version": "clustering 1.2"}


async def test_nodes_are_named_by_the_clusters_format_and_collected(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    profile = (await api.post("/v1/profiles", json={"profile": PROFILE})).json()["profile"]
    body = {
        "name": "web",
        "profile_id": profile["id"],
        "desired_capacity": 2,
        "config": {"node.name.format": "N$2I-$4r"},
    }
    created = await api.post("/v1/clusters", json={"cluster": body})
    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    cluster = (await api.get(f"/v1/clusters/{created.json()['cluster']['id']}")).json()["cluster"]
    assert cluster["config"] == {"node.name.format": "N$2I-$4r"}
    nodes = (await api.get("/v1/nodes", params={"cluster_id": cluster["id"]})).json()["nodes"]
    names = sorted(n["name"] for n in nodes)
    assert [re.fullmatch(r"N0[12]-[a-z0-9]{4}", n) is not None for n in names] == [True, True]

    collected = await api.get(f"/v1/clusters/{cluster['id']}/attrs/name", headers=V12)
    assert collected.status_code == 200, collected.text
    assert sorted(a["value"] for a in collected.json()["cluster_attributes"]) == names
    statuses = await api.get(f"/v1/clusters/{cluster['id']}/attrs/status", headers=V12)
    assert {a["value"] for a in statuses.json()["cluster_attributes"]} == {"ACTIVE"}
    none = await api.get(f"/v1/clusters/{cluster['id']}/attrs/metadata.nothing", headers=V12)
    assert none.json()["cluster_attributes"] == []


async def test_collect_refusals_are_senlins(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    old = await api.get(
        "/v1/clusters/c/attrs/name", headers={"OpenStack-API-Version": "clustering 1.1"}
    )
    assert_error(old, 400, "API version '1.1' is not supported on this method.")
    assert_error(
        await api.get("/v1/clusters/c/attrs/None", headers=V12),
        400,
        "Required path attribute is missing.",
    )
    assert_error(await api.get("/v1/clusters/c/attrs/name", headers=V12), 404, "'c'")
    bad_format = {"name": "w", "profile_id": "p", "config": {"node.name.format": 7}}
    assert_error(
        await api.post("/v1/clusters", json={"cluster": bad_format}), 400, "node.name.format"
    )
