"""API rules that need no Temporal: auth, error bodies, limits, profiles, reads, health."""

from __future__ import annotations

import json

import httpx
import pytest

PROFILE = {
    "profile": {
        "name": "small",
        "spec": {
            "type": "os.nova.server",
            "version": "1.0",
            "properties": {"flavor": "m1.tiny", "image": "cirros"},
        },
    }
}


def assert_error(response: httpx.Response, code: int, needle: str) -> None:
    assert response.status_code == code, response.text
    body = response.json()
    assert body["error"]["code"] == code
    assert needle in body["error"]["message"]
    assert "Traceback" not in response.text


async def test_missing_and_unknown_tokens_get_401(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/v1/actions", headers={"X-Auth-Token": ""}), 401, "token")
    assert_error(await api.get("/v1/actions", headers={"X-Auth-Token": "nope"}), 401, "not valid")


async def test_whoami_names_the_tokens_project_and_roles(api: httpx.AsyncClient) -> None:
    assert (await api.get("/v1/whoami")).json() == {"project_id": "demo", "roles": ["admin"]}
    other = await api.get("/v1/whoami", headers={"X-Auth-Token": "member-other"})
    assert other.json() == {"project_id": "other", "roles": ["member"]}
    assert_error(await api.get("/v1/whoami", headers={"X-Auth-Token": "nope"}), 401, "not valid")


async def test_reader_may_read_but_not_write(api: httpx.AsyncClient) -> None:
    reader = {"X-Auth-Token": "reader-demo"}
    assert (await api.get("/v1/profiles", headers=reader)).status_code == 200
    assert_error(await api.post("/v1/profiles", json=PROFILE, headers=reader), 403, "reader")


async def test_objects_of_another_project_are_404(api: httpx.AsyncClient) -> None:
    created = (await api.post("/v1/profiles", json=PROFILE)).json()["profile"]
    other = {"X-Auth-Token": "member-other"}
    assert_error(await api.get(f"/v1/profiles/{created['id']}", headers=other), 404, "not be found")
    assert (await api.get(f"/v1/profiles/{created['id']}")).status_code == 200


async def test_profile_crud(api: httpx.AsyncClient) -> None:
    created = await api.post("/v1/profiles", json=PROFILE)
    assert created.status_code == 201
    profile = created.json()["profile"]
    assert profile["spec"]["properties"]["image"] == "cirros"
    by_name = await api.get("/v1/profiles/small")
    assert by_name.json()["profile"]["id"] == profile["id"]
    assert [p["id"] for p in (await api.get("/v1/profiles")).json()["profiles"]] == [profile["id"]]
    assert (await api.delete(f"/v1/profiles/{profile['id']}")).status_code == 204
    assert_error(await api.delete(f"/v1/profiles/{profile['id']}"), 404, "could not be found")


async def test_a_profile_is_renamed_and_its_metadata_replaced_never_its_spec(
    api: httpx.AsyncClient,
) -> None:
    made = (await api.post("/v1/profiles", json=PROFILE)).json()["profile"]
    url = f"/v1/profiles/{made['id']}"

    renamed = await api.patch(url, json={"profile": {"name": "big", "metadata": {"n": 1}}})
    shown = (await api.get(url)).json()["profile"]

    assert renamed.status_code == 200, renamed.text
    assert (shown["name"], shown["metadata"], shown["spec"]) == ("big", {"n": 1}, made["spec"])
    assert shown["type"] == "os.nova.server-1.0"
    assert_error(await api.patch(url, json={"profile": {}}), 400, "No property needs an update.")
    assert_error(
        await api.patch(url, json={"profile": {"spec": {}}}),
        400,
        "Additional properties are not allowed ('spec' was unexpected)",
    )
    assert_error(
        await api.patch(url, json={}),
        400,
        "Malformed request data, missing 'profile' key in request body.",
    )
    assert_error(
        await api.patch("/v1/profiles/nope", json={"profile": {"name": "x"}}),
        404,
        "The profile 'nope' could not be found.",
    )


async def test_a_spec_is_validated_without_storing_a_profile(api: httpx.AsyncClient) -> None:
    spec = {"type": "os.nova.server", "version": "1.0", "properties": {"flavor": "m1.tiny"}}
    checked = await api.post("/v1/profiles/validate", json={"profile": {"spec": spec}})
    bad_spec = {**spec, "properties": {"flavor": "m1.tiny", "bogus": 1}}

    assert checked.status_code == 200, checked.text
    profile = checked.json()["profile"]
    assert (profile["id"], profile["name"]) == (None, "validated_profile")
    assert profile["type"] == "os.nova.server-1.0"
    assert (await api.get("/v1/profiles")).json()["profiles"] == []
    bad = await api.post("/v1/profiles/validate", json={"profile": {"spec": bad_spec}})
    assert bad.status_code == 400, bad.text


async def test_null_metadata_is_none_and_any_json_value_is_kept(api: httpx.AsyncClient) -> None:
    body = {"profile": {**PROFILE["profile"], "metadata": None}}
    made = (await api.post("/v1/profiles", json=body)).json()["profile"]
    nested = {"profile": {**PROFILE["profile"], "metadata": {"wait": 1, "tags": ["a"]}}}
    typed = (await api.post("/v1/profiles", json=nested)).json()["profile"]

    assert made["metadata"] == {}
    assert typed["metadata"] == {"wait": 1, "tags": ["a"]}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        # Senlin's words (jsonschema's) on the clustering API
        (
            {"profile": {**PROFILE["profile"], "colour": "red"}},
            "Additional properties are not allowed ('colour' was unexpected)",
        ),
        ({"profile": {"name": "x"}}, "'spec' is a required property"),
        ({"name": "x"}, "Request body missing 'profile' key."),
        ({"profile": {**PROFILE["profile"], "name": 42}}, "profile.name"),
    ],
)
async def test_bad_bodies_get_400_naming_the_field(
    api: httpx.AsyncClient, body: dict[str, object], needle: str
) -> None:
    assert_error(await api.post("/v1/profiles", json=body), 400, needle)


async def test_an_unknown_profile_type_is_senlins_404(api: httpx.AsyncClient) -> None:
    spec = {"type": "os.zun.container", "version": "1.0", "properties": {}}
    answer = await api.post("/v1/profiles", json={"profile": {**PROFILE["profile"], "spec": spec}})
    assert_error(answer, 404, "The profile_type 'os.zun.container-1.0' could not be found.")


async def test_malformed_json_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/v1/profiles", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert_error(response, 400, "Malformed JSON")


async def test_oversized_body_is_413(api: httpx.AsyncClient) -> None:
    big = json.dumps({"profile": {"name": "x" * 10_000}}).encode()
    response = await api.post(
        "/v1/profiles", content=big, headers={"Content-Type": "application/json"}
    )
    assert_error(response, 413, "larger than 4096 bytes")


async def test_unknown_route_and_method_get_json_errors(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/v1/nothing-here"), 404, "Not Found")
    assert_error(await api.put("/v1/profiles"), 405, "Method Not Allowed")


async def test_cluster_with_unknown_profile_is_400_before_temporal(api: httpx.AsyncClient) -> None:
    body = {"cluster": {"name": "web", "profile_id": "missing", "desired_capacity": 1}}
    assert_error(await api.post("/v1/clusters", json=body), 400, "'missing' could not be found")


async def test_cluster_size_contradiction_is_400(api: httpx.AsyncClient) -> None:
    body = {"cluster": {"name": "web", "profile_id": "p", "desired_capacity": 0, "min_size": 1}}
    assert_error(
        await api.post("/v1/clusters", json=body),
        400,
        "The target capacity (0) is less than the specified min_size (1).",
    )


async def test_temporal_unreachable_is_503_not_500(api: httpx.AsyncClient) -> None:
    await api.post("/v1/profiles", json=PROFILE)
    body = {"cluster": {"name": "web", "profile_id": "small", "desired_capacity": 1}}
    assert_error(await api.post("/v1/clusters", json=body), 503, "Temporal")


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({}, "No action specified"),
        ({"check": {}, "lock": {}}, "Multiple actions specified"),
        ({"explode": {}}, "Unrecognized action 'explode' specified"),
        ({"check": []}, "The data provided is not a map"),
    ],
)
async def test_cluster_action_body_rules(
    api: httpx.AsyncClient, body: dict[str, object], needle: str
) -> None:
    assert_error(await api.post("/v1/clusters/c1/actions", json=body), 400, needle)


async def test_reads_of_unknown_objects_are_404(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/v1/actions/nope"), 404, "'nope'")
    assert_error(await api.get("/v1/clusters/nope"), 404, "'nope'")
    assert_error(await api.get("/v1/nodes/nope"), 404, "'nope'")
    assert (await api.get("/v1/events")).json() == {"events": []}
    assert (await api.get("/v1/actions?status=RUNNING")).json() == {"actions": []}
    assert_error(await api.get("/v1/actions?status=BOGUS"), 400, "Field value BOGUS is invalid")


async def test_health_is_health_json_without_versions(api: httpx.AsyncClient) -> None:
    await api.get("/v1/profiles")  # a database call records the database check
    response = await api.get("/health", headers={"X-Auth-Token": ""})
    assert response.headers["content-type"] == "application/health+json"
    assert response.headers["cache-control"] == "max-age=300"
    body = response.json()
    assert body["version"] == "1.0" and body["description"] == "warden-api"
    assert body["checks"]["database:connection"][0]["status"] == "pass"
    text = response.text.lower()
    assert "python" not in text and "linux" not in text and "3.11" not in text


async def test_every_route_is_in_the_openapi_document(api: httpx.AsyncClient) -> None:
    paths = (await api.get("/openapi.json")).json()["paths"]
    for path in (
        "/v1/actions",
        "/v1/actions/{action_id}",
        "/v1/events",
        "/v1/profiles",
        "/v1/clusters",
        "/v1/clusters/{cluster_id}/actions",
        "/v1/nodes",
        "/v1/whoami",
        "/health",
    ):
        assert path in paths


async def test_lists_take_senlins_parameters_and_refuse_the_rest(api: httpx.AsyncClient) -> None:
    for name in ("b", "a", "c"):
        body = {"profile": {**PROFILE["profile"], "name": name}}
        assert (await api.post("/v1/profiles", json=body)).status_code == 201
    member = {"X-Auth-Token": "member-other"}

    def names(response: httpx.Response) -> list[str]:
        assert response.status_code == 200, response.text
        return [p["name"] for p in response.json()["profiles"]]

    assert names(await api.get("/v1/profiles?sort=name:desc")) == ["c", "b", "a"]
    assert names(await api.get("/v1/profiles?sort=name&limit=2")) == ["a", "b"]
    assert names(await api.get("/v1/profiles?name=a&name=c&sort=name")) == ["a", "c"]
    assert_error(await api.get("/v1/clusters?bogus=1"), 400, "Invalid parameter 'bogus'")
    assert_error(await api.get("/v1/profiles?bogus=1"), 400, "Invalid parameter bogus")
    assert_error(await api.get("/v1/nodes?limit=x"), 400, "The value for limit must be an integer")
    assert_error(
        await api.get("/v1/receivers?global_project=True", headers=member),
        403,
        "You are not authorized to complete this operation.",
    )
    assert_error(
        await api.get("/v1/nodes?cluster_id=fake"), 400, "Cannot find the given cluster: fake."
    )
