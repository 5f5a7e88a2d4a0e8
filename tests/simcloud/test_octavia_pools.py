"""simcloud's Octavia: pools, and the members of pools made through the API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.simcloud.test_octavia_helpers import (
    LBAAS,
    create,
    fault,
    listed,
    listener,
    load_balancer,
    octavia,
    pool,
    server,
    show,
)

BARBICAN = "http://198.51.100.10:9311/v1/containers"
#: pool-create-request.json; `listener_id` is the test's (Barbican references are
#: taken as given).
POOL_SAMPLE: dict[str, Any] = {
    "lb_algorithm": "ROUND_ROBIN",
    "protocol": "HTTP",
    "description": "Super Round Robin Pool",
    "admin_state_up": True,
    "session_persistence": {"cookie_name": "ChocolateChip", "type": "APP_COOKIE"},
    "name": "super-pool",
    "tags": ["test_tag"],
    "tls_container_ref": f"{BARBICAN}/4073846f-1d5e-42e1-a4cf-a7046419d0e6",
    "ca_tls_container_ref": f"{BARBICAN}/5f0d5540-fae6-4646-85d6-8a84883807fb",
    "crl_container_ref": f"{BARBICAN}/6faf0a01-6892-454c-aaac-650282820c0b",
    "tls_enabled": True,
    "tls_ciphers": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256",
    "tls_versions": ["TLSv1.2", "TLSv1.3"],
    "alpn_protocols": ["http/1.1", "http/1.0"],
}
#: The keys of pool-create-response.json.
POOL_KEYS = {
    "lb_algorithm", "protocol", "description", "admin_state_up", "loadbalancers",
    "created_at", "provisioning_status", "updated_at", "session_persistence", "listeners",
    "members", "healthmonitor_id", "project_id", "id", "operating_status", "name", "tags",
    "tls_container_ref", "ca_tls_container_ref", "crl_container_ref", "tls_enabled",
    "tls_ciphers", "tls_versions", "alpn_protocols",
}  # fmt: skip
#: pool-update-request.json.
POOL_UPDATE_SAMPLE: dict[str, Any] = {
    "lb_algorithm": "LEAST_CONNECTIONS",
    "session_persistence": {"type": "SOURCE_IP"},
    "description": "Super Least Connections Pool",
    "name": "super-least-conn-pool",
    "tags": ["updated_tag"],
    "tls_container_ref": f"{BARBICAN}/c1cd501d-3cf9-4873-a11b-a74bebcde929",
    "ca_tls_container_ref": None,
    "crl_container_ref": None,
    "tls_enabled": False,
    "tls_ciphers": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256",
    "tls_versions": ["TLSv1.2", "TLSv1.3"],
    "alpn_protocols": ["http/1.1", "http/1.0"],
}
#: member-create-request.json without `subnet_id` (a subnet simcloud does not have).
MEMBER_SAMPLE: dict[str, Any] = {
    "name": "web-server-1",
    "weight": "20",
    "admin_state_up": True,
    "address": "192.0.2.16",
    "protocol_port": "80",
    "monitor_port": 8080,
    "backup": False,
    "tags": ["test_tag"],
}
#: The keys of member-create-response.json.
MEMBER_KEYS = {
    "monitor_port", "project_id", "name", "weight", "backup", "admin_state_up", "subnet_id",
    "created_at", "provisioning_status", "monitor_address", "updated_at", "address",
    "protocol_port", "id", "operating_status", "tags", "vnic_type",
}  # fmt: skip
#: member-update-request.json (WSME takes the string "true" for a boolean).
MEMBER_UPDATE_SAMPLE: dict[str, Any] = {
    "name": "web-server-1-2",
    "weight": "0",
    "admin_state_up": "true",
    "monitor_address": "192.0.2.40",
    "monitor_port": 8888,
    "backup": False,
    "tags": ["updated_tag"],
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with octavia() as (client, _):
        yield client


@pytest.fixture
async def lb(client: httpx.AsyncClient) -> dict[str, Any]:
    return await load_balancer(client, name="web")


async def test_create_and_update_from_the_api_ref_samples(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    web = await listener(client, lb)

    created = await create(client, "pools", listener_id=web["id"], **POOL_SAMPLE)
    in_listener = await show(client, "listeners", web["id"])
    response = await client.put(f"{LBAAS}/pools/{created['id']}", json={"pool": POOL_UPDATE_SAMPLE})
    shown = await show(client, "pools", created["id"])

    assert set(created) == POOL_KEYS
    assert {k: created[k] for k in POOL_SAMPLE} == POOL_SAMPLE | {
        "session_persistence": POOL_SAMPLE["session_persistence"]
        | {"persistence_timeout": None, "persistence_granularity": None}
    }
    assert created["loadbalancers"] == [{"id": lb["id"]}]
    assert created["listeners"] == [{"id": web["id"]}]
    assert (created["members"], created["healthmonitor_id"]) == ([], None)
    assert in_listener["default_pool_id"] == created["id"]
    assert response.status_code == 200, response.text
    assert shown["lb_algorithm"] == "LEAST_CONNECTIONS"
    assert shown["session_persistence"]["type"] == "SOURCE_IP"
    assert (shown["name"], shown["tags"], shown["tls_enabled"]) == (
        "super-least-conn-pool",
        ["updated_tag"],
        False,
    )
    assert shown["ca_tls_container_ref"] is None
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "ONLINE")


async def test_a_pool_behind_no_listener_is_offline(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    spare = await pool(client, loadbalancer_id=lb["id"])

    shown = await show(client, "pools", spare["id"])
    in_lb = await show(client, "loadbalancers", lb["id"])

    assert (shown["listeners"], shown["operating_status"]) == ([], "OFFLINE")
    assert in_lb["pools"] == [{"id": spare["id"]}]
    assert in_lb["operating_status"] == "ONLINE"


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({}, 400, "Validation failure: Must provide at least one of: loadbalancer_id, "
         "listener_id"),
        ({"listener": "UDP"}, 400, "Validation failure: The pool protocol 'HTTP' is invalid "
         "while the listener protocol is 'UDP'."),
        ({"lb": True, "lb_algorithm": "SOURCE_IP_PORT"}, 501, "Provider 'amphora' does not "
         "support a requested option: Amphora provider does not support SOURCE_IP_PORT "
         "algorithm."),
        ({"lb": True, "lb_algorithm": "RANDOM"}, 400, "Invalid input for field/attribute "
         "lb_algorithm. Value: 'RANDOM'. Value should be one of: ROUND_ROBIN, "
         "LEAST_CONNECTIONS, SOURCE_IP, SOURCE_IP_PORT"),
        ({"lb": True, "session_persistence": {"type": "APP_COOKIE"}}, 400,
         'Validation failure: Field "cookie_name" must be specified when using the '
         '"APP_COOKIE" session persistence type.'),
        ({"lb": True, "session_persistence": {"type": "SOURCE_IP", "cookie_name": "c"}}, 400,
         'Validation failure: Field "cookie_name" can only be specified with session '
         'persistence of type "APP_COOKIE".'),
        ({"lb": True, "session_persistence": {"type": "SOURCE_IP", "persistence_timeout": 5}},
         400, "Validation failure: persistence_timeout and persistence_granularity is only "
         "for UDP and SCTP protocol pools."),
        ({"lb": True, "crl_container_ref": "crl"}, 400, "Validation failure: A CA certificate "
         "reference is required to specify a revocation list."),
        ({"loadbalancer_id": "9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa"}, 404,
         "Load Balancer 9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa not found."),
        ({"listener_id": "9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa"}, 404,
         "Listener 9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa not found."),
        ({"lb": True, "members": []}, 400, "Unknown attribute for argument pool: members"),
    ],
)  # fmt: skip
async def test_bad_pools_get_octavias_answer(
    client: httpx.AsyncClient, lb: dict[str, Any], fields: dict[str, Any], status: int, message: str
) -> None:
    body = {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"} | fields
    if body.pop("lb", False):
        body["loadbalancer_id"] = lb["id"]
    if "listener" in body:
        body["listener_id"] = (await listener(client, lb, protocol=body.pop("listener")))["id"]

    response = await client.post(f"{LBAAS}/pools", json={"pool": body})

    assert fault(response, status) == message
    assert await listed(client, "pools") == []


async def test_a_listener_has_one_default_pool(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    web = await listener(client, lb)
    await pool(client, listener_id=web["id"])

    second = await client.post(
        f"{LBAAS}/pools",
        json={"pool": {"listener_id": web["id"], "protocol": "HTTP", "lb_algorithm": "SOURCE_IP"}},
    )

    assert fault(second, 409) == "This listener already has a default pool"


async def test_members_without_a_monitor_show_no_monitor(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    backend = await pool(client, listener_id=(await listener(client, lb))["id"])
    up = await server(client, "up")
    members = f"pools/{backend['id']}/members"

    created = await create(client, members, **MEMBER_SAMPLE)
    linked = await create(client, members, address=up["address"], protocol_port=80)
    disabled = await create(
        client, members, address=up["address"], protocol_port=81, admin_state_up=False
    )
    statuses = {m["id"]: m["operating_status"] for m in await listed(client, members)}

    assert set(created) == MEMBER_KEYS
    assert {k: created[k] for k in MEMBER_SAMPLE} == MEMBER_SAMPLE | {
        "weight": 20,
        "protocol_port": 80,
    }
    assert (created["provisioning_status"], created["operating_status"]) == (
        "PENDING_CREATE",
        "NO_MONITOR",
    )
    assert statuses == {
        created["id"]: "NO_MONITOR",
        linked["id"]: "NO_MONITOR",
        disabled["id"]: "OFFLINE",
    }
    assert (await show(client, "pools", backend["id"]))["operating_status"] == "ONLINE"


async def test_members_with_a_monitor_follow_their_servers(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    backend = await pool(client, listener_id=(await listener(client, lb))["id"])
    await create(
        client, "healthmonitors", pool_id=backend["id"], type="PING", delay=5, timeout=5,
        max_retries=3,
    )  # fmt: skip
    up = await server(client, "up")
    offline = await server(client, "offline")
    await client.post(f"/sim/servers/{offline['id']}/fault", json={"kind": "lb_offline"})
    joined = await server(client, "joined", lb_pool_id=backend["id"], lb_protocol_port="8080")
    members = f"pools/{backend['id']}/members"

    await create(client, members, address=up["address"], protocol_port=80, name="up")
    await create(client, members, address=offline["address"], protocol_port=80, name="offline")
    await create(client, members, address="192.0.2.1", protocol_port=80, name="nowhere")
    listed_members = await listed(client, members)
    shown_pool = await show(client, "pools", backend["id"])
    shown_lb = await show(client, "loadbalancers", lb["id"])

    assert {m["name"]: m["operating_status"] for m in listed_members} == {
        "up": "ONLINE",
        "offline": "OFFLINE",
        "nowhere": "ERROR",
        "joined": "ONLINE",
    }
    assert {m["name"]: m["protocol_port"] for m in listed_members}["joined"] == 8080
    assert len(shown_pool["members"]) == 4
    assert {"id": listed_members[-1]["id"]} in shown_pool["members"]
    assert joined["name"] == "joined"
    assert shown_pool["operating_status"] == shown_lb["operating_status"] == "DEGRADED"


async def test_member_update_from_the_sample_and_delete(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    backend = await pool(client, loadbalancer_id=lb["id"])
    members = f"{LBAAS}/pools/{backend['id']}/members"
    member = await create(client, f"pools/{backend['id']}/members", **MEMBER_SAMPLE)

    response = await client.put(f"{members}/{member['id']}", json={"member": MEMBER_UPDATE_SAMPLE})
    duplicate = await client.post(
        members, json={"member": {"address": "192.0.2.16", "protocol_port": 80}}
    )
    deleted = await client.delete(f"{members}/{member['id']}")
    gone = await client.get(f"{members}/{member['id']}")

    updated = response.json()["member"]
    assert response.status_code == 200, response.text
    assert {k: updated[k] for k in MEMBER_UPDATE_SAMPLE} == MEMBER_UPDATE_SAMPLE | {
        "weight": 0,
        "admin_state_up": True,
    }
    assert updated["provisioning_status"] == "PENDING_UPDATE"
    assert fault(duplicate, 409) == (
        "Another member on this pool is already using ip 192.0.2.16 on protocol_port 80"
    )
    assert deleted.status_code == 204
    assert fault(gone, 404) == f"Member {member['id']} not found."


async def test_deleting_a_pool_takes_its_members_and_monitor(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    web = await listener(client, lb)
    backend = await pool(client, listener_id=web["id"])
    monitor = await create(
        client, "healthmonitors", pool_id=backend["id"], type="TCP", delay=5, timeout=5,
        max_retries=3,
    )  # fmt: skip
    await create(client, f"pools/{backend['id']}/members", address="10.0.0.9", protocol_port=80)

    deleted = await client.delete(f"{LBAAS}/pools/{backend['id']}")
    gone = [
        await client.get(f"{LBAAS}/pools/{backend['id']}"),
        await client.get(f"{LBAAS}/pools/{backend['id']}/members"),
        await client.get(f"{LBAAS}/healthmonitors/{monitor['id']}"),
    ]
    shown_listener = await show(client, "listeners", web["id"])

    assert deleted.status_code == 204
    assert [fault(r, 404) for r in gone] == [
        f"Pool {backend['id']} not found.",
        f"Pool {backend['id']} not found.",
        f"Health Monitor {monitor['id']} not found.",
    ]
    assert shown_listener["default_pool_id"] is None


async def test_pools_made_by_members_are_not_octavia_pools(client: httpx.AsyncClient) -> None:
    await server(client, "web-1", lb_pool_id="pool-1")

    pools = await listed(client, "pools")
    shown = await client.get(f"{LBAAS}/pools/pool-1")
    members = await listed(client, "pools/pool-1/members")

    assert pools == []
    assert fault(shown, 404) == "Pool pool-1 not found."
    assert [(m["name"], m["provisioning_status"]) for m in members] == [("web-1", "ACTIVE")]
