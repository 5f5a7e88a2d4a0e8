"""simcloud's Neutron seen from Nova: a server's ports, addresses and their release."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from simcloud import network as neutron_api
from simcloud.errors import SimError
from simcloud.network import (
    addresses_of_device,
    create_port_for_server,
    find_network,
    ports_of_device,
    release_device_ports,
)
from simcloud.state import SimState
from tests.simcloud.test_network_helpers import (
    V2,
    create,
    listed,
    network_with_subnet,
    neutron,
    public_network,
    routed_port,
)

SERVER = "6b6c4a40-3b0f-4f0e-9d55-4c1a7d1d2c11"


@pytest.fixture
async def sim() -> AsyncIterator[tuple[httpx.AsyncClient, SimState]]:
    async with neutron() as pair:
        yield pair


async def test_a_server_gets_a_bound_port_on_its_network(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    network, subnet = await network_with_subnet(client)

    port = create_port_for_server(state, SERVER, network_id=network["id"])
    shown = (await client.get(f"{V2}/ports/{port['id']}")).json()["port"]
    (default,) = await listed(client, "security-groups", name="default")

    assert shown == port
    assert (port["device_id"], port["device_owner"], port["status"]) == (
        SERVER,
        "compute:nova",
        "ACTIVE",
    )
    assert port["fixed_ips"] == [{"subnet_id": subnet["id"], "ip_address": "10.0.0.2"}]
    assert port["security_groups"] == [default["id"]]
    assert ports_of_device(state, SERVER) == [port]
    assert addresses_of_device(state, SERVER) == {
        "net1": [
            {
                "addr": "10.0.0.2",
                "version": 4,
                "OS-EXT-IPS:type": "fixed",
                "OS-EXT-IPS-MAC:mac_addr": port["mac_address"],
            }
        ]
    }


async def test_a_fixed_ip_and_groups_by_name_are_honoured(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    network, _ = await network_with_subnet(client)
    web = await create(client, "security-groups", "security_group", name="web")

    port = create_port_for_server(
        state, SERVER, network_id=network["id"], fixed_ip="10.0.0.42", security_groups=["web"]
    )

    assert port["fixed_ips"][0]["ip_address"] == "10.0.0.42"
    assert port["security_groups"] == [web["id"]]


async def test_release_deletes_novas_ports_and_unbinds_the_users(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    network, _ = await network_with_subnet(client)
    premade = await create(client, "ports", "port", network_id=network["id"], name="mine")
    made = create_port_for_server(state, SERVER, network_id=network["id"])
    bound = create_port_for_server(state, SERVER, port_id=premade["id"])

    release_device_ports(state, SERVER)
    kept = (await client.get(f"{V2}/ports/{premade['id']}")).json()["port"]
    gone = await client.get(f"{V2}/ports/{made['id']}")

    assert bound["device_id"] == SERVER
    assert (kept["device_id"], kept["device_owner"], kept["status"]) == ("", "", "DOWN")
    assert gone.status_code == 404
    assert ports_of_device(state, SERVER) == []
    assert addresses_of_device(state, SERVER) == {}


async def test_a_servers_port_is_not_a_members_to_delete_until_it_is_unbound(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    network, _ = await network_with_subnet(client)
    port = await create(client, "ports", "port", network_id=network["id"])
    bound = create_port_for_server(state, SERVER, port_id=port["id"])

    refused = await client.delete(f"{V2}/ports/{port['id']}")
    release_device_ports(state, SERVER)
    deleted = await client.delete(f"{V2}/ports/{port['id']}")

    assert bound["device_owner"] == "compute:nova"
    assert refused.status_code == 403
    assert refused.json()["NeutronError"]["message"] == ("rule:delete_port is disallowed by policy")
    assert deleted.status_code == 204


async def test_a_bound_port_cannot_serve_a_second_server(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    network, _ = await network_with_subnet(client)
    port = create_port_for_server(state, SERVER, network_id=network["id"])

    with pytest.raises(SimError) as caught:
        create_port_for_server(state, "another-server", port_id=port["id"])

    assert (caught.value.status, caught.value.error_type) == (409, "PortInUse")


async def test_unknown_network_is_neutrons_404(sim: tuple[httpx.AsyncClient, SimState]) -> None:
    _, state = sim

    with pytest.raises(SimError) as caught:
        create_port_for_server(state, SERVER, network_id="0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11")

    assert (caught.value.status, caught.value.error_type) == (404, "NetworkNotFound")
    assert caught.value.style == "neutron"


async def test_floating_ips_follow_their_fixed_address(
    sim: tuple[httpx.AsyncClient, SimState],
) -> None:
    client, state = sim
    premade, _ = await routed_port(client)
    public = await public_network(client)
    create_port_for_server(state, SERVER, port_id=premade["id"])
    fip = await create(
        client, "floatingips", "floatingip", floating_network_id=public["id"], port_id=premade["id"]
    )

    addresses = addresses_of_device(state, SERVER)

    assert [(a["addr"], a["OS-EXT-IPS:type"]) for a in addresses["net1"]] == [
        ("10.0.0.2", "fixed"),
        (fip["floating_ip_address"], "floating"),
    ]
    assert {a["OS-EXT-IPS-MAC:mac_addr"] for a in addresses["net1"]} == {premade["mac_address"]}


async def test_find_network_by_id_or_unique_name(sim: tuple[httpx.AsyncClient, SimState]) -> None:
    client, state = sim
    first = await create(client, "networks", "network", name="twin")
    await create(client, "networks", "network", name="twin")

    by_id = find_network(state, first["id"])
    public = find_network(state, "public")
    with pytest.raises(SimError) as ambiguous:
        find_network(state, "twin")
    with pytest.raises(SimError) as missing:
        find_network(state, "nowhere")

    assert by_id == first
    assert public["id"] == neutron_api.PUBLIC_NETWORK_ID
    assert (ambiguous.value.status, missing.value.status) == (409, 404)
    assert missing.value.error_type == "NetworkNotFound"


async def test_helpers_return_copies(sim: tuple[httpx.AsyncClient, SimState]) -> None:
    client, state = sim
    network, _ = await network_with_subnet(client)
    port = create_port_for_server(state, SERVER, network_id=network["id"])

    port["fixed_ips"].clear()
    find_network(state, network["id"])["subnets"].clear()

    assert ports_of_device(state, SERVER)[0]["fixed_ips"] != []
    assert find_network(state, network["id"])["subnets"] != []


def test_the_package_names_its_helpers() -> None:
    for name in neutron_api.__all__:
        assert getattr(neutron_api, name) is not None
    with pytest.raises(AttributeError):
        _ = neutron_api.not_a_helper
