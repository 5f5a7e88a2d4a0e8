"""simcloud's Octavia: per-project quotas (403 once met) and `/v2/lbaas/quotas`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from simcloud.state import SimState
from tests.simcloud.test_octavia_helpers import (
    LBAAS,
    create,
    fault,
    listener,
    load_balancer,
    octavia,
    pool,
)

LIMITS = {"load_balancer": 1, "listener": 1, "pool": 1, "health_monitor": 0, "member": 2}


@pytest.fixture
async def sim() -> AsyncIterator[tuple[httpx.AsyncClient, SimState]]:
    async with octavia(SimConfig(lb_quotas=LIMITS)) as (client, state):
        yield client, state


async def test_creates_past_a_quota_answer_403(sim: tuple[httpx.AsyncClient, SimState]) -> None:
    client, _ = sim
    lb = await load_balancer(client)
    web = await listener(client, lb)
    backend = await pool(client, listener_id=web["id"])
    await create(client, f"pools/{backend['id']}/members", address="10.0.0.5", protocol_port=80)
    await create(client, "pools/made-by-members/members", address="10.0.0.6", protocol_port=80)

    bodies = {
        "Load Balancer": ("loadbalancers", {"vip_subnet_id": lb["vip_subnet_id"]}),
        "Listener": (
            "listeners",
            {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 22},
        ),
        "Pool": (
            "pools",
            {"loadbalancer_id": lb["id"], "protocol": "TCP", "lb_algorithm": "SOURCE_IP"},
        ),
        "Health Monitor": (
            "healthmonitors",
            {"pool_id": backend["id"], "type": "TCP", "delay": 1, "timeout": 1, "max_retries": 1},
        ),
        "Member": (f"pools/{backend['id']}/members", {"address": "10.0.0.7", "protocol_port": 80}),
    }
    refused = {}
    for resource, (collection, body) in bodies.items():
        wrapper = {"healthmonitors": "healthmonitor", "loadbalancers": "loadbalancer"}.get(
            collection, collection.rsplit("/", 1)[-1].removesuffix("s")
        )
        refused[resource] = await client.post(f"{LBAAS}/{collection}", json={wrapper: body})

    for resource, response in refused.items():
        assert fault(response, 403) == f"Quota has been met for resources: {resource}"


async def test_deleting_gives_the_quota_back(sim: tuple[httpx.AsyncClient, SimState]) -> None:
    client, _ = sim
    first = await load_balancer(client, name="first")

    await client.delete(f"{LBAAS}/loadbalancers/{first['id']}")
    second = await load_balancer(client, name="second")

    assert second["name"] == "second"


async def test_quotas_are_shown_to_their_project_only(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    project = state.project_id

    own = await client.get(f"{LBAAS}/quotas/{project}")
    default = await client.get(f"{LBAAS}/quotas/{project}/default")
    listed = await client.get(f"{LBAAS}/quotas")
    other = await client.get(f"{LBAAS}/quotas/someone-else")
    update = await client.put(f"{LBAAS}/quotas/{project}", json={"quota": {"pool": 5}})

    quota: dict[str, Any] = own.json()["quota"]
    assert (quota["load_balancer"], quota["loadbalancer"], quota["member"]) == (1, 1, 2)
    assert (quota["health_monitor"], quota["healthmonitor"]) == (0, 0)
    assert quota["project_id"] == project
    assert default.json()["quota"]["member"] == 1000
    assert listed.json()["quotas"] == [quota]
    assert fault(other, 403) == fault(update, 403)
