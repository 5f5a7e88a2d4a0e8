"""simcloud's Nova `os-services`: disabling the one compute service fails every later
build with Nova's "No valid host", as draining the last host of a real Nova does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVICES = "/compute/v2.1/os-services"
SERVERS = "/compute/v2.1/servers"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def compute_service(client: httpx.AsyncClient) -> dict[str, Any]:
    listed = await client.get(SERVICES, params={"binary": "nova-compute"})
    [service] = listed.json()["services"]
    return dict(service)


async def build(client: httpx.AsyncClient, name: str) -> dict[str, Any]:
    body = {"server": {"name": name, "imageRef": CIRROS, "flavorRef": SMALL}}
    created = await client.post(SERVERS, json=body)
    assert created.status_code == 202, created.text
    shown = await client.get(f"{SERVERS}/{created.json()['server']['id']}")
    return dict(shown.json()["server"])


async def test_services_are_listed_as_nova_shows_them(client: httpx.AsyncClient) -> None:
    services = (await client.get(SERVICES)).json()["services"]

    assert sorted(s["binary"] for s in services) == [
        "nova-compute",
        "nova-conductor",
        "nova-scheduler",
    ]
    compute = await compute_service(client)
    assert {k: compute[k] for k in ("status", "state", "zone", "disabled_reason")} == {
        "status": "enabled",
        "state": "up",
        "zone": "nova",
        "disabled_reason": None,
    }


async def test_a_disabled_compute_service_fails_builds_with_no_valid_host(
    client: httpx.AsyncClient,
) -> None:
    service = await compute_service(client)
    disabled = await client.put(
        f"{SERVICES}/{service['id']}", json={"status": "disabled", "disabled_reason": "drain"}
    )
    assert disabled.status_code == 200
    assert disabled.json()["service"] | {"updated_at": None} == service | {
        "status": "disabled",
        "disabled_reason": "drain",
        "updated_at": None,
    }

    failed = await build(client, "unplaced")
    assert (failed["status"], failed["OS-SRV-USG:launched_at"]) == ("ERROR", None)
    assert failed["fault"]["message"] == (
        "No valid host was found. There are not enough hosts available."
    )
    reboot = await client.post(
        f"{SERVERS}/{failed['id']}/action", json={"reboot": {"type": "HARD"}}
    )
    assert reboot.status_code == 409

    enabled = await client.put(f"{SERVICES}/{service['id']}", json={"status": "enabled"})
    assert enabled.json()["service"]["disabled_reason"] is None
    assert (await build(client, "placed"))["status"] == "ACTIVE"


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({}, 400, "No updates were requested"),
        ({"status": "enabled", "disabled_reason": "x"}, 400, "with status 'enabled' is invalid"),
        ({"status": "off"}, 400, "Invalid input for field/attribute status"),
    ],
)
async def test_bad_updates_get_novas_400(
    client: httpx.AsyncClient, body: dict[str, Any], status: int, message: str
) -> None:
    service = await compute_service(client)

    refused = await client.put(f"{SERVICES}/{service['id']}", json=body)

    assert refused.status_code == status
    assert message in refused.json()["badRequest"]["message"]


async def test_unknown_and_non_compute_services_are_refused(client: httpx.AsyncClient) -> None:
    [scheduler] = (await client.get(SERVICES, params={"binary": "nova-scheduler"})).json()[
        "services"
    ]
    missing = "00000000-0000-4000-8000-000000000000"

    not_compute = await client.put(f"{SERVICES}/{scheduler['id']}", json={"status": "disabled"})
    unknown = await client.put(f"{SERVICES}/{missing}", json={"status": "disabled"})
    not_uuid = await client.put(f"{SERVICES}/7", json={"status": "disabled"})

    assert not_compute.status_code == 400
    assert "Only nova-compute services can be updated" in not_compute.text
    assert unknown.status_code == 404
    assert unknown.json()["itemNotFound"]["message"] == f"Service {missing} could not be found."
    assert (not_uuid.status_code, not_uuid.json()["badRequest"]["message"]) == (
        400,
        "Invalid uuid 7",
    )
