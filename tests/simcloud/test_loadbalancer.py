"""simcloud's Octavia: pool members whose operating_status follows their servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support.cloud_ids import CIRROS
from tests.support.simcloud_server import in_process_simcloud, login

POOL = "/load-balancer/v2/lbaas/pools/pool-1/members"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud() as client:
        client.headers.update(await login(client))
        yield client


async def create(client: httpx.AsyncClient, name: str, metadata: dict[str, str]) -> dict[str, Any]:
    body = {"server": {"name": name, "imageRef": CIRROS, "flavorRef": "1", "metadata": metadata}}
    server_id = (await client.post("/compute/v2.1/servers", json=body)).json()["server"]["id"]
    server: dict[str, Any] = (await client.get(f"/compute/v2.1/servers/{server_id}")).json()[
        "server"
    ]
    return server


async def statuses(client: httpx.AsyncClient) -> dict[str, str]:
    response = await client.get(POOL)
    assert response.status_code == 200, response.text
    return {m["name"]: m["operating_status"] for m in response.json()["members"]}


async def test_servers_join_a_pool_by_metadata_and_follow_their_status(
    client: httpx.AsyncClient,
) -> None:
    web1 = await create(client, "web-1", {"lb_pool_id": "pool-1", "lb_protocol_port": "8080"})
    web2 = await create(client, "web-2", {"lb_pool_id": "pool-1"})
    web3 = await create(client, "web-3", {"lb_pool_id": "pool-1"})
    await create(client, "other", {"lb_pool_id": "pool-2"})

    healthy = await statuses(client)
    await client.post(f"/sim/servers/{web1['id']}/fault", json={"kind": "lb_offline"})
    await client.post(f"/compute/v2.1/servers/{web2['id']}/action", json={"os-stop": None})
    await client.post(f"/sim/servers/{web3['id']}/fault", json={"kind": "vanish"})
    broken = await statuses(client)
    ports = {m["name"]: m["protocol_port"] for m in (await client.get(POOL)).json()["members"]}

    assert healthy == {"web-1": "ONLINE", "web-2": "ONLINE", "web-3": "ONLINE"}
    assert broken == {"web-1": "OFFLINE", "web-2": "ERROR"}
    assert ports == {"web-1": 8080, "web-2": 80}


async def test_lb_offline_fault_is_cured_by_reboot(client: httpx.AsyncClient) -> None:
    server = await create(client, "web-1", {"lb_pool_id": "pool-1"})
    await client.post(
        f"/sim/servers/{server['id']}/fault", json={"kind": "lb_offline", "cured_by": ["REBOOT"]}
    )

    await client.post(
        f"/compute/v2.1/servers/{server['id']}/action", json={"reboot": {"type": "SOFT"}}
    )

    assert await statuses(client) == {"web-1": "ONLINE"}


async def test_members_added_through_the_api_link_to_servers_by_address(
    client: httpx.AsyncClient,
) -> None:
    server = await create(client, "db-1", {})
    address = server["addresses"]["private"][0]["addr"]

    added = await client.post(
        POOL, json={"member": {"address": address, "protocol_port": 5432, "name": "db"}}
    )
    stray = await client.post(POOL, json={"member": {"address": "192.0.2.9", "protocol_port": 1}})
    duplicate = await client.post(
        POOL, json={"member": {"address": address, "protocol_port": 5432}}
    )
    member_id = added.json()["member"]["id"]
    shown = await client.get(f"{POOL}/{member_id}")
    deleted = await client.delete(f"{POOL}/{member_id}")
    gone = await client.get(f"{POOL}/{member_id}")

    assert added.status_code == 201
    assert added.json()["member"]["operating_status"] == "ONLINE"
    assert stray.json()["member"]["operating_status"] == "ERROR"
    assert duplicate.status_code == 409
    assert shown.json()["member"]["address"] == address
    assert (deleted.status_code, gone.status_code) == (204, 404)


async def test_unknown_pool_gets_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/load-balancer/v2/lbaas/pools/nope/members")

    assert response.status_code == 404
    assert "faultstring" in response.json()


@pytest.mark.parametrize(
    "member",
    [
        {},
        {"address": "not-an-ip", "protocol_port": 80},
        {"address": "10.0.0.1", "protocol_port": 0},
        {"address": "10.0.0.1", "protocol_port": 80, "color": "red"},
    ],
)
async def test_bad_member_bodies_get_400(client: httpx.AsyncClient, member: Any) -> None:
    response = await client.post(POOL, json={"member": member})

    assert response.status_code == 400


async def test_members_of_a_pool_known_by_its_members_change_at_once(
    client: httpx.AsyncClient,
) -> None:
    server = await create(client, "db-1", {})
    joined = await create(client, "web-1", {"lb_pool_id": "pool-1"})
    address = server["addresses"]["private"][0]["addr"]
    added = await client.post(POOL, json={"member": {"address": address, "protocol_port": 5432}})
    member_id = added.json()["member"]["id"]
    joined_id = next(
        m["id"] for m in (await client.get(POOL)).json()["members"] if m["name"] == joined["name"]
    )

    updated = await client.put(
        f"{POOL}/{member_id}", json={"member": {"admin_state_up": False, "weight": 5}}
    )
    metadata_member = await client.put(f"{POOL}/{joined_id}", json={"member": {"weight": 5}})

    member = updated.json()["member"]
    assert added.json()["member"]["provisioning_status"] == "ACTIVE"
    assert (member["provisioning_status"], member["operating_status"]) == ("ACTIVE", "OFFLINE")
    assert (member["weight"], member["admin_state_up"]) == (5, False)
    assert metadata_member.status_code == 404
