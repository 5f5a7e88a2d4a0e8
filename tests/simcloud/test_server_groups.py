"""simcloud's Nova `os-server-groups` (api-ref samples' shapes) and the scheduler that
honours them: anti-affinity puts each member on a host of its own and fails the build
Nova's way when none is left; affinity keeps them together; soft- policies never fail."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

GROUPS = "/compute/v2.1/os-server-groups"
SERVERS = "/compute/v2.1/servers"
V264 = {"OpenStack-API-Version": "compute 2.64"}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(compute_hosts=("host-a", "host-b"))) as client:
        client.headers.update(await login(client))
        yield client


async def group(client: httpx.AsyncClient, policy: str) -> dict[str, Any]:
    # soft- policies need 2.15
    headers = {"OpenStack-API-Version": "compute 2.15"} if policy.startswith("soft") else {}
    body = {"server_group": {"name": "g", "policies": [policy]}}
    made = await client.post(GROUPS, json=body, headers=headers)
    assert made.status_code == 200, made.text
    return dict(made.json()["server_group"])


async def boot(client: httpx.AsyncClient, group_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"server": {"name": "vm", "imageRef": CIRROS, "flavorRef": SMALL}}
    if group_id is not None:
        body["os:scheduler_hints"] = {"group": group_id}
    made = await client.post(SERVERS, json=body)
    assert made.status_code == 202, made.text
    shown = await client.get(f"{SERVERS}/{made.json()['server']['id']}")
    return dict(shown.json()["server"])


async def test_a_group_is_shown_in_the_microversion_asked_for(client: httpx.AsyncClient) -> None:
    made = await group(client, "anti-affinity")
    assert set(made) == {"id", "name", "policies", "members", "metadata"}
    assert (made["policies"], made["members"], made["metadata"]) == (["anti-affinity"], [], {})

    newer = await client.post(
        GROUPS, json={"server_group": {"name": "n", "policy": "affinity"}}, headers=V264
    )
    assert newer.status_code == 200, newer.text
    shown = newer.json()["server_group"]
    assert set(shown) == {"id", "name", "policy", "rules", "members", "project_id", "user_id"}
    listed = (await client.get(GROUPS)).json()["server_groups"]
    assert sorted(g["id"] for g in listed) == sorted([made["id"], shown["id"]])

    assert (await client.delete(f"{GROUPS}/{made['id']}")).status_code == 204
    gone = await client.get(f"{GROUPS}/{made['id']}")
    assert gone.status_code == 404
    assert gone.json()["itemNotFound"]["message"] == (
        f"Instance group {made['id']} could not be found."
    )


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        ({"name": "g", "policies": ["spread"]}, {}),
        ({"name": "g", "policies": ["affinity", "anti-affinity"]}, {}),
        ({"name": "g", "policies": ["soft-affinity"]}, {}),
        ({"name": "g", "policy": "affinity"}, {}),
        ({"name": "g", "policies": ["affinity"]}, V264),
        ({"name": "", "policies": ["affinity"]}, {}),
    ],
)
async def test_a_bad_group_is_a_400(
    client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
) -> None:
    answer = await client.post(GROUPS, json={"server_group": body}, headers=headers)
    assert answer.status_code == 400, answer.text
    assert "badRequest" in answer.json()


async def test_anti_affinity_spreads_members_and_fails_the_one_too_many(
    client: httpx.AsyncClient,
) -> None:
    anti = await group(client, "anti-affinity")
    first, second = await boot(client, anti["id"]), await boot(client, anti["id"])
    assert first["hostId"] != second["hostId"]
    third = await boot(client, anti["id"])
    assert third["status"] == "ERROR"
    assert third["fault"]["message"] == (
        "No valid host was found. There are not enough hosts available."
    )
    members = (await client.get(f"{GROUPS}/{anti['id']}")).json()["server_group"]["members"]
    assert sorted(members) == sorted([first["id"], second["id"], third["id"]])

    # A deleted member leaves the group and frees its host.
    assert (await client.delete(f"{SERVERS}/{first['id']}")).status_code == 204
    fourth = await boot(client, anti["id"])
    assert fourth["status"] != "ERROR" and fourth["hostId"] == first["hostId"]
    soft = await group(client, "soft-anti-affinity")
    assert all([(await boot(client, soft["id"]))["status"] != "ERROR" for _ in range(3)])


async def test_affinity_keeps_members_on_one_host(client: httpx.AsyncClient) -> None:
    together = await group(client, "affinity")
    hosts = {(await boot(client, together["id"]))["hostId"] for _ in range(3)}
    assert len(hosts) == 1


async def test_an_unknown_group_hint_is_nova_s_400(client: httpx.AsyncClient) -> None:
    body = {
        "server": {"name": "vm", "imageRef": CIRROS, "flavorRef": SMALL},
        "os:scheduler_hints": {"group": "5b4d6e5c-0d31-4f62-9a4e-2f2f4a5b6c7d"},
    }
    answer = await client.post(SERVERS, json=body)
    assert answer.status_code == 400
    assert answer.json()["badRequest"]["message"] == (
        "Instance group 5b4d6e5c-0d31-4f62-9a4e-2f2f4a5b6c7d could not be found."
    )
    body["os:scheduler_hints"] = {"group": "not-a-uuid"}
    assert (await client.post(SERVERS, json=body)).status_code == 400
