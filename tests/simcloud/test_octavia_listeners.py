"""simcloud's Octavia: listeners, their ports, protocols and TLS rules."""

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
    show,
)

BARBICAN = "http://198.51.100.10:9311/v1/containers"
#: listener-create-request.json as it is (simcloud takes the Barbican references as
#: given, having no Barbican to fetch them from); `loadbalancer_id` is the test's.
LISTENER_SAMPLE: dict[str, Any] = {
    "protocol": "TERMINATED_HTTPS",
    "description": "A great TLS listener",
    "admin_state_up": True,
    "connection_limit": 200,
    "protocol_port": "443",
    "name": "great_tls_listener",
    "insert_headers": {"X-Forwarded-For": "true", "X-Forwarded-Port": "true"},
    "default_tls_container_ref": f"{BARBICAN}/a570068c-d295-4780-91d4-3046a325db51",
    "sni_container_refs": [
        f"{BARBICAN}/a570068c-d295-4780-91d4-3046a325db51",
        f"{BARBICAN}/aaebb31e-7761-4826-8cb4-2b829caca3ee",
    ],
    "timeout_client_data": 50000,
    "timeout_member_connect": 5000,
    "timeout_member_data": 50000,
    "timeout_tcp_inspect": 0,
    "tags": ["test_tag"],
    "client_ca_tls_container_ref": f"{BARBICAN}/35649991-49f3-4625-81ce-2465fe8932e5",
    "client_authentication": "MANDATORY",
    "client_crl_container_ref": f"{BARBICAN}/e222b065-b93b-4e2a-9a02-804b7a118c3c",
    "allowed_cidrs": ["192.0.2.0/24", "198.51.100.0/24"],
    "tls_ciphers": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256",
    "tls_versions": ["TLSv1.2", "TLSv1.3"],
    "alpn_protocols": ["http/1.1", "http/1.0"],
    "hsts_include_subdomains": True,
    "hsts_max_age": 31536000,
    "hsts_preload": True,
}
#: The keys of listener-create-response.json (simcloud shows `connection_limit` too).
LISTENER_KEYS = {
    "description", "admin_state_up", "project_id", "protocol", "protocol_port",
    "provisioning_status", "default_tls_container_ref", "loadbalancers", "insert_headers",
    "created_at", "updated_at", "id", "operating_status", "default_pool_id",
    "sni_container_refs", "l7policies", "name", "timeout_client_data",
    "timeout_member_connect", "timeout_member_data", "timeout_tcp_inspect", "tags",
    "client_ca_tls_container_ref", "client_authentication", "client_crl_container_ref",
    "allowed_cidrs", "tls_ciphers", "tls_versions", "alpn_protocols",
    "hsts_include_subdomains", "hsts_max_age", "hsts_preload",
}  # fmt: skip
#: listener-update-request.json; `default_pool_id` is a pool made in the test.
LISTENER_UPDATE_SAMPLE: dict[str, Any] = {
    "description": "An updated great TLS listener",
    "admin_state_up": True,
    "connection_limit": 200,
    "name": "great_updated_tls_listener",
    "insert_headers": {"X-Forwarded-For": "false", "X-Forwarded-Port": "true"},
    "default_tls_container_ref": f"{BARBICAN}/a570068c-d295-4780-91d4-3046a325db51",
    "sni_container_refs": [
        f"{BARBICAN}/a570068c-d295-4780-91d4-3046a325db51",
        f"{BARBICAN}/aaebb31e-7761-4826-8cb4-2b829caca3ee",
    ],
    "timeout_client_data": 100000,
    "timeout_member_connect": 1000,
    "timeout_member_data": 100000,
    "timeout_tcp_inspect": 5,
    "tags": ["updated_tag"],
    "client_ca_tls_container_ref": None,
    "allowed_cidrs": ["192.0.2.0/24", "198.51.100.0/24"],
    "tls_ciphers": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256",
    "tls_versions": ["TLSv1.2", "TLSv1.3"],
    "alpn_protocols": ["http/1.1", "http/1.0"],
    "hsts_include_subdomains": True,
    "hsts_max_age": 31536000,
    "hsts_preload": True,
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
    created = await create(client, "listeners", loadbalancer_id=lb["id"], **LISTENER_SAMPLE)
    backend = await pool(client, loadbalancer_id=lb["id"])
    update = LISTENER_UPDATE_SAMPLE | {"default_pool_id": backend["id"]}
    response = await client.put(f"{LBAAS}/listeners/{created['id']}", json={"listener": update})
    shown = await show(client, "listeners", created["id"])
    in_pool = await show(client, "pools", backend["id"])

    assert set(created) >= LISTENER_KEYS
    assert {k: created[k] for k in LISTENER_SAMPLE} == LISTENER_SAMPLE | {"protocol_port": 443}
    assert created["loadbalancers"] == [{"id": lb["id"]}]
    assert (created["provisioning_status"], created["operating_status"]) == (
        "PENDING_CREATE",
        "OFFLINE",
    )
    assert response.status_code == 200, response.text
    assert {k: shown[k] for k in update} == update
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "ONLINE")
    assert in_pool["listeners"] == [{"id": created["id"]}]


async def test_defaults_of_a_bare_listener(client: httpx.AsyncClient, lb: dict[str, Any]) -> None:
    created = await listener(client, lb)

    assert created["connection_limit"] == -1
    assert created["timeout_client_data"] == 50000
    assert created["insert_headers"] == {}
    assert created["sni_container_refs"] == []
    assert created["allowed_cidrs"] is None
    assert created["client_authentication"] == "NONE"
    assert created["default_pool_id"] is None
    assert (created["name"], created["description"], created["tags"]) == ("", "", [])


async def test_a_port_is_taken_once_per_l4_protocol(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    await listener(client, lb, 80)

    tcp = await client.post(
        f"{LBAAS}/listeners",
        json={"listener": {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 80}},
    )
    udp = await listener(client, lb, 80, protocol="UDP")
    other_lb = await load_balancer(client, name="other")
    elsewhere = await listener(client, other_lb, 80)

    assert fault(tcp, 409) == (
        "Another Listener on this Load Balancer is already using protocol HTTP and protocol_port 80"
    )
    assert udp["protocol_port"] == elsewhere["protocol_port"] == 80


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({"protocol_port": 0}, 400, "Invalid input for field/attribute protocol_port. "
         "Value: '0'. Value should be greater or equal to 1"),
        ({"protocol_port": 65536}, 400, "Invalid input for field/attribute protocol_port. "
         "Value: '65536'. Value should be lower or equal to 65535"),
        ({"protocol": "FTP"}, 400, "Invalid input for field/attribute protocol. Value: 'FTP'. "
         "Value should be one of: HTTP, HTTPS, TCP, TERMINATED_HTTPS, UDP, SCTP, PROMETHEUS"),
        ({"protocol": None}, 400, "Invalid input for field/attribute protocol. Value: 'None'. "
         "Value should be one of: HTTP, HTTPS, TCP, TERMINATED_HTTPS, UDP, SCTP, PROMETHEUS"),
        ({"protocol": "TERMINATED_HTTPS", "protocol_port": 443}, 400,
         "Validation failure: An SNI or default certificate container reference must be "
         "provided for TERMINATED_HTTPS protocol listeners."),
        ({"default_tls_container_ref": "ref"}, 400, "Validation failure: Certificate "
         "container references are not allowed on HTTP protocol listeners."),
        ({"protocol": "TCP", "insert_headers": {"X-Forwarded-For": "true"}}, 400,
         "insert-headers is not a valid option for a TCP protocol listener."),
        ({"insert_headers": {"X-SSL-Client-CN": "true"}}, 400,
         "['X-SSL-Client-CN'] is not a valid option for HTTP protocol listener."),
        ({"allowed_cidrs": ["2001:db8::/64"]}, 400, "Validation failure: CIDR 2001:db8::/64 "
         "IP version incompatible with all VIPs ['{vip}'] IP version."),
        ({"hsts_max_age": 10}, 400, "Validation failure: The HSTS feature can only be used for "
         "listeners using the TERMINATED_HTTPS protocol."),
        ({"connection_limit": -2}, 400, "Invalid input for field/attribute connection_limit. "
         "Value: '-2'. Value should be greater or equal to -1"),
        ({"loadbalancer_id": "9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa"}, 404,
         "Load Balancer 9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa not found."),
        ({"default_pool_id": "9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa"}, 404,
         "Pool 9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa not found."),
        ({"l7policy": []}, 400, "Unknown attribute for argument listener: l7policy"),
    ],
)  # fmt: skip
async def test_bad_listeners_get_octavias_answer(
    client: httpx.AsyncClient, lb: dict[str, Any], fields: dict[str, Any], status: int, message: str
) -> None:
    body = {"loadbalancer_id": lb["id"], "protocol": "HTTP", "protocol_port": 80} | fields

    response = await client.post(f"{LBAAS}/listeners", json={"listener": body})

    assert fault(response, status) == message.replace("{vip}", lb["vip_address"])
    assert await listed(client, "listeners") == []


async def test_a_udp_listener_takes_no_tls_or_http_pool(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    http_pool = await pool(client, loadbalancer_id=lb["id"])
    udp = await listener(client, lb, 53, protocol="UDP")

    response = await client.put(
        f"{LBAAS}/listeners/{udp['id']}", json={"listener": {"default_pool_id": http_pool["id"]}}
    )
    tls = await client.put(
        f"{LBAAS}/listeners/{udp['id']}", json={"listener": {"sni_container_refs": ["ref"]}}
    )

    assert fault(response, 400) == (
        "Validation failure: The pool protocol 'HTTP' is invalid while the listener protocol "
        "is 'UDP'."
    )
    assert fault(tls, 400) == (
        "Validation failure: UDP protocol listener does not support TLS or header insertion."
    )


async def test_update_with_null_resets_defaults(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    created = await listener(client, lb, name="web", connection_limit=5, timeout_client_data=1)
    nulls = {"name": None, "connection_limit": None, "timeout_client_data": None, "tags": None}

    response = await client.put(f"{LBAAS}/listeners/{created['id']}", json={"listener": nulls})

    updated = response.json()["listener"]
    assert (updated["name"], updated["connection_limit"]) == ("", -1)
    assert (updated["timeout_client_data"], updated["tags"]) == (50000, [])
    assert updated["provisioning_status"] == "PENDING_UPDATE"


async def test_list_filters_by_load_balancer_and_delete(
    client: httpx.AsyncClient, lb: dict[str, Any]
) -> None:
    other_lb = await load_balancer(client, name="other")
    mine = await listener(client, lb, 80)
    await listener(client, other_lb, 81)
    backend = await pool(client, listener_id=mine["id"])

    filtered = await listed(client, "listeners", loadbalancer_id=lb["id"])
    by_port = await listed(client, "listeners", protocol_port=81)
    deleted = await client.delete(f"{LBAAS}/listeners/{mine['id']}")
    gone = await client.get(f"{LBAAS}/listeners/{mine['id']}")
    kept = await show(client, "pools", backend["id"])

    assert [li["id"] for li in filtered] == [mine["id"]]
    assert [li["loadbalancers"] for li in by_port] == [[{"id": other_lb["id"]}]]
    assert deleted.status_code == 204
    assert fault(gone, 404) == f"Listener {mine['id']} not found."
    assert (kept["listeners"], kept["operating_status"]) == ([], "OFFLINE")
