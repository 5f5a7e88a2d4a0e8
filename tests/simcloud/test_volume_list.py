"""simcloud's Cinder v3: volume lists and filters, volume types, quotas and their 413s."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from config.settings import simulated_project_id
from simcloud.config import SimConfig
from tests.support.simcloud_server import in_process_simcloud, login

PROJECT = simulated_project_id("demo")
BASE = f"/volume/v3/{PROJECT}"
VOLUMES = f"{BASE}/volumes"
TYPE_KEYS = {
    "description",
    "extra_specs",
    "id",
    "is_public",
    "name",
    "os-volume-type-access:is_public",
    "qos_specs_id",
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def create(client: httpx.AsyncClient, **volume: Any) -> httpx.Response:
    return await client.post(VOLUMES, json={"volume": {"size": 1} | volume})


async def names(client: httpx.AsyncClient, path: str = "/detail", **params: Any) -> list[str]:
    response = await client.get(VOLUMES + path, params=params)
    assert response.status_code == 200, response.text
    return [v["name"] for v in response.json()["volumes"]]


async def test_list_sample_keys_and_detail_newest_first(client: httpx.AsyncClient) -> None:
    for name in ("one", "two", "three"):
        await create(client, name=name)
        await client.post("/sim/clock", json={"advance_s": 1})

    summary = (await client.get(VOLUMES)).json()["volumes"]

    assert set(summary[0]) == {"id", "links", "name"}
    assert [v["name"] for v in summary] == ["three", "two", "one"]
    assert await names(client) == ["three", "two", "one"]
    assert await names(client, sort="name:asc") == ["one", "three", "two"]


async def test_detail_filters_by_name_status_and_metadata(client: httpx.AsyncClient) -> None:
    await create(client, name="web", metadata={"app": "web", "tier": "front"})
    await create(client, name="db", metadata={"app": "db"})
    await create(client, name="boot", imageRef="cirros")

    assert await names(client, name="web") == ["web"]
    assert sorted(await names(client, status="available")) == ["boot", "db", "web"]
    assert await names(client, status="in-use") == []
    assert await names(client, metadata=json.dumps({"app": "web"})) == ["web"]
    assert await names(client, metadata="{'app': 'db'}") == ["db"]
    assert await names(client, bootable="true") == ["boot"]
    assert await names(client, "", name="db") == ["db"]
    assert sorted(await names(client, unknown_filter="ignored")) == ["boot", "db", "web"]


async def test_detail_pages_with_limit_marker_and_next_link(client: httpx.AsyncClient) -> None:
    for name in ("one", "two", "three"):
        await create(client, name=name)

    first = (await client.get(f"{VOLUMES}/detail", params={"sort": "name:asc", "limit": 2})).json()
    marker = first["volumes"][-1]["id"]
    rest = await names(client, sort="name:asc", limit=2, marker=marker)
    unknown = await client.get(VOLUMES, params={"marker": "nope"})

    assert [v["name"] for v in first["volumes"]] == ["one", "three"]
    assert first["volumes_links"][0]["rel"] == "next"
    assert f"marker={marker}" in first["volumes_links"][0]["href"]
    assert rest == ["two"]
    assert unknown.status_code == 404


async def test_volume_types_list_the_default_and_devstacks_lvm_type(
    client: httpx.AsyncClient,
) -> None:
    types = (await client.get(f"{BASE}/types")).json()["volume_types"]
    default = (await client.get(f"{BASE}/types/default")).json()["volume_type"]
    shown = await client.get(f"{BASE}/types/{default['id']}")
    missing = await client.get(f"{BASE}/types/nope")

    assert {t["name"] for t in types} == {"__DEFAULT__", "lvmdriver-1"}
    assert all(set(t) == TYPE_KEYS for t in types)
    assert default["name"] == "lvmdriver-1"
    assert shown.json()["volume_type"] == default
    assert missing.json() == {
        "itemNotFound": {"code": 404, "message": "Volume type nope could not be found."}
    }


async def test_a_volume_takes_a_type_by_name_or_id(client: httpx.AsyncClient) -> None:
    types = (await client.get(f"{BASE}/types")).json()["volume_types"]
    default_id = next(t["id"] for t in types if t["name"] == "__DEFAULT__")

    by_id = (await create(client, volume_type=default_id)).json()["volume"]
    by_name = (await create(client, volume_type="__DEFAULT__")).json()["volume"]

    assert by_id["volume_type"] == by_name["volume_type"] == "__DEFAULT__"


async def test_quota_set_shows_defaults_and_usage(client: httpx.AsyncClient) -> None:
    await create(client, size=5)

    limits = (await client.get(f"{BASE}/os-quota-sets/{PROJECT}")).json()["quota_set"]
    usage = (await client.get(f"{BASE}/os-quota-sets/{PROJECT}", params={"usage": "true"})).json()
    defaults = (await client.get(f"{BASE}/os-quota-sets/{PROJECT}/defaults")).json()

    assert (limits["volumes"], limits["gigabytes"], limits["id"]) == (10, 1000, PROJECT)
    assert usage["quota_set"]["volumes"] == {"in_use": 1, "limit": 10, "reserved": 0}
    assert usage["quota_set"]["gigabytes"]["in_use"] == 5
    assert defaults["quota_set"]["snapshots"] == 10


async def test_the_eleventh_volume_exceeds_the_volumes_quota(client: httpx.AsyncClient) -> None:
    for _ in range(10):
        assert (await create(client)).status_code == 202

    response = await create(client)

    assert response.status_code == 413
    assert response.json() == {
        "overLimit": {
            "code": 413,
            "message": "Maximum number of volumes allowed (10) exceeded for quota 'volumes'.",
        }
    }


async def test_gigabytes_quota_limits_create_and_extend(client: httpx.AsyncClient) -> None:
    volume_id = (await create(client, size=990)).json()["volume"]["id"]

    too_big = await create(client, size=20)
    extend = await client.post(
        f"{VOLUMES}/{volume_id}/action", json={"os-extend": {"new_size": 1001}}
    )

    assert too_big.status_code == 413
    assert too_big.json()["overLimit"]["message"] == (
        "Requested volume or snapshot exceeds allowed gigabytes quota. Requested 20G, quota "
        "is 1000G and 990G has been consumed."
    )
    assert extend.status_code == 413
    assert "Requested 11G" in extend.json()["overLimit"]["message"]


async def test_limits_sample_keys_count_what_is_used(client: httpx.AsyncClient) -> None:
    await create(client, size=4)

    limits = (await client.get(f"{BASE}/limits")).json()["limits"]

    assert limits["rate"] == []
    assert limits["absolute"] == {
        "totalSnapshotsUsed": 0,
        "maxTotalBackups": 10,
        "maxTotalVolumeGigabytes": 1000,
        "maxTotalSnapshots": 10,
        "maxTotalBackupGigabytes": 1000,
        "totalBackupGigabytesUsed": 0,
        "maxTotalVolumes": 10,
        "totalVolumesUsed": 1,
        "totalBackupsUsed": 0,
        "totalGigabytesUsed": 4,
    }
