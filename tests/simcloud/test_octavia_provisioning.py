"""simcloud's Octavia: provisioning statuses over `lb_latency_ms`, and 409 while pending.

The clock is simcloud's (`/sim/clock`): nothing sleeps, an operation completes when the
load balancer is read after its latency has passed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.simcloud.test_octavia_helpers import (
    LBAAS,
    NEUTRON,
    advance,
    create,
    fault,
    octavia,
    private_subnet,
    show,
)

LATENCY_S = 5.0


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with octavia(SimConfig(lb_latency_ms=int(LATENCY_S * 1000))) as (client, _):
        yield client


async def _statuses(client: httpx.AsyncClient, collection: str, object_id: str) -> tuple[str, str]:
    shown = await show(client, collection, object_id)
    return shown["provisioning_status"], shown["operating_status"]


async def _active_lb(client: httpx.AsyncClient) -> dict[str, Any]:
    subnet = await private_subnet(client)
    lb = await create(client, "loadbalancers", vip_subnet_id=subnet["id"], name="web")
    await advance(client, LATENCY_S)
    return lb


async def test_load_balancer_is_pending_create_until_its_latency_has_passed(
    client: httpx.AsyncClient,
) -> None:
    subnet = await private_subnet(client)
    lb = await create(client, "loadbalancers", vip_subnet_id=subnet["id"])

    at_once = await _statuses(client, "loadbalancers", lb["id"])
    await advance(client, LATENCY_S - 1)
    almost = await _statuses(client, "loadbalancers", lb["id"])
    await advance(client, 1)
    done = await _statuses(client, "loadbalancers", lb["id"])

    assert at_once == almost == ("PENDING_CREATE", "OFFLINE")
    assert done == ("ACTIVE", "ONLINE")


async def test_changes_while_pending_create_answer_409(client: httpx.AsyncClient) -> None:
    subnet = await private_subnet(client)
    lb = await create(client, "loadbalancers", vip_subnet_id=subnet["id"])
    path = f"{LBAAS}/loadbalancers/{lb['id']}"
    body = {"listener": {"loadbalancer_id": lb["id"], "protocol": "HTTP", "protocol_port": 80}}

    new_listener = await client.post(f"{LBAAS}/listeners", json=body)
    new_pool = await client.post(
        f"{LBAAS}/pools",
        json={
            "pool": {"loadbalancer_id": lb["id"], "protocol": "TCP", "lb_algorithm": "SOURCE_IP"}
        },
    )
    update = await client.put(path, json={"loadbalancer": {"name": "renamed"}})
    delete = await client.delete(path)

    immutable = f"Load Balancer {lb['id']} is immutable and cannot be updated."
    pending = f"Invalid state PENDING_CREATE of loadbalancer resource {lb['id']}"
    assert fault(new_listener, 409) == fault(new_pool, 409) == immutable
    assert fault(update, 409) == fault(delete, 409) == pending
    assert (await show(client, "loadbalancers", lb["id"]))["name"] == ""


async def test_a_listener_create_makes_the_load_balancer_pending_update(
    client: httpx.AsyncClient,
) -> None:
    lb = await _active_lb(client)

    listener = await create(
        client, "listeners", loadbalancer_id=lb["id"], protocol="HTTP", protocol_port=80
    )
    lb_pending = await _statuses(client, "loadbalancers", lb["id"])
    second = await client.post(
        f"{LBAAS}/listeners",
        json={"listener": {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 22}},
    )
    await advance(client, LATENCY_S)

    assert (listener["provisioning_status"], listener["operating_status"]) == (
        "PENDING_CREATE",
        "OFFLINE",
    )
    assert lb_pending == ("PENDING_UPDATE", "ONLINE")
    assert fault(second, 409) == f"Load Balancer {lb['id']} is immutable and cannot be updated."
    assert await _statuses(client, "listeners", listener["id"]) == ("ACTIVE", "ONLINE")
    assert await _statuses(client, "loadbalancers", lb["id"]) == ("ACTIVE", "ONLINE")


async def test_member_changes_lock_the_pool_and_its_parents(client: httpx.AsyncClient) -> None:
    lb = await _active_lb(client)
    listener = await create(
        client, "listeners", loadbalancer_id=lb["id"], protocol="HTTP", protocol_port=80
    )
    await advance(client, LATENCY_S)
    pool = await create(
        client, "pools", listener_id=listener["id"], protocol="HTTP", lb_algorithm="ROUND_ROBIN"
    )
    await advance(client, LATENCY_S)
    members = f"pools/{pool['id']}/members"

    member = await create(client, members, address="10.0.0.50", protocol_port=80)
    pending = [
        (await show(client, c, i))["provisioning_status"]
        for c, i in (
            ("loadbalancers", lb["id"]),
            ("listeners", listener["id"]),
            ("pools", pool["id"]),
        )
    ]
    second = await client.post(
        f"{LBAAS}/{members}", json={"member": {"address": "10.0.0.51", "protocol_port": 80}}
    )
    await advance(client, LATENCY_S)
    settled = await show(client, members, member["id"])

    assert member["provisioning_status"] == "PENDING_CREATE"
    assert pending == ["PENDING_UPDATE"] * 3
    assert fault(second, 409) == f"Pool {pool['id']} is immutable and cannot be updated."
    assert (settled["provisioning_status"], settled["operating_status"]) == (
        "ACTIVE",
        "NO_MONITOR",
    )


async def test_delete_is_pending_until_done_then_404(client: httpx.AsyncClient) -> None:
    lb = await _active_lb(client)
    path = f"{LBAAS}/loadbalancers/{lb['id']}"

    deleted = await client.delete(path)
    during = await _statuses(client, "loadbalancers", lb["id"])
    port_during = await client.get(f"{NEUTRON}/ports/{lb['vip_port_id']}")
    await advance(client, LATENCY_S)
    after = await client.get(path)
    port_after = await client.get(f"{NEUTRON}/ports/{lb['vip_port_id']}")

    assert deleted.status_code == 204
    assert during[0] == "PENDING_DELETE"
    assert port_during.status_code == 200
    assert fault(after, 404) == f"Load Balancer {lb['id']} not found."
    assert port_after.status_code == 404


async def test_lists_settle_too(client: httpx.AsyncClient) -> None:
    lb = await _active_lb(client)
    await client.put(f"{LBAAS}/loadbalancers/{lb['id']}", json={"loadbalancer": {"name": "x"}})

    during = (await client.get(f"{LBAAS}/loadbalancers")).json()["loadbalancers"]
    await advance(client, LATENCY_S)
    after = (await client.get(f"{LBAAS}/loadbalancers")).json()["loadbalancers"]

    assert [lb["provisioning_status"] for lb in during] == ["PENDING_UPDATE"]
    assert [lb["provisioning_status"] for lb in after] == ["ACTIVE"]
    assert after[0]["name"] == "x"
