"""simcloud's Nova and Neutron together: a server's ports, addresses, image, flavor, key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"
V2 = "/networking/v2.0"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def boot(client: httpx.AsyncClient, **extra: Any) -> httpx.Response:
    server = {"name": "web-1", "imageRef": CIRROS, "flavorRef": SMALL} | extra
    return await client.post(SERVERS, json={"server": server})


async def server(client: httpx.AsyncClient, **extra: Any) -> dict[str, Any]:
    response = await boot(client, **extra)
    assert response.status_code == 202, response.text
    shown = await client.get(f"{SERVERS}/{response.json()['server']['id']}")
    body: dict[str, Any] = shown.json()["server"]
    return body


async def ports_of(client: httpx.AsyncClient, server_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (
        await client.get(f"{V2}/ports", params={"device_id": server_id})
    ).json()["ports"]
    return found


async def network_named(client: httpx.AsyncClient, name: str) -> dict[str, Any]:
    (found,) = (await client.get(f"{V2}/networks", params={"name": name})).json()["networks"]
    return dict(found)


async def test_auto_networking_plugs_the_server_into_the_project_network(
    client: httpx.AsyncClient,
) -> None:
    booted = await server(client)

    (port,) = await ports_of(client, booted["id"])
    (entry,) = booted["addresses"]["private"]
    assert port["device_owner"] == "compute:nova"
    assert entry["addr"] == port["fixed_ips"][0]["ip_address"]
    assert entry["addr"].startswith("10.0.")
    assert entry["OS-EXT-IPS-MAC:mac_addr"] == port["mac_address"]
    assert entry["OS-EXT-IPS:type"] == "fixed"


async def test_a_fixed_ip_and_a_user_port_are_honoured_and_released_as_nova_does(
    client: httpx.AsyncClient,
) -> None:
    private = await network_named(client, "private")
    made = await client.post(f"{V2}/ports", json={"port": {"network_id": private["id"]}})
    user_port = made.json()["port"]

    booted = await server(
        client,
        networks=[{"uuid": private["id"], "fixed_ip": "10.0.3.7"}, {"port": user_port["id"]}],
    )
    addresses = [e["addr"] for e in booted["addresses"]["private"]]
    assert "10.0.3.7" in addresses and user_port["fixed_ips"][0]["ip_address"] in addresses

    assert (await client.delete(f"{SERVERS}/{booted['id']}")).status_code == 204
    kept = (await client.get(f"{V2}/ports/{user_port['id']}")).json()["port"]
    assert kept["device_id"] == ""  # unbound, not deleted
    assert await ports_of(client, booted["id"]) == []


async def test_a_floating_ip_shows_among_the_server_addresses(client: httpx.AsyncClient) -> None:
    private = await network_named(client, "private")
    public = await network_named(client, "public")
    router = (await client.post(f"{V2}/routers", json={"router": {"name": "r"}})).json()["router"]
    gateway = {"router": {"external_gateway_info": {"network_id": public["id"]}}}
    await client.put(f"{V2}/routers/{router['id']}", json=gateway)
    subnet_id = private["subnets"][0]
    add = await client.put(
        f"{V2}/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet_id}
    )
    assert add.status_code == 200, add.text
    booted = await server(client)
    (port,) = await ports_of(client, booted["id"])

    fip = {"floatingip": {"floating_network_id": public["id"], "port_id": port["id"]}}
    made = await client.post(f"{V2}/floatingips", json=fip)
    assert made.status_code == 201, made.text
    shown = (await client.get(f"{SERVERS}/{booted['id']}")).json()["server"]

    kinds = [(e["OS-EXT-IPS:type"], e["addr"]) for e in shown["addresses"]["private"]]
    assert ("floating", made.json()["floatingip"]["floating_ip_address"]) in kinds


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        ({"imageRef": "no-such-image"}, 400, "Image no-such-image could not be found."),
        ({"flavorRef": "m1.nope"}, 400, "Flavor m1.nope could not be found."),
        ({"key_name": "nobody"}, 400, "Invalid key_name provided."),
        (
            {"networks": [{"uuid": "5e1c0c1a-0000-4000-8000-000000000000"}]},
            400,
            "could not be found",
        ),
    ],
)
async def test_what_nova_refuses_leaves_no_server_and_no_port(
    client: httpx.AsyncClient, extra: dict[str, Any], status: int, message: str
) -> None:
    response = await boot(client, **extra)

    assert response.status_code == status
    assert message in next(iter(response.json().values()))["message"]
    assert (await client.get(f"{SERVERS}")).json()["servers"] == []
    assert (await client.get(f"{V2}/ports", params={"device_owner": "compute:nova"})).json()[
        "ports"
    ] == []


async def test_auto_with_two_project_networks_is_ambiguous(client: httpx.AsyncClient) -> None:
    await client.post(f"{V2}/networks", json={"network": {"name": "second"}})

    response = await boot(client)

    assert response.status_code == 409
    assert "Multiple possible networks found" in response.json()["conflictingRequest"]["message"]
    assert (await boot(client, networks="none")).status_code == 202


async def test_groups_given_by_id_show_by_name_and_dashed_macs_are_neutron_s(
    client: httpx.AsyncClient,
) -> None:
    group = (
        await client.post(f"{V2}/security-groups", json={"security_group": {"name": "web"}})
    ).json()
    private = await network_named(client, "private")
    port = {"port": {"network_id": private["id"], "mac_address": "00-00-00-00-BB-BB"}}
    made = await client.post(f"{V2}/ports", json=port)

    booted = await server(client, security_groups=[{"name": group["security_group"]["id"]}])

    assert booted["security_groups"] == [{"name": "web"}]  # Nova shows names
    assert made.json()["port"]["mac_address"] == "00:00:00:00:bb:bb"
