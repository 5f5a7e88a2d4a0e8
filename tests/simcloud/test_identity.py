"""simcloud's Keystone: tokens, catalog, credentials, revocation, expiry."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from config import Settings
from simcloud.config import SimConfig
from tests.support.simcloud_server import PASSWORD_AUTH, in_process_simcloud, login

APP_CRED_AUTH = {
    "auth": {
        "identity": {
            "methods": ["application_credential"],
            "application_credential": {"id": "warden-app-cred", "secret": "warden-app-secret"},
        }
    }
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(token_ttl_s=600)) as client:
        yield client


def _with(body: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(body)
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return changed


async def test_password_token_has_subject_header_and_catalog_on_request_base_url(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/identity/v3/auth/tokens", json=PASSWORD_AUTH)

    assert response.status_code == 201
    assert response.headers["X-Subject-Token"]
    token = response.json()["token"]
    assert token["project"]["name"] == "demo"
    # The project `warden dev` grants its dev token: one project for every client.
    assert token["project"]["id"] == Settings().dev_project_id
    urls = {
        (svc["type"], ep["interface"]): ep["url"]
        for svc in token["catalog"]
        for ep in svc["endpoints"]
    }
    assert urls[("compute", "public")] == "http://simcloud/compute/v2.1"
    assert urls[("messaging", "public")] == "http://simcloud/messaging"
    assert urls[("load-balancer", "internal")] == "http://simcloud/load-balancer"
    assert all(
        ep["region_id"] == "RegionOne" for svc in token["catalog"] for ep in svc["endpoints"]
    )


async def test_application_credential_token_is_project_scoped(client: httpx.AsyncClient) -> None:
    response = await client.post("/identity/v3/auth/tokens", json=APP_CRED_AUTH)

    assert response.status_code == 201
    assert response.json()["token"]["methods"] == ["application_credential"]
    assert response.json()["token"]["catalog"]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["auth", "identity", "password", "user", "password"], "wrong"),
        (["auth", "identity", "password", "user", "name"], "mallory"),
        (["auth", "identity", "password", "user", "domain"], {"name": "Other"}),
        (["auth", "scope", "project", "name"], "someone-else"),
    ],
)
async def test_wrong_password_credentials_get_401(
    client: httpx.AsyncClient, path: list[str], value: Any
) -> None:
    response = await client.post("/identity/v3/auth/tokens", json=_with(PASSWORD_AUTH, path, value))

    assert response.status_code == 401
    assert response.json()["error"]["code"] == 401
    assert "X-Subject-Token" not in response.headers


async def test_wrong_application_credential_secret_gets_401(client: httpx.AsyncClient) -> None:
    body = _with(APP_CRED_AUTH, ["auth", "identity", "application_credential", "secret"], "no")

    response = await client.post("/identity/v3/auth/tokens", json=body)

    assert response.status_code == 401


@pytest.mark.parametrize(
    "body",
    [{}, {"auth": {}}, {"auth": {"identity": {"methods": []}}}, "not json object"],
)
async def test_malformed_auth_body_gets_400(client: httpx.AsyncClient, body: Any) -> None:
    response = await client.post("/identity/v3/auth/tokens", json=body)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == 400


@pytest.mark.parametrize(
    "path",
    [
        "/compute/v2.1/servers/detail",
        "/messaging/v2/queues/q/messages",
        "/load-balancer/v2/lbaas/pools/p/members",
    ],
)
async def test_openstack_apis_require_a_token(client: httpx.AsyncClient, path: str) -> None:
    missing = await client.get(path)
    bogus = await client.get(path, headers={"X-Auth-Token": "bogus"})

    assert missing.status_code == 401
    assert bogus.status_code == 401
    assert "WWW-Authenticate" in missing.headers


async def test_revoked_token_is_refused(client: httpx.AsyncClient) -> None:
    headers = await login(client)
    subject = {"X-Subject-Token": headers["X-Auth-Token"]}

    valid = await client.get("/identity/v3/auth/tokens", headers=headers | subject)
    revoked = await client.delete("/identity/v3/auth/tokens", headers=headers | subject)
    after = await client.get("/compute/v2.1/servers", headers=headers)

    assert valid.status_code == 200
    assert revoked.status_code == 204
    assert after.status_code == 401


async def test_token_expires_when_simulated_time_passes_its_ttl(
    client: httpx.AsyncClient,
) -> None:
    headers = await login(client)
    assert (await client.get("/compute/v2.1/servers", headers=headers)).status_code == 200

    await client.post("/sim/clock", json={"advance_s": 601})

    assert (await client.get("/compute/v2.1/servers", headers=headers)).status_code == 401


async def test_revoke_all_tokens_control_route(client: httpx.AsyncClient) -> None:
    headers = await login(client)

    await client.post("/sim/tokens/revoke")

    assert (await client.get("/compute/v2.1/servers", headers=headers)).status_code == 401
