"""simcloud's Octavia: health monitors, one per pool."""

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

#: healthmonitor-create-request.json; `pool_id` is the test's.
MONITOR_SAMPLE: dict[str, Any] = {
    "name": "super-pool-health-monitor",
    "admin_state_up": True,
    "delay": "10",
    "expected_codes": "200",
    "max_retries": "1",
    "http_method": "GET",
    "timeout": "5",
    "url_path": "/",
    "type": "HTTP",
    "max_retries_down": 3,
    "tags": ["test_tag"],
    "http_version": 1.1,
    "domain_name": "testlab.com",
}
#: The keys of healthmonitor-create-response.json.
MONITOR_KEYS = {
    "project_id", "name", "admin_state_up", "pools", "created_at", "provisioning_status",
    "updated_at", "delay", "expected_codes", "max_retries", "http_method", "timeout",
    "max_retries_down", "url_path", "type", "id", "operating_status", "tags", "http_version",
    "domain_name",
}  # fmt: skip
#: healthmonitor-update-request.json.
MONITOR_UPDATE_SAMPLE: dict[str, Any] = {
    "name": "super-pool-health-monitor-updated",
    "admin_state_up": True,
    "delay": 5,
    "expected_codes": "200",
    "http_method": "HEAD",
    "timeout": 2,
    "url_path": "/index.html",
    "max_retries": 2,
    "max_retries_down": 2,
    "tags": ["updated_tag"],
    "http_version": 1.1,
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with octavia() as (client, _):
        yield client


@pytest.fixture
async def backend(client: httpx.AsyncClient) -> dict[str, Any]:
    lb = await load_balancer(client)
    return await pool(client, listener_id=(await listener(client, lb))["id"])


async def test_create_and_update_from_the_api_ref_samples(
    client: httpx.AsyncClient, backend: dict[str, Any]
) -> None:
    created = await create(client, "healthmonitors", pool_id=backend["id"], **MONITOR_SAMPLE)
    in_pool = await show(client, "pools", backend["id"])
    response = await client.put(
        f"{LBAAS}/healthmonitors/{created['id']}", json={"healthmonitor": MONITOR_UPDATE_SAMPLE}
    )
    shown = await show(client, "healthmonitors", created["id"])

    assert set(created) == MONITOR_KEYS
    assert {k: created[k] for k in MONITOR_SAMPLE} == MONITOR_SAMPLE | {
        "delay": 10,
        "max_retries": 1,
        "timeout": 5,
    }
    assert created["pools"] == [{"id": backend["id"]}]
    assert (created["provisioning_status"], created["operating_status"]) == (
        "PENDING_CREATE",
        "OFFLINE",
    )
    assert in_pool["healthmonitor_id"] == created["id"]
    assert response.status_code == 200, response.text
    assert {k: shown[k] for k in MONITOR_UPDATE_SAMPLE} == MONITOR_UPDATE_SAMPLE
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "ONLINE")


async def test_http_attributes_default_for_http_monitors_only(
    client: httpx.AsyncClient, backend: dict[str, Any]
) -> None:
    http = await create(
        client, "healthmonitors", pool_id=backend["id"], type="HTTPS", delay=1, timeout=9,
        max_retries=10,
    )  # fmt: skip
    other = await pool(client, loadbalancer_id=backend["loadbalancers"][0]["id"])
    ping = await create(
        client, "healthmonitors", pool_id=other["id"], type="PING", delay=1, timeout=1,
        max_retries=1,
    )  # fmt: skip

    assert (http["http_method"], http["url_path"], http["expected_codes"]) == ("GET", "/", "200")
    assert (http["timeout"], http["delay"], http["max_retries_down"]) == (9, 1, 3)
    assert (ping["http_method"], ping["url_path"], ping["expected_codes"]) == (None, None, None)


async def test_a_pool_has_one_monitor(client: httpx.AsyncClient, backend: dict[str, Any]) -> None:
    body = {"pool_id": backend["id"], "type": "TCP", "delay": 5, "timeout": 5, "max_retries": 3}
    await create(client, "healthmonitors", **body)

    second = await client.post(f"{LBAAS}/healthmonitors", json={"healthmonitor": body})

    assert fault(second, 409) == "This pool already has a health monitor"
    assert len(await listed(client, "healthmonitors")) == 1


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({"type": "PING", "url_path": "/"}, 400,
         "url_path is not a valid option for health monitors of type PING"),
        ({"type": "TCP", "http_method": "GET"}, 400,
         "http_method is not a valid option for health monitors of type TCP"),
        ({"type": "UDP-CONNECT"}, 400,
         "Validation failure: The UDP-CONNECT type is only supported for pools of type UDP/SCTP."),
        ({"max_retries": 11}, 400, "Invalid input for field/attribute max_retries. "
         "Value: '11'. Value should be lower or equal to 10"),
        ({"max_retries": None}, 400, "Invalid input for field/attribute max_retries. "
         "Value: 'None'. Value should be an integer"),
        ({"delay": -1}, 400, "Invalid input for field/attribute delay. Value: '-1'. "
         "Value should be greater or equal to 0"),
        ({"expected_codes": "2xx"}, 400, "Invalid input for field/attribute expected_codes. "
         "Value: '2xx'. Value should match the pattern ^(\\d{3}(\\s*,\\s*\\d{3})*)$|^(\\d{3}"
         "-\\d{3})$"),
        ({"url_path": "index.html"}, 400, "Invalid input for field/attribute url_path. "
         "Value: 'index.html'. Value must be a valid URL Path string"),
        ({"domain_name": "testlab.com"}, 400, "Validation failure: 'http_version' must be "
         "specified when 'domain_name' is provided."),
        ({"domain_name": "testlab.com", "http_version": 1.0}, 400, "http_version 1.0 is not a "
         "valid option for health monitors HTTP 1.1 domain name health check"),
        ({"pool_id": "9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa"}, 404,
         "Pool 9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa not found."),
        ({"type": None}, 400, "Invalid input for field/attribute type. Value: 'None'. Value "
         "should be one of: HTTP, HTTPS, PING, TCP, TLS-HELLO, UDP-CONNECT, SCTP"),
    ],
)  # fmt: skip
async def test_bad_monitors_get_octavias_answer(
    client: httpx.AsyncClient,
    backend: dict[str, Any],
    fields: dict[str, Any],
    status: int,
    message: str,
) -> None:
    body = {"pool_id": backend["id"], "type": "HTTP", "delay": 5, "timeout": 5, "max_retries": 3}

    response = await client.post(f"{LBAAS}/healthmonitors", json={"healthmonitor": body | fields})

    assert fault(response, status) == message
    assert await listed(client, "healthmonitors") == []


async def test_a_udp_pool_takes_udp_connect_with_a_long_enough_delay(
    client: httpx.AsyncClient,
) -> None:
    lb = await load_balancer(client)
    udp = await pool(client, loadbalancer_id=lb["id"], protocol="UDP", lb_algorithm="SOURCE_IP")
    body = {"pool_id": udp["id"], "type": "UDP-CONNECT", "delay": 2, "timeout": 1, "max_retries": 1}

    short = await client.post(f"{LBAAS}/healthmonitors", json={"healthmonitor": body})
    ping = await client.post(
        f"{LBAAS}/healthmonitors", json={"healthmonitor": body | {"type": "PING"}}
    )
    created = await create(client, "healthmonitors", **body | {"delay": 3})

    assert fault(short, 400) == (
        "Validation failure: The request delay value 2 should be larger than 3 for "
        "UDP-CONNECT health monitor type."
    )
    assert fault(ping, 400) == (
        "Validation failure: The associated pool protocol is UDP, so only a "
        "UDP-CONNECT/SCTP/TCP/HTTP health monitor is supported."
    )
    assert created["type"] == "UDP-CONNECT"


async def test_update_refuses_http_attributes_on_tcp_and_null_delay(
    client: httpx.AsyncClient, backend: dict[str, Any]
) -> None:
    monitor = await create(
        client, "healthmonitors", pool_id=backend["id"], type="TCP", delay=5, timeout=5,
        max_retries=3,
    )  # fmt: skip
    path = f"{LBAAS}/healthmonitors/{monitor['id']}"

    http = await client.put(path, json={"healthmonitor": {"url_path": "/"}})
    null = await client.put(path, json={"healthmonitor": {"delay": None}})

    assert fault(http, 400) == "url_path is not a valid option for health monitors of type TCP"
    assert fault(null, 400) == "None is not a valid option for delay"


async def test_deleting_the_monitor_puts_members_back_to_no_monitor(
    client: httpx.AsyncClient, backend: dict[str, Any]
) -> None:
    up = await server(client, "up")
    members = f"pools/{backend['id']}/members"
    await create(client, members, address=up["address"], protocol_port=80)
    monitor = await create(
        client, "healthmonitors", pool_id=backend["id"], type="TCP", delay=5, timeout=5,
        max_retries=3,
    )  # fmt: skip

    monitored = [m["operating_status"] for m in await listed(client, members)]
    deleted = await client.delete(f"{LBAAS}/healthmonitors/{monitor['id']}")
    unmonitored = [m["operating_status"] for m in await listed(client, members)]
    in_pool = await show(client, "pools", backend["id"])

    assert monitored == ["ONLINE"]
    assert deleted.status_code == 204
    assert unmonitored == ["NO_MONITOR"]
    assert in_pool["healthmonitor_id"] is None


async def test_a_disabled_monitor_checks_nothing(
    client: httpx.AsyncClient, backend: dict[str, Any]
) -> None:
    up = await server(client, "up")
    members = f"pools/{backend['id']}/members"
    await create(client, members, address=up["address"], protocol_port=80)
    monitor = await create(
        client, "healthmonitors", pool_id=backend["id"], type="TCP", delay=5, timeout=5,
        max_retries=3, admin_state_up=False,
    )  # fmt: skip

    statuses = [m["operating_status"] for m in await listed(client, members)]
    shown = await show(client, "healthmonitors", monitor["id"])

    assert statuses == ["NO_MONITOR"]
    assert shown["operating_status"] == "OFFLINE"
