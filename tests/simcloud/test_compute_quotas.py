"""simcloud's Nova quotas: `os-quota-sets` and the 403 a create over a limit gets."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"
QUOTAS = "/compute/v2.1/os-quota-sets/demo"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def create(client: httpx.AsyncClient, name: str) -> httpx.Response:
    body = {"server": {"name": name, "imageRef": CIRROS, "flavorRef": SMALL}}
    return await client.post(SERVERS, json=body)


async def test_a_create_over_the_instances_limit_gets_novas_403(client: httpx.AsyncClient) -> None:
    assert (await create(client, "web-1")).status_code == 202
    changed = await client.put(QUOTAS, json={"quota_set": {"instances": 1}})
    assert changed.status_code == 200 and changed.json()["quota_set"]["instances"] == 1

    refused = await create(client, "web-2")

    assert refused.status_code == 403
    assert refused.json() == {
        "forbidden": {
            "code": 403,
            "message": "Quota exceeded for instances: Requested 1, but already used 1 of 1 "
            "instances",
        }
    }
    assert (await client.get(QUOTAS)).json()["quota_set"]["instances"] == 1


async def test_a_limit_below_what_is_in_use_is_refused_unless_forced(
    client: httpx.AsyncClient,
) -> None:
    assert (await create(client, "web-1")).status_code == 202
    below = await client.put(QUOTAS, json={"quota_set": {"instances": 0}})
    assert below.status_code == 400
    assert below.json()["badRequest"]["message"] == (
        "Quota limit 0 for instances must be greater than or equal to already used and reserved 1."
    )
    forced = await client.put(QUOTAS, json={"quota_set": {"instances": 0, "force": True}})
    assert forced.status_code == 200
    unknown = await client.put(QUOTAS, json={"quota_set": {"floating_ips": 3}})
    assert unknown.status_code == 400
