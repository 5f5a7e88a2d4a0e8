"""simcloud's Nova: create validation, lifecycle, listing, and 404s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    config = SimConfig(build_latency_ms=5_000, action_latency_ms=2_000, max_limit=3)
    async with in_process_simcloud(config) as client:
        client.headers.update(await login(client))
        yield client


async def create(client: httpx.AsyncClient, name: str = "web-1", **extra: Any) -> str:
    server = {"name": name, "imageRef": CIRROS, "flavorRef": SMALL} | extra
    response = await client.post(SERVERS, json={"server": server})
    assert response.status_code == 202, response.text
    assert response.headers["Location"].endswith(response.json()["server"]["id"])
    return str(response.json()["server"]["id"])


async def show(client: httpx.AsyncClient, server_id: str) -> dict[str, Any]:
    response = await client.get(f"{SERVERS}/{server_id}")
    assert response.status_code == 200, response.text
    server: dict[str, Any] = response.json()["server"]
    return server


async def advance(client: httpx.AsyncClient, seconds: float) -> None:
    assert (await client.post("/sim/clock", json={"advance_s": seconds})).status_code == 200


async def test_server_builds_then_turns_active_after_build_latency(
    client: httpx.AsyncClient,
) -> None:
    server_id = await create(client, metadata={"warden_request_id": "req-1"})

    building = await show(client, server_id)
    await advance(client, 5)
    active = await show(client, server_id)

    assert (building["status"], building["OS-EXT-STS:task_state"]) == ("BUILD", "spawning")
    assert active["status"] == "ACTIVE"
    assert active["OS-EXT-STS:power_state"] == 1
    assert active["metadata"] == {"warden_request_id": "req-1"}
    assert active["locked"] is False
    assert active["addresses"]["private"][0]["addr"].startswith("10.")
    assert active["flavor"]["original_name"] == "m1.small"
    assert active["links"][0]["href"] == f"http://simcloud{SERVERS}/{server_id}"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"server": {"imageRef": CIRROS, "flavorRef": "1"}},
        {"server": {"name": "a", "flavorRef": "1"}},
        {"server": {"name": "a", "imageRef": CIRROS}},
        {"server": {"name": "", "imageRef": CIRROS, "flavorRef": "1"}},
        {"server": {"name": " padded ", "imageRef": CIRROS, "flavorRef": "1"}},
        {"server": {"name": "a" * 256, "imageRef": CIRROS, "flavorRef": "1"}},
        {"server": {"name": "a", "imageRef": CIRROS, "flavorRef": "1", "bogus": 1}},
        {"server": {"name": "a", "imageRef": CIRROS, "flavorRef": "1", "metadata": {"k": 1}}},
        {"server": {"name": "a", "imageRef": CIRROS, "flavorRef": "1", "metadata": {"": "v"}}},
        {"server": {"name": 7, "imageRef": CIRROS, "flavorRef": "1"}},
        {"server": {"name": "a", "imageRef": CIRROS, "flavorRef": "1", "max_count": 2}},
        {"server": {"name": "a", "imageRef": CIRROS, "flavorRef": "1"}, "extra": {}},
        [],
    ],
)
async def test_create_rejects_bad_bodies_with_400(client: httpx.AsyncClient, body: Any) -> None:
    response = await client.post(SERVERS, json=body)

    assert response.status_code == 400
    assert response.json()["badRequest"]["code"] == 400


async def test_create_rejects_malformed_json_with_400(client: httpx.AsyncClient) -> None:
    response = await client.post(
        SERVERS, content=b"{not json", headers={"Content-Type": "application/json"}
    )

    assert response.status_code == 400


async def test_unknown_server_is_404_everywhere(client: httpx.AsyncClient) -> None:
    missing = f"{SERVERS}/00000000-0000-0000-0000-000000000000"

    responses = [
        await client.get(missing),
        await client.delete(missing),
        await client.post(f"{missing}/action", json={"pause": None}),
    ]

    assert [r.status_code for r in responses] == [404, 404, 404]
    assert "itemNotFound" in responses[0].json()


async def test_delete_shows_deleted_then_404(client: httpx.AsyncClient) -> None:
    server_id = await create(client)

    assert (await client.delete(f"{SERVERS}/{server_id}")).status_code == 204
    deleted = await show(client, server_id)
    again = await client.delete(f"{SERVERS}/{server_id}")
    await advance(client, 2)

    assert deleted["status"] == "DELETED"
    assert again.status_code == 204
    assert (await client.get(f"{SERVERS}/{server_id}")).status_code == 404


async def test_detail_filters_by_name_regex_status_and_changes_since(
    client: httpx.AsyncClient,
) -> None:
    await create(client, "web-1")
    await create(client, "web-2")
    db = await create(client, "db-1")
    await advance(client, 5)
    await client.post(f"{SERVERS}/{db}/action", json={"os-stop": None})
    await advance(client, 2)
    stamp = (await show(client, db))["updated"]

    async def names(**params: str) -> list[str]:
        response = await client.get(f"{SERVERS}/detail", params=params)
        assert response.status_code == 200, response.text
        return sorted(s["name"] for s in response.json()["servers"])

    assert await names(name="^web") == ["web-1", "web-2"]
    assert await names(name=r"^web\-2$") == ["web-2"]
    assert await names(status="SHUTOFF") == ["db-1"]
    assert await names(status="active") == ["web-1", "web-2"]
    assert await names(**{"changes-since": stamp}) == ["db-1"]
    assert await names(name="nomatch") == []


@pytest.mark.parametrize(
    "params",
    [{"name": "("}, {"limit": "x"}, {"limit": "-1"}, {"marker": "nope"}, {"changes-since": "x"}],
)
async def test_detail_rejects_bad_query_with_400(
    client: httpx.AsyncClient, params: dict[str, str]
) -> None:
    response = await client.get(f"{SERVERS}/detail", params=params)

    assert response.status_code == 400


async def test_detail_pages_newest_first_with_next_links(client: httpx.AsyncClient) -> None:
    created = [await create(client, f"s-{n}") for n in range(5)]

    first = (await client.get(f"{SERVERS}/detail")).json()
    next_href = first["servers_links"][0]["href"]
    second = (await client.get(next_href)).json()

    assert [s["id"] for s in first["servers"]] == created[::-1][:3]
    assert [s["id"] for s in second["servers"]] == created[::-1][3:]
    assert "servers_links" not in second
    assert "marker=" in next_href


async def test_plain_list_has_ids_names_and_links(client: httpx.AsyncClient) -> None:
    server_id = await create(client, "plain")

    body = (await client.get(SERVERS)).json()

    assert body["servers"] == [
        {
            "id": server_id,
            "name": "plain",
            "links": [
                {"rel": "self", "href": f"http://simcloud{SERVERS}/{server_id}"},
                {"rel": "bookmark", "href": f"http://simcloud/compute/servers/{server_id}"},
            ],
        }
    ]


async def test_version_document(client: httpx.AsyncClient) -> None:
    response = await client.get("/compute/v2.1/")

    assert response.json()["version"]["version"] == "2.73"


async def test_availability_zones_are_listed_and_an_unknown_one_is_refused() -> None:
    config = SimConfig(availability_zones=("nova", "az-2"))
    async with in_process_simcloud(config) as client:
        client.headers.update(await login(client))
        zones = (await client.get("/compute/v2.1/os-availability-zone")).json()
        assert [z["zoneName"] for z in zones["availabilityZoneInfo"]] == ["nova", "az-2"]
        body = {"name": "s", "imageRef": CIRROS, "flavorRef": SMALL}
        placed = await client.post(
            "/compute/v2.1/servers", json={"server": body | {"availability_zone": "az-2"}}
        )
        assert placed.status_code == 202
        server_id = placed.json()["server"]["id"]
        shown = (await client.get(f"/compute/v2.1/servers/{server_id}")).json()["server"]
        assert shown["OS-EXT-AZ:availability_zone"] == "az-2"
        refused = await client.post(
            "/compute/v2.1/servers", json={"server": body | {"availability_zone": "mars"}}
        )
        assert refused.status_code == 400
        assert refused.json()["badRequest"]["message"] == (
            "The requested availability zone is not available"
        )
