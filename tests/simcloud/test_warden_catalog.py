"""simcloud's Keystone for OpenStack clients: version discovery, and a catalog listing
Warden as Heat (orchestration) and Senlin (clustering)."""

from __future__ import annotations

from typing import Any

from config import Settings
from simcloud.__main__ import parse_args
from simcloud.config import SimConfig
from tests.support.simcloud_server import PASSWORD_AUTH, in_process_simcloud, login


def endpoints(token: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (svc["type"], ep["interface"]): (svc["name"], ep["url"])
        for svc in token["catalog"]
        for ep in svc["endpoints"]
    }


async def test_catalog_lists_warden_with_the_project_id_substituted() -> None:
    config = SimConfig(warden_url="http://warden:8004/")
    async with in_process_simcloud(config) as client:
        headers = await login(client)
        response = await client.get(
            "/identity/v3/auth/tokens",
            headers={**headers, "X-Subject-Token": headers["X-Auth-Token"]},
        )
    token = response.json()["token"]
    project_id = token["project"]["id"]

    urls = endpoints(token)

    assert urls[("orchestration", "public")] == ("heat", f"http://warden:8004/v1/{project_id}")
    assert urls[("clustering", "public")] == ("senlin", "http://warden:8004/cluster")
    assert urls[("orchestration", "internal")][1] == f"http://warden:8004/v1/{project_id}"
    assert urls[("compute", "public")] == ("nova", "http://simcloud/compute/v2.1")
    assert [r["name"] for r in token["roles"]] == ["member"]


async def test_catalog_has_no_warden_entries_without_a_warden_url() -> None:
    async with in_process_simcloud(SimConfig()) as client:
        response = await client.post("/identity/v3/auth/tokens", json=PASSWORD_AUTH)
    kinds = {svc["type"] for svc in response.json()["token"]["catalog"]}

    assert "orchestration" not in kinds and "clustering" not in kinds
    assert {"identity", "compute"} <= kinds


def test_warden_url_option_falls_back_to_its_setting() -> None:
    settings = Settings(simcloud_warden_url="http://127.0.0.1:9999")

    assert parse_args(settings, []).warden_url == "http://127.0.0.1:9999"
    assert parse_args(settings, ["--warden-url", "http://w:1"]).warden_url == "http://w:1"


async def test_keystone_version_discovery_answers_keystoneauth() -> None:
    async with in_process_simcloud() as client:
        v3 = await client.get("/identity/v3")
        root = await client.get("/identity")

    assert v3.status_code == 200
    assert v3.json()["version"]["id"].startswith("v3.")
    assert v3.json()["version"]["links"][0]["href"] == "http://simcloud/identity/v3/"
    assert root.status_code == 300
    assert [v["status"] for v in root.json()["versions"]["values"]] == ["stable"]
