"""simcloud holds 10,000 servers and lists them all (functional; timing is in bench/)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(max_limit=0)) as client:
        client.headers.update(await login(client))
        seeded = await client.post("/sim/seed", json={"count": 10_000, "name_prefix": "node"})
        assert seeded.status_code == 201
        yield client


async def test_detail_lists_all_ten_thousand_servers(client: httpx.AsyncClient) -> None:
    response = await client.get(f"{SERVERS}/detail")

    servers = response.json()["servers"]
    assert len(servers) == 10_000
    assert len({s["id"] for s in servers}) == 10_000
    assert {s["status"] for s in servers} == {"ACTIVE"}
    assert servers[0]["name"] == "node-9999"


async def test_exact_name_lookup_among_ten_thousand(client: httpx.AsyncClient) -> None:
    response = await client.get(f"{SERVERS}/detail", params={"name": r"^node\-4242$"})

    assert [s["name"] for s in response.json()["servers"]] == ["node-4242"]


async def test_paged_walk_visits_every_server_once(client: httpx.AsyncClient) -> None:
    seen: list[str] = []
    params = {"limit": "1000"}
    while True:
        body = (await client.get(f"{SERVERS}/detail", params=params)).json()
        seen.extend(s["id"] for s in body["servers"])
        if "servers_links" not in body:
            break
        params["marker"] = seen[-1]

    assert len(seen) == len(set(seen)) == 10_000


async def test_state_summary_counts_ten_thousand(client: httpx.AsyncClient) -> None:
    state = (await client.get("/sim/state")).json()

    assert state["servers"] == 10_000
    assert state["by_status"] == {"ACTIVE": 10_000}
