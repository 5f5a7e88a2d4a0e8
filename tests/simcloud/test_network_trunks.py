"""simcloud's Neutron: trunks, their sub-ports and the parent port's `trunk_details`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.simcloud.test_network_helpers import (
    V2,
    create,
    error,
    listed,
    network_with_subnet,
    neutron,
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


async def ports(client: httpx.AsyncClient, n: int) -> list[dict[str, Any]]:
    network, _ = await network_with_subnet(client)
    return [
        await create(client, "ports", "port", network_id=network["id"], name=f"p{i}")
        for i in range(n)
    ]


async def port(client: httpx.AsyncClient, port_id: str) -> dict[str, Any]:
    shown: dict[str, Any] = (await client.get(f"{V2}/ports/{port_id}")).json()["port"]
    return shown


async def test_a_trunk_shows_its_sub_ports_on_the_parent_port(client: httpx.AsyncClient) -> None:
    parent, one, two = await ports(client, 3)
    sub = {"port_id": one["id"], "segmentation_type": "vlan", "segmentation_id": 10}
    trunk = await create(client, "trunks", "trunk", port_id=parent["id"], sub_ports=[sub])
    assert (trunk["status"], trunk["sub_ports"]) == ("DOWN", [sub])
    details = (await port(client, parent["id"]))["trunk_details"]
    assert details == {
        "trunk_id": trunk["id"],
        "sub_ports": [sub | {"mac_address": one["mac_address"]}],
    }
    assert (await port(client, one["id"]))["device_owner"] == "trunk:subport"

    url = f"{V2}/trunks/{trunk['id']}"
    added = {"port_id": two["id"], "segmentation_type": "vlan", "segmentation_id": 20}
    grown = await client.put(f"{url}/add_subports", json={"sub_ports": [added]})
    assert grown.status_code == 200 and len(grown.json()["sub_ports"]) == 2
    removed = await client.put(
        f"{url}/remove_subports", json={"sub_ports": [{"port_id": one["id"]}]}
    )
    assert removed.json()["sub_ports"] == [added]
    assert [
        s["port_id"] for s in (await port(client, parent["id"]))["trunk_details"]["sub_ports"]
    ] == [two["id"]]
    assert (await port(client, one["id"]))["device_owner"] == ""
    renamed = await client.put(url, json={"trunk": {"name": "t2"}})
    assert renamed.json()["trunk"]["name"] == "t2"
    assert [t["id"] for t in await listed(client, "trunks")] == [trunk["id"]]
    assert (await client.get(f"{url}/get_subports")).json() == {"sub_ports": [added]}

    assert (await client.delete(url)).status_code == 204
    assert "trunk_details" not in await port(client, parent["id"])
    error(await client.get(url), 404, "TrunkNotFound")


async def test_neutrons_trunk_refusals(client: httpx.AsyncClient) -> None:
    parent, one, other = await ports(client, 3)
    sub = {"port_id": one["id"], "segmentation_type": "vlan", "segmentation_id": 10}
    trunk = await create(client, "trunks", "trunk", port_id=parent["id"], sub_ports=[sub])
    again = await client.post(f"{V2}/trunks", json={"trunk": {"port_id": parent["id"]}})
    assert "is in use by another trunk" in error(again, 409, "TrunkPortInUse")
    url = f"{V2}/trunks/{trunk['id']}"
    twice = {"port_id": other["id"], "segmentation_type": "vlan", "segmentation_id": 10}
    clash = await client.put(f"{url}/add_subports", json={"sub_ports": [twice]})
    assert "already in use on trunk" in error(clash, 409, "DuplicateSubPort")
    missing = await client.put(
        f"{url}/remove_subports", json={"sub_ports": [{"port_id": other["id"]}]}
    )
    error(missing, 404, "SubPortNotFound")
    bodies: list[Any] = [{"sub_ports": [twice], "extra": 1}, {"sub_ports": ["x"]}, []]
    for bad in bodies:
        assert (await client.put(f"{url}/add_subports", json=bad)).status_code == 400
    error(await client.delete(f"{V2}/ports/{parent['id']}"), 409, "PortInUseAsTrunkParent")
    error(await client.delete(f"{V2}/ports/{one['id']}"), 409, "PortInUseAsSubPort")
    assert "trunk" in {
        e["alias"] for e in (await client.get(f"{V2}/extensions")).json()["extensions"]
    }
