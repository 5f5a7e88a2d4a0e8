"""simcloud's resize, confirm, revert, password and tags, as Nova answers them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, LARGE, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(action_latency_ms=1_000)) as client:
        client.headers.update(await login(client))
        yield client


@pytest.fixture
async def server_id(client: httpx.AsyncClient) -> str:
    body = {"server": {"name": "web-1", "imageRef": CIRROS, "flavorRef": SMALL, "tags": ["a"]}}
    server_id = str((await client.post(SERVERS, json=body)).json()["server"]["id"])
    await settle(client)
    return server_id


async def settle(client: httpx.AsyncClient) -> None:
    await client.post("/sim/clock", json={"advance_s": 1})


async def act(client: httpx.AsyncClient, server_id: str, body: Any) -> httpx.Response:
    return await client.post(f"{SERVERS}/{server_id}/action", json=body)


async def shown(client: httpx.AsyncClient, server_id: str) -> dict[str, Any]:
    server: dict[str, Any] = (await client.get(f"{SERVERS}/{server_id}")).json()["server"]
    return server


async def test_a_resize_waits_in_verify_resize_until_confirmed(
    client: httpx.AsyncClient, server_id: str
) -> None:
    assert (await act(client, server_id, {"resize": {"flavorRef": LARGE}})).status_code == 202
    assert (await shown(client, server_id))["status"] == "RESIZE"
    await settle(client)
    server = await shown(client, server_id)
    assert (server["status"], server["OS-EXT-STS:vm_state"]) == ("VERIFY_RESIZE", "resized")
    assert server["flavor"]["original_name"] == "m1.large"
    again = await act(client, server_id, {"resize": {"flavorRef": SMALL}})
    assert again.status_code == 409
    assert "while it is in vm_state resized" in again.json()["conflictingRequest"]["message"]
    assert (await act(client, server_id, {"confirmResize": None})).status_code == 204
    server = await shown(client, server_id)
    assert (server["status"], server["flavor"]["original_name"]) == ("ACTIVE", "m1.large")
    unresized = await act(client, server_id, {"confirmResize": None})
    assert unresized.status_code == 409


async def test_a_revert_goes_back_to_the_old_flavor(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await act(client, server_id, {"resize": {"flavorRef": LARGE}})
    await settle(client)
    assert (await act(client, server_id, {"revertResize": None})).status_code == 202
    assert (await shown(client, server_id))["status"] == "REVERT_RESIZE"
    await settle(client)
    server = await shown(client, server_id)
    assert (server["status"], server["flavor"]["original_name"]) == ("ACTIVE", "m1.small")


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"resize": {"flavorRef": "no-such"}}, 400, "Flavor no-such could not be found."),
        ({"resize": {"flavorRef": SMALL}}, 400, "When resizing, instances must change flavor!"),
        ({"resize": {}}, 400, "Invalid input for field/attribute resize."),
        ({"changePassword": {}}, 400, "Invalid input for field/attribute changePassword."),
    ],
)
async def test_bad_resizes_are_novas_400s(
    client: httpx.AsyncClient, server_id: str, body: Any, code: int, words: str
) -> None:
    refused = await act(client, server_id, body)
    assert refused.status_code == code
    assert words in refused.json()["badRequest"]["message"]


async def test_a_password_change_is_accepted_on_an_active_unlocked_server(
    client: httpx.AsyncClient, server_id: str
) -> None:
    changed = await act(client, server_id, {"changePassword": {"adminPass": "s3cret"}})
    assert changed.status_code == 202
    await act(client, server_id, {"lock": None})
    locked = await act(client, server_id, {"changePassword": {"adminPass": "other"}})
    assert locked.status_code == 409


async def test_tags_are_replaced_added_and_removed(
    client: httpx.AsyncClient, server_id: str
) -> None:
    url = f"{SERVERS}/{server_id}/tags"
    assert (await client.get(url)).json() == {"tags": ["a"]}
    replaced = await client.put(url, json={"tags": ["b", "c"]})
    assert replaced.json() == {"tags": ["b", "c"]}
    assert (await shown(client, server_id))["tags"] == ["b", "c"]
    assert (await client.put(f"{url}/d")).status_code == 201
    assert (await client.put(f"{url}/d")).status_code == 204
    assert (await client.delete(f"{url}/b")).status_code == 204
    assert (await client.delete(f"{url}/b")).status_code == 404
    assert (await client.get(url)).json() == {"tags": ["c", "d"]}
    assert (await client.put(url, json={"tags": ["x,y"]})).status_code == 400
    assert (await client.delete(url)).status_code == 204
    assert (await shown(client, server_id))["tags"] == []
