"""Cluster action bodies, policies and node marks: the API's own 400/404/409 rules."""

from __future__ import annotations

import httpx
import pytest

from tests.api.test_platform_api import assert_error

DELETION = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {
        "hooks": {
            "type": "webhook",
            "params": {"url": "https://app.example/hook", "secret": "s3cret-value"},
            "timeout": 60,
        }
    },
}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"scale_in": {"count": 0}}, "cannot be 0"),
        ({"scale_out": {"count": "many"}}, "count"),
        ({"scale_in": {"count": 1, "force": True}}, "force"),
        ({"resize": {"adjustment_type": "SOME"}}, "adjustment_type"),
        ({"del_nodes": {"nodes": []}}, "nodes"),
        ({"complete_lifecycle": {}}, "lifecycle_action_token"),
        ({"complete_lifecycle": None}, "lifecycle_action_token"),
        ({"heartbeat_lifecycle": {"lifecycle_action_token": "x" * 65}}, "lifecycle_action_token"),
        ({"policy_attach": {}}, "policy_id"),
    ],
)
async def test_bad_action_bodies_are_400_naming_the_field(
    api: httpx.AsyncClient, body: dict[str, object], needle: str
) -> None:
    assert_error(await api.post("/v1/clusters/c1/actions", json=body), 400, needle)


async def test_scale_in_without_body_uses_defaults_and_reaches_the_lookup(
    api: httpx.AsyncClient,
) -> None:
    assert_error(await api.post("/v1/clusters/c1/actions", json={"scale_in": None}), 404, "'c1'")


@pytest.mark.parametrize("signal", ["complete_lifecycle", "heartbeat_lifecycle"])
async def test_a_lifecycle_call_to_an_unknown_cluster_is_404_naming_the_cluster(
    api: httpx.AsyncClient, signal: str
) -> None:
    body = {signal: {"lifecycle_action_token": "tok-1"}}
    assert_error(await api.post("/v1/clusters/c1/actions", json=body), 404, "'c1'")


async def test_policy_secret_is_stored_but_never_shown(api: httpx.AsyncClient) -> None:
    created = await api.post("/v1/policies", json={"policy": {"name": "d", "spec": DELETION}})
    assert created.status_code == 201, created.text
    policy = created.json()["policy"]
    assert policy["has_secret"] is True
    assert "s3cret-value" not in created.text
    listed = await api.get("/v1/policies")
    assert "s3cret-value" not in listed.text
    assert (await api.delete(f"/v1/policies/{policy['id']}")).status_code == 204
    assert_error(await api.get(f"/v1/policies/{policy['id']}"), 404, policy["id"])


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({**DELETION, "version": "2.0"}, "version"),
        ({**DELETION, "extra": 1}, "extra"),
        (
            {
                "type": "senlin.policy.health",
                "version": "1.1",
                "properties": {
                    "detection": {
                        "interval": 5,
                        "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
                    },
                    "recovery": {"actions": [{"name": "REBOOT"}]},
                },
            },
            "interval",
        ),
    ],
)
async def test_invalid_policy_specs_are_400(
    api: httpx.AsyncClient, spec: dict[str, object], needle: str
) -> None:
    assert_error(
        await api.post("/v1/policies", json={"policy": {"name": "bad", "spec": spec}}), 400, needle
    )


async def test_an_unknown_policy_type_is_senlins_404(api: httpx.AsyncClient) -> None:
    spec = {**DELETION, "type": "senlin.policy.bogus"}
    assert_error(
        await api.post("/v1/policies", json={"policy": {"name": "bad", "spec": spec}}),
        404,
        "The policy_type 'senlin.policy.bogus-1.1' could not be found.",
    )


async def test_mark_unhealthy_body_rules(api: httpx.AsyncClient) -> None:
    for body, needle in (
        ({}, "mark_unhealthy"),
        ({"mark_unhealthy": "true"}, "mark_unhealthy"),
        ({"mark_unhealthy": True, "colour": "red"}, "colour"),
    ):
        assert_error(await api.patch("/v1/nodes/n1", json=body), 400, needle)
    assert_error(await api.patch("/v1/nodes/n1", json={"mark_unhealthy": True}), 404, "'n1'")
    assert_error(await api.delete("/v1/nodes/n1"), 404, "'n1'")


async def test_reader_cannot_create_policies(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/v1/policies",
        json={"policy": {"name": "d", "spec": DELETION}},
        headers={"X-Auth-Token": "reader-demo"},
    )
    assert_error(response, 403, "")
