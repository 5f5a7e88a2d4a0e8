"""Senlin's discovery surface: version documents at /cluster, the /cluster/v1 prefix,
`OpenStack-API-Version: clustering X.Y` negotiation and Senlin's body fields."""

from __future__ import annotations

import importlib.metadata

import httpx
import pytest

from tests.api.test_platform_api import assert_error

PROFILE = {
    "profile": {
        "name": "web-small",
        "spec": {
            "type": "os.nova.server",
            "version": "1.0",
            "properties": {"flavor": "m1.tiny", "image": "cirros"},
        },
    }
}


@pytest.mark.parametrize("path", ["/cluster", "/cluster/"])
async def test_cluster_root_lists_senlin_versions_with_300(
    api: httpx.AsyncClient, path: str
) -> None:
    response = await api.get(path, headers={"X-Auth-Token": ""})
    assert response.status_code == 300
    [v1] = response.json()["versions"]
    assert v1["id"] == "1.0" and v1["status"] == "CURRENT"
    assert (v1["min_version"], v1["max_version"]) == ("1.0", "1.14")
    assert {"href": "http://api/cluster/v1", "rel": "self"} in v1["links"]
    assert v1["media-types"][0]["type"] == "application/vnd.openstack.clustering-v1+json"


@pytest.mark.parametrize("path", ["/cluster/v1", "/cluster/v1/"])
async def test_cluster_v1_document_describes_the_microversion_range(
    api: httpx.AsyncClient, path: str
) -> None:
    response = await api.get(path)
    assert response.status_code == 200
    version = response.json()["version"]
    assert version["max_version"] == "1.14"
    assert version["links"][0]["href"] == "http://api/cluster/v1"


async def test_prefixed_routes_serve_the_same_resources(api: httpx.AsyncClient) -> None:
    created = await api.post("/cluster/v1/profiles", json=PROFILE)
    assert created.status_code == 201, created.text
    profile = created.json()["profile"]
    assert profile["project"] == profile["project_id"] == "demo"
    plain = (await api.get(f"/v1/profiles/{profile['id']}")).json()["profile"]
    prefixed = (await api.get(f"/cluster/v1/profiles/{profile['id']}")).json()["profile"]
    assert plain == prefixed
    assert (await api.get("/cluster/v1/profiles/web-small")).json()["profile"]["id"] == (
        profile["id"]
    )
    short = profile["id"][:8]
    assert (await api.get(f"/cluster/v1/profiles/{short}")).json()["profile"]["id"] == (
        profile["id"]
    )
    deleted = await api.delete(f"/cluster/v1/profiles/{profile['id']}")
    assert deleted.status_code == 204


async def test_only_senlin_resources_live_below_the_prefix(api: httpx.AsyncClient) -> None:
    assert (await api.get("/cluster/v1/whoami")).status_code == 404
    assert (await api.get("/cluster/health")).status_code == 404
    assert (await api.get("/cluster/v2")).status_code == 404
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert "/cluster" in paths and not any(p.startswith("/cluster/v1/") for p in paths)


async def test_no_header_answers_version_1_0_with_vary(api: httpx.AsyncClient) -> None:
    response = await api.get("/v1/profiles")
    assert response.status_code == 200
    assert response.headers["OpenStack-API-Version"] == "clustering 1.0"
    assert "OpenStack-API-Version" in response.headers["Vary"]


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("clustering 1.14", "clustering 1.14"),
        ("clustering 1.9", "clustering 1.9"),
        ("clustering latest", "clustering 1.14"),
        ("compute 2.1, clustering 1.2", "clustering 1.2"),
        ("compute 2.90", "clustering 1.0"),
    ],
)
async def test_requested_microversion_is_echoed(
    api: httpx.AsyncClient, asked: str, answered: str
) -> None:
    response = await api.get("/cluster/v1/policies", headers={"OpenStack-API-Version": asked})
    assert response.status_code == 200, response.text
    assert response.headers["OpenStack-API-Version"] == answered


@pytest.mark.parametrize("asked", ["clustering 1.15", "clustering 2.0", "clustering 1.99"])
async def test_unsupported_microversion_is_406(api: httpx.AsyncClient, asked: str) -> None:
    response = await api.get("/v1/clusters", headers={"OpenStack-API-Version": asked})
    assert_error(response, 406, "maximum is '1.14'")


@pytest.mark.parametrize("asked", ["clustering 1", "clustering 0.9", "clustering 1.x"])
async def test_malformed_microversion_is_400(api: httpx.AsyncClient, asked: str) -> None:
    response = await api.get("/cluster/v1/nodes", headers={"OpenStack-API-Version": asked})
    assert_error(response, 400, "major.minor")


async def test_heat_paths_are_not_negotiated(api: httpx.AsyncClient) -> None:
    response = await api.get("/v1/whoami", headers={"OpenStack-API-Version": "clustering 9.9"})
    assert response.status_code == 200
    assert "OpenStack-API-Version" not in response.headers


async def test_scale_in_with_null_count_means_one(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/cluster/v1/clusters/nope/actions", json={"scale_in": {"count": None}}
    )
    assert_error(response, 404, "nope")


async def test_unknown_cluster_policy_binding_is_404(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/cluster/v1/clusters/nope/policies"), 404, "nope")
    assert_error(await api.get("/v1/clusters/nope/policies/p1"), 404, "nope")


async def test_events_accept_senlin_filter_names(api: httpx.AsyncClient) -> None:
    response = await api.get("/cluster/v1/events", params={"oid": "x", "otype": "CLUSTER"})
    assert response.status_code == 200 and response.json() == {"events": []}
    listed = await api.get("/cluster/v1/actions", params={"cluster_id": "x"})
    assert listed.status_code == 200 and listed.json() == {"actions": []}


LATEST = {"OpenStack-API-Version": "clustering 1.14"}


async def test_profile_and_policy_types_list_as_the_microversion_says(
    api: httpx.AsyncClient,
) -> None:
    old = (await api.get("/cluster/v1/profile-types")).json()["profile_types"]
    assert old == [
        {"name": "os.nova.server-1.0"},
        {"name": "os.nova.server-1.1"},
        {"name": "os.heat.stack-1.0"},
    ]
    servers = (await api.get("/cluster/v1/profile-types", headers=LATEST)).json()["profile_types"]
    assert [(s["name"], s["version"]) for s in servers] == [
        ("os.nova.server", "1.0"),
        ("os.nova.server", "1.1"),
        ("os.heat.stack", "1.0"),
    ]
    assert servers[1]["support_status"] == {"1.1": [{"status": "SUPPORTED", "since": "2023.04"}]}
    policies = (await api.get("/cluster/v1/policy-types", headers=LATEST)).json()
    assert {(p["name"], p["version"]) for p in policies["policy_types"]} == {
        ("senlin.policy.deletion", "1.1"),
        ("senlin.policy.health", "1.1"),
        ("senlin.policy.batch", "1.0"),
        ("senlin.policy.scaling", "1.0"),
        ("senlin.policy.loadbalance", "1.1"),
        ("senlin.policy.zone_placement", "1.0"),
        ("senlin.policy.affinity", "1.0"),
    }


async def test_a_type_shows_the_schema_its_specs_are_checked_against(
    api: httpx.AsyncClient,
) -> None:
    shown = await api.get("/cluster/v1/policy-types/senlin.policy.deletion-1.1", headers=LATEST)
    assert shown.status_code == 200, shown.text
    policy_type = shown.json()["policy_type"]
    assert policy_type["name"] == "senlin.policy.deletion-1.1"
    criteria = policy_type["schema"]["criteria"]
    assert criteria["constraints"][0]["constraint"] == [
        "RANDOM",
        "OLDEST_FIRST",
        "OLDEST_PROFILE_FIRST",
        "YOUNGEST_FIRST",
    ]
    # What the schema allows, a spec may use: a criteria outside it is a 400.
    bad = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {"criteria": "X"}}
    refused = await api.post("/v1/policies", json={"policy": {"name": "p", "spec": bad}})
    assert_error(refused, 400, "criteria")

    server = (await api.get("/v1/profile-types/os.nova.server-1.0")).json()["profile_type"]
    assert [k for k, v in server["schema"].items() if v["required"]] == ["flavor"]
    assert len(server["schema"]) == 16  # Senlin's whole `properties_schema`
    assert "support_status" not in server  # before microversion 1.5, as Senlin
    newer = await api.get("/cluster/v1/profile-types/os.nova.server-1.1", headers=LATEST)
    assert newer.status_code == 200, newer.text
    assert newer.json()["profile_type"]["name"] == "os.nova.server-1.1"
    assert newer.json()["profile_type"]["schema"] == server["schema"]
    assert set(newer.json()["profile_type"]["support_status"]) == {"1.0", "1.1"}
    assert_error(
        await api.get("/v1/policy-types/senlin.policy.bogus-1.0"),
        404,
        "The policy_type 'senlin.policy.bogus-1.0' could not be found.",
    )


async def test_build_info_names_the_api_and_warden_revisions(api: httpx.AsyncClient) -> None:
    info = (await api.get("/cluster/v1/build-info")).json()["build_info"]
    assert info["api"] == {"revision": "1.0"}
    assert info["engine"]["revision"] == importlib.metadata.version("warden")
    assert (await api.get("/v1/build-info", headers={"X-Auth-Token": "nope"})).status_code == 401
