"""simcloud's in-place server updates: rename and metadata, as Nova answers them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


@pytest.fixture
async def server_id(client: httpx.AsyncClient) -> str:
    body = {
        "server": {"name": "web-1", "imageRef": CIRROS, "flavorRef": SMALL, "metadata": {"a": "1"}}
    }
    return str((await client.post(SERVERS, json=body)).json()["server"]["id"])


async def test_a_rename_shows_in_the_server_and_in_name_filters(
    client: httpx.AsyncClient, server_id: str
) -> None:
    renamed = await client.put(f"{SERVERS}/{server_id}", json={"server": {"name": "web-9"}})
    assert renamed.status_code == 200 and renamed.json()["server"]["name"] == "web-9"
    listed = (await client.get(f"{SERVERS}/detail", params={"name": "^web-9$"})).json()
    assert [s["id"] for s in listed["servers"]] == [server_id]
    unknown = await client.put(f"{SERVERS}/{server_id}", json={"server": {"flavorRef": "2"}})
    assert unknown.status_code == 400


async def test_metadata_is_replaced_by_put_merged_by_post_and_locked_servers_refuse(
    client: httpx.AsyncClient, server_id: str
) -> None:
    url = f"{SERVERS}/{server_id}/metadata"
    assert (await client.put(url, json={"metadata": {"b": "2"}})).json() == {"metadata": {"b": "2"}}
    merged = await client.post(url, json={"metadata": {"c": "3"}})
    assert merged.json() == {"metadata": {"b": "2", "c": "3"}}
    assert (await client.get(f"{SERVERS}/{server_id}")).json()["server"]["metadata"] == {
        "b": "2",
        "c": "3",
    }
    await client.post(f"{SERVERS}/{server_id}/action", json={"lock": None})
    refused = await client.put(url, json={"metadata": {}})
    assert refused.status_code == 409
    assert refused.json()["conflictingRequest"]["message"] == f"Instance {server_id} is locked"
