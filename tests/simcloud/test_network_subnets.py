"""simcloud's Neutron: subnets, their gateways and pools, and Neutron's refusals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.simcloud.test_network_helpers import (
    V2,
    create,
    error,
    network_with_subnet,
    neutron,
    public_network,
)

#: Keys of subnet-create-response.json that simcloud shows (it leaves out segment_id,
#: dns_publish_fixed_ip and service_types, of extensions it lacks).
SUBNET_KEYS = {
    "name", "enable_dhcp", "network_id", "project_id", "tenant_id", "dns_nameservers",
    "allocation_pools", "host_routes", "ip_version", "gateway_ip", "cidr", "id",
    "created_at", "description", "ipv6_address_mode", "ipv6_ra_mode", "revision_number",
    "subnetpool_id", "tags", "updated_at", "router:external",
}  # fmt: skip


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


@pytest.fixture
async def network(client: httpx.AsyncClient) -> dict[str, Any]:
    return await create(client, "networks", "network", name="net1")


async def post_subnet(
    client: httpx.AsyncClient, network: dict[str, Any], **fields: Any
) -> httpx.Response:
    body = {"network_id": network["id"], "ip_version": 4} | fields
    return await client.post(f"{V2}/subnets", json={"subnet": body})


async def test_create_subnet_from_the_api_ref_sample(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    response = await post_subnet(client, network, cidr="192.168.199.0/24")
    shown = (await client.get(f"{V2}/networks/{network['id']}")).json()["network"]

    assert response.status_code == 201, response.text
    subnet = response.json()["subnet"]
    assert set(subnet) == SUBNET_KEYS
    assert subnet["gateway_ip"] == "192.168.199.1"
    assert subnet["allocation_pools"] == [{"start": "192.168.199.2", "end": "192.168.199.254"}]
    assert (subnet["enable_dhcp"], subnet["router:external"]) == (True, False)
    assert (subnet["dns_nameservers"], subnet["host_routes"]) == ([], [])
    assert subnet["ipv6_address_mode"] is None
    assert shown["subnets"] == [subnet["id"]]


async def test_subnet_without_gateway_pools_every_host(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    response = await post_subnet(client, network, cidr="10.1.0.0/29", gateway_ip=None)

    subnet = response.json()["subnet"]
    assert subnet["gateway_ip"] is None
    assert subnet["allocation_pools"] == [{"start": "10.1.0.1", "end": "10.1.0.6"}]


async def test_gateway_inside_the_range_splits_the_default_pool(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    response = await post_subnet(client, network, cidr="10.1.0.0/29", gateway_ip="10.1.0.3")

    assert response.json()["subnet"]["allocation_pools"] == [
        {"start": "10.1.0.1", "end": "10.1.0.2"},
        {"start": "10.1.0.4", "end": "10.1.0.6"},
    ]


async def test_cidr_host_bits_are_dropped(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    response = await post_subnet(client, network, cidr="10.0.0.5/24")

    assert response.json()["subnet"]["cidr"] == "10.0.0.0/24"


async def test_ipv6_subnet_gets_a_gateway_and_pool(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    response = await post_subnet(client, network, ip_version=6, cidr="2001:db8::/64")

    subnet = response.json()["subnet"]
    assert subnet["gateway_ip"] == "2001:db8::1"
    assert subnet["allocation_pools"] == [
        {"start": "2001:db8::2", "end": "2001:db8::ffff:ffff:ffff:ffff"}
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cidr": "nonsense"},
         "Invalid input for cidr. Reason: 'nonsense' is not a valid IP subnet."),
        ({"cidr": "10.0.0.0"},
         "Invalid input for cidr. Reason: '10.0.0.0' is not a valid IP subnet."),
        ({"cidr": "10.0.0.0/24", "ip_version": 5}, "Invalid input for ip_version. Reason: 5 is "
         "not in [4, 6]."),
        ({"cidr": "10.0.0.0/24", "gateway_ip": "x"}, "Invalid input for gateway_ip. Reason: "
         "'x' is not a valid IP address."),
        ({"cidr": "10.0.0.0/24", "enable_dhcp": "often"}, "Invalid input for enable_dhcp. "
         "Reason: 'often' cannot be converted to boolean."),
        ({"cidr": "10.0.0.0/24", "dns_nameservers": ["8.8.8.8", "8.8.8.8"]}, "Invalid input for "
         "dns_nameservers. Reason: Duplicate nameserver '8.8.8.8'."),
    ],
)  # fmt: skip
async def test_bad_subnet_attributes_answer_400(
    client: httpx.AsyncClient, network: dict[str, Any], fields: dict[str, Any], message: str
) -> None:
    response = await post_subnet(client, network, **fields)

    assert error(response, 400, "HTTPBadRequest") == message


async def test_network_id_is_required(client: httpx.AsyncClient) -> None:
    response = await client.post(f"{V2}/subnets", json={"subnet": {"ip_version": 4}})

    message = error(response, 400, "HTTPBadRequest")
    assert message == "Failed to parse request. Required attribute 'network_id' not specified"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"cidr": "2001:db8::/64"},
            "Invalid input for operation: cidr '2001:db8::/64' does not match the ip_version '4'.",
        ),
        (
            {"cidr": "10.0.0.0/24", "gateway_ip": "10.0.0.255"},
            "Invalid input for operation: Gateway is not valid on subnet.",
        ),
    ],
)
async def test_inconsistent_subnets_are_invalid_input(
    client: httpx.AsyncClient, network: dict[str, Any], fields: dict[str, Any], message: str
) -> None:
    response = await post_subnet(client, network, **fields)

    assert error(response, 400, "InvalidInput") == message


async def test_a_cidr_is_needed_without_subnet_pools(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    response = await post_subnet(client, network)

    message = error(response, 400, "BadRequest")
    assert (
        message == "Bad subnets request: a subnetpool must be specified in the absence of a cidr."
    )


async def test_overlapping_cidr_on_the_same_network_answers_400(
    client: httpx.AsyncClient, network: dict[str, Any]
) -> None:
    await post_subnet(client, network, cidr="10.0.0.0/24")
    other = await create(client, "networks", "network", name="other")

    overlapping = await post_subnet(client, network, cidr="10.0.0.128/25")
    elsewhere = await post_subnet(client, other, cidr="10.0.0.0/24")

    assert error(overlapping, 400, "InvalidInput") == (
        f"Invalid input for operation: Requested subnet with cidr: 10.0.0.128/25 for "
        f"network: {network['id']} overlaps with another subnet."
    )
    assert elsewhere.status_code == 201


@pytest.mark.parametrize(
    ("pools", "status", "kind", "message"),
    [
        ([{"start": "10.0.0.20", "end": "10.0.1.5"}], 400, "OutOfBoundsAllocationPool",
         "The allocation pool 10.0.0.20-10.0.1.5 spans beyond the subnet cidr 10.0.0.0/24."),
        ([{"start": "10.0.0.9", "end": "10.0.0.5"}], 400, "InvalidAllocationPool",
         "The allocation pool 10.0.0.9-10.0.0.5 is not valid."),
        ([{"start": "10.0.0.2", "end": "10.0.0.9"}, {"start": "10.0.0.5", "end": "10.0.0.20"}],
         409, "OverlappingAllocationPools", "Found overlapping allocation pools: "
         "10.0.0.2-10.0.0.9 10.0.0.5-10.0.0.20 for subnet 10.0.0.0/24."),
        ([{"start": "10.0.0.1", "end": "10.0.0.9"}], 409, "GatewayConflictWithAllocationPools",
         "Gateway ip 10.0.0.1 conflicts with allocation pool 10.0.0.1-10.0.0.9."),
    ],
)  # fmt: skip
async def test_bad_allocation_pools_are_refused(
    client: httpx.AsyncClient,
    network: dict[str, Any],
    pools: list[dict[str, str]],
    status: int,
    kind: str,
    message: str,
) -> None:
    response = await post_subnet(client, network, cidr="10.0.0.0/24", allocation_pools=pools)

    assert error(response, status, kind) == message


async def test_subnets_on_unknown_or_foreign_networks_answer_404(client: httpx.AsyncClient) -> None:
    missing = {"id": "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"}
    public = await public_network(client)

    unknown = await post_subnet(client, missing, cidr="10.0.0.0/24")
    foreign = await post_subnet(client, public, cidr="10.9.0.0/24")

    assert error(unknown, 404, "NetworkNotFound") == f"Network {missing['id']} could not be found."
    assert error(foreign, 404, "HTTPNotFound") == "The resource could not be found."


async def test_update_subnet_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    url = f"{V2}/subnets/{subnet['id']}"

    renamed = await client.put(url, json={"subnet": {"name": "my_subnet"}})
    dns = await client.put(url, json={"subnet": {"dns_nameservers": ["8.8.8.8", "1.1.1.1"]}})
    too_many = await client.put(
        url, json={"subnet": {"dns_nameservers": [f"10.9.9.{i}" for i in range(6)]}}
    )
    read_only = await client.put(url, json={"subnet": {"cidr": "10.1.0.0/24"}})

    assert renamed.json()["subnet"]["name"] == "my_subnet"
    assert dns.json()["subnet"]["dns_nameservers"] == ["8.8.8.8", "1.1.1.1"]
    assert dns.json()["subnet"]["revision_number"] == 3
    assert error(too_many, 400, "DNSNameServersExhausted") == (
        f"Unable to complete operation for {subnet['id']}. The number of DNS nameservers "
        "exceeds the limit 5."
    )
    assert error(read_only, 400, "HTTPBadRequest") == "Cannot update read-only attribute cidr"


async def test_subnet_with_a_port_cannot_be_deleted(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    port = await create(client, "ports", "port", network_id=network["id"])
    url = f"{V2}/subnets/{subnet['id']}"

    refused = await client.delete(url)
    await client.delete(f"{V2}/ports/{port['id']}")
    accepted = await client.delete(url)

    assert error(refused, 409, "SubnetInUse") == (
        f"Unable to complete operation on subnet {subnet['id']}: One or more ports have an "
        "IP allocation from this subnet."
    )
    assert accepted.status_code == 204
    network_now = (await client.get(f"{V2}/networks/{network['id']}")).json()["network"]
    assert network_now["subnets"] == []


async def test_gateway_held_by_a_router_cannot_move(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    router = await create(client, "routers", "router", name="r1")
    added = await client.put(
        f"{V2}/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet["id"]}
    )

    response = await client.put(
        f"{V2}/subnets/{subnet['id']}", json={"subnet": {"gateway_ip": "10.0.0.254"}}
    )

    assert error(response, 409, "GatewayIpInUse") == (
        f"Current gateway ip 10.0.0.1 already in use by port {added.json()['port_id']}. "
        "Unable to update."
    )
