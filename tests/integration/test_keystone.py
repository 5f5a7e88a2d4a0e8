"""Keystone mode over HTTP: a password token from simcloud's Keystone drives the API, and
keystoneauth1 finds Warden in the catalog as orchestration and clustering."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from tests.integration.conftest import Warden
from tests.support.simcloud_server import PASSWORD_AUTH

pytestmark = pytest.mark.integration


async def keystone_token(warden: Warden) -> tuple[str, str]:
    """A project-scoped token for simcloud's `warden` user, and its project id."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(f"{warden.auth_url}/auth/tokens", json=PASSWORD_AUTH)
    assert response.status_code == 201, response.text
    return response.headers["X-Subject-Token"], response.json()["token"]["project"]["id"]


async def test_keystone_password_token_lists_stacks_and_clusters(warden: Warden) -> None:
    token, project_id = await keystone_token(warden)

    async with warden.client(token) as api:
        whoami = await api.get("/v1/whoami")
        stacks = await api.get(f"/v1/{project_id}/stacks")
        clusters = await api.get("/v1/clusters")
        other = await api.get("/v1/demo/stacks")

    assert whoami.json() == {"project_id": project_id, "roles": ["member"]}
    assert stacks.status_code == 200, stacks.text
    assert isinstance(stacks.json()["stacks"], list)
    assert clusters.status_code == 200, clusters.text
    assert other.status_code == 403  # `demo` is the project's name, not its id


async def test_static_and_bogus_tokens_still_answer_as_before(warden: Warden) -> None:
    async with warden.client("it-admin") as admin, warden.client("bogus") as bogus:
        assert (await admin.get("/v1/whoami")).json() == {"project_id": "demo", "roles": ["admin"]}
        refused = await bogus.get("/v1/clusters")

    assert refused.status_code == 401
    assert "expired or revoked" in refused.json()["error"]["message"]


def catalog_endpoints(auth_url: str) -> tuple[str, str, str]:
    """Orchestration and clustering endpoints, and the project id, as keystoneauth1 sees them."""
    auth = v3.Password(
        auth_url=auth_url,
        username="warden",
        password="warden-secret",
        project_name="demo",
        user_domain_name="Default",
        project_domain_name="Default",
    )
    session = ks_session.Session(auth=auth)
    orchestration = session.get_endpoint(service_type="orchestration", interface="public")
    clustering = session.get_endpoint(service_type="clustering", interface="public")
    project_id = session.get_project_id()
    assert orchestration and clustering and project_id
    return orchestration, clustering, project_id


async def test_keystoneauth_finds_warden_as_orchestration_and_clustering(warden: Warden) -> None:
    orchestration, clustering, project_id = await asyncio.to_thread(
        catalog_endpoints, warden.auth_url
    )

    assert orchestration == f"{warden.api_url}/v1/{project_id}"
    assert clustering == f"{warden.api_url}/cluster"
