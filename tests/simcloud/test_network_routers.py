"""simcloud's Neutron: routers, their external gateway and their interfaces."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.simcloud.test_network_helpers import (
    V2,
    create,
    error,
    listed,
    network_with_subnet,
    neutron,
    public_network,
)

#: Keys of router-create-response.json that simcloud shows (it leaves out distributed,
#: ha, flavor_id, service_type_id and conntrack_helpers).
ROUTER_KEYS = {
    "admin_state_up", "availability_zone_hints", "availability_zones", "created_at",
    "description", "external_gateway_info", "id", "name", "revision_number", "status",
    "updated_at", "project_id", "tenant_id", "tags", "routes",
}  # fmt: skip
INTERFACE_KEYS = {
    "id",
    "network_id",
    "port_id",
    "subnet_id",
    "subnet_ids",
    "project_id",
    "tenant_id",
    "tags",
}
MISSING = "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


async def interface(
    client: httpx.AsyncClient, router_id: str, action: str, **body: str
) -> httpx.Response:
    return await client.put(f"{V2}/routers/{router_id}/{action}_router_interface", json=body)


async def test_create_router_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    public = await public_network(client)
    # router-create-request.json without enable_snat and external_fixed_ips (admin-only)
    sample = {
        "name": "router1",
        "external_gateway_info": {"network_id": public["id"]},
        "admin_state_up": True,
    }

    response = await client.post(f"{V2}/routers", json={"router": sample})

    assert response.status_code == 201, response.text
    router = response.json()["router"]
    assert set(router) == ROUTER_KEYS
    assert (router["name"], router["status"]) == ("router1", "ACTIVE")
    gateway = router["external_gateway_info"]
    assert (gateway["network_id"], gateway["enable_snat"]) == (public["id"], True)
    (fixed_ip,) = gateway["external_fixed_ips"]
    assert fixed_ip["subnet_id"] == public["subnets"][0]
    assert ipaddress.ip_address(fixed_ip["ip_address"]) in ipaddress.ip_network("172.24.4.0/24")
    assert await listed(client, "ports", device_id=router["id"]) == []  # the gateway port is hidden


@pytest.mark.parametrize("key", ["enable_snat", "external_fixed_ips"])
async def test_gateway_details_are_the_admins(client: httpx.AsyncClient, key: str) -> None:
    public = await public_network(client)
    values = {"enable_snat": True, "external_fixed_ips": [{"subnet_id": public["subnets"][0]}]}
    gateway = {"network_id": public["id"], key: values[key]}

    response = await client.post(
        f"{V2}/routers", json={"router": {"external_gateway_info": gateway}}
    )

    message = error(response, 403, "PolicyNotAuthorized")
    assert message == f"(rule:create_router:external_gateway_info:{key}) is disallowed by policy"


async def test_gateway_needs_an_external_network(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network")

    response = await client.post(
        f"{V2}/routers", json={"router": {"external_gateway_info": {"network_id": network["id"]}}}
    )

    message = error(response, 400, "BadRequest")
    assert message == f"Bad router request: Network {network['id']} is not an external network."


async def test_add_and_remove_an_interface_by_subnet(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    router = await create(client, "routers", "router", name="r1")

    added = await interface(client, router["id"], "add", subnet_id=subnet["id"])
    (port,) = await listed(client, "ports", device_id=router["id"])
    removed = await interface(client, router["id"], "remove", subnet_id=subnet["id"])

    assert added.status_code == 200, added.text
    info = added.json()
    assert set(info) == INTERFACE_KEYS
    assert (info["id"], info["network_id"], info["port_id"]) == (
        router["id"],
        network["id"],
        port["id"],
    )
    assert (info["subnet_id"], info["subnet_ids"]) == (subnet["id"], [subnet["id"]])
    assert port["device_owner"] == "network:router_interface"
    assert port["fixed_ips"] == [{"subnet_id": subnet["id"], "ip_address": "10.0.0.1"}]
    assert (port["security_groups"], port["status"]) == ([], "ACTIVE")
    assert removed.status_code == 200
    assert removed.json()["port_id"] == port["id"]
    assert await listed(client, "ports", device_id=router["id"]) == []


async def test_add_an_interface_by_port(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)
    router = await create(client, "routers", "router", name="r1")
    port = await create(client, "ports", "port", network_id=network["id"])
    busy = await create(client, "ports", "port", network_id=network["id"], device_id="vm-1")

    added = await interface(client, router["id"], "add", port_id=port["id"])
    refused = await interface(client, router["id"], "add", port_id=busy["id"])
    shown = (await client.get(f"{V2}/ports/{port['id']}")).json()["port"]

    assert added.json()["port_id"] == port["id"]
    assert (shown["device_id"], shown["device_owner"]) == (router["id"], "network:router_interface")
    assert error(refused, 409, "PortInUse") == (
        f"Unable to complete operation on port {busy['id']} for network {network['id']}. "
        "Port already has an attached device vm-1."
    )


async def test_interfaces_may_not_repeat_or_overlap(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    _, twin = await network_with_subnet(client, cidr="10.0.0.0/25")
    router = await create(client, "routers", "router", name="r1")
    await interface(client, router["id"], "add", subnet_id=subnet["id"])

    again = await interface(client, router["id"], "add", subnet_id=subnet["id"])
    overlapping = await interface(client, router["id"], "add", subnet_id=twin["id"])

    message = error(again, 400, "BadRequest")
    assert message == f"Bad router request: Router already has a port on subnet {subnet['id']}."
    assert error(overlapping, 400, "BadRequest") == (
        f"Bad router request: Cidr 10.0.0.0/25 of subnet {twin['id']} overlaps with cidr "
        f"10.0.0.0/24 of subnet {subnet['id']}."
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "Bad router request: Either subnet_id or port_id must be specified."),
        ({"subnet_id": MISSING, "port_id": MISSING}, "Bad router request: Cannot specify both "
         "subnet-id and port-id."),
        ({"subnet_id": "nope"}, "Bad router request: 'nope' is not a valid UUID."),
    ],
)  # fmt: skip
async def test_bad_interface_requests_answer_400(
    client: httpx.AsyncClient, body: dict[str, str], message: str
) -> None:
    router = await create(client, "routers", "router")

    response = await interface(client, router["id"], "add", **body)

    assert error(response, 400, "BadRequest") == message


async def test_subnet_without_gateway_cannot_be_an_interface(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client, gateway_ip=None)
    router = await create(client, "routers", "router")

    response = await interface(client, router["id"], "add", subnet_id=subnet["id"])

    message = error(response, 400, "BadRequest")
    assert message == "Bad router request: Subnet for router interface must have a gateway IP."


async def test_router_with_an_interface_cannot_be_deleted(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    public = await public_network(client)
    router = await create(
        client, "routers", "router", external_gateway_info={"network_id": public["id"]}
    )
    added = await interface(client, router["id"], "add", subnet_id=subnet["id"])
    url = f"{V2}/routers/{router['id']}"

    refused = await client.delete(url)
    await interface(client, router["id"], "remove", port_id=added.json()["port_id"])
    accepted = await client.delete(url)
    details = (await client.get(f"{V2}/quotas/{router['project_id']}/details")).json()["quota"]

    assert error(refused, 409, "RouterInUse") == (
        f"Router {router['id']} has ports still attached: {added.json()['port_id']}"
    )
    assert accepted.status_code == 204
    error(await client.get(url), 404, "RouterNotFound")
    assert details["port"]["used"] == 0


async def test_removing_a_missing_interface_answers_404(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    router = await create(client, "routers", "router")

    by_subnet = await interface(client, router["id"], "remove", subnet_id=subnet["id"])
    by_port = await interface(client, router["id"], "remove", port_id=MISSING)

    assert error(by_subnet, 404, "RouterInterfaceNotFoundForSubnet") == (
        f"Router {router['id']} has no interface on subnet {subnet['id']}"
    )
    assert error(by_port, 404, "RouterInterfaceNotFound") == (
        f"Router {router['id']} does not have an interface with id {MISSING}"
    )


async def test_gateway_can_be_cleared_and_set_again(client: httpx.AsyncClient) -> None:
    public = await public_network(client)
    router = await create(
        client, "routers", "router", external_gateway_info={"network_id": public["id"]}
    )
    url = f"{V2}/routers/{router['id']}"

    cleared = await client.put(url, json={"router": {"external_gateway_info": {}}})
    renamed = await client.put(url, json={"router": {"name": "edge"}})
    restored = await client.put(
        url, json={"router": {"external_gateway_info": {"network_id": public["id"]}}}
    )

    assert cleared.json()["router"]["external_gateway_info"] is None
    assert renamed.json()["router"]["name"] == "edge"
    assert restored.json()["router"]["external_gateway_info"]["network_id"] == public["id"]


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_unknown_router_answers_404(client: httpx.AsyncClient, method: str) -> None:
    body = {"router": {"name": "x"}} if method == "PUT" else None

    response = await client.request(method, f"{V2}/routers/{MISSING}", json=body)

    assert error(response, 404, "RouterNotFound") == f"Router {MISSING} could not be found"


async def test_extra_routes_are_added_and_removed_atomically(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client, "10.0.0.0/24")
    router = await create(client, "routers", "router", name="r1")
    url = f"{V2}/routers/{router['id']}"
    route = {"destination": "10.0.10.0/24", "nexthop": "10.0.0.10"}
    unconnected = await client.put(f"{url}/add_extraroutes", json={"router": {"routes": [route]}})
    assert "the nexthop is not connected with router" in error(unconnected, 400, "InvalidRoutes")
    assert (await interface(client, router["id"], "add", subnet_id=subnet["id"])).status_code == 200
    other = {"destination": "10.0.11.0/24", "nexthop": "10.0.0.11"}
    added = await client.put(
        f"{url}/add_extraroutes", json={"router": {"routes": [route, other, route]}}
    )
    assert added.json()["router"]["routes"] == [route, other]
    again = await client.put(f"{url}/add_extraroutes", json={"router": {"routes": [route]}})
    assert again.json()["router"]["routes"] == [route, other]  # already there: once
    removed = await client.put(
        f"{url}/remove_extraroutes",
        json={"router": {"routes": [route, {**route, "nexthop": "10.0.0.99"}]}},
    )
    assert removed.json()["router"]["routes"] == [other]
    assert (await client.get(url)).json()["router"]["routes"] == [other]
    bad = await client.put(
        f"{url}/add_extraroutes", json={"router": {"routes": [{"destination": "x"}]}}
    )
    assert bad.status_code == 400


async def test_a_router_update_replaces_its_extra_routes_and_a_create_may_not_set_them(
    client: httpx.AsyncClient,
) -> None:
    _, subnet = await network_with_subnet(client, "10.0.0.0/24")
    router = await create(client, "routers", "router", name="r1")
    assert (await interface(client, router["id"], "add", subnet_id=subnet["id"])).status_code == 200
    url = f"{V2}/routers/{router['id']}"
    routes = [{"destination": "10.0.20.0/24", "nexthop": "10.0.0.20"}]
    updated = await client.put(url, json={"router": {"routes": routes}})
    assert updated.status_code == 200 and updated.json()["router"]["routes"] == routes
    cleared = await client.put(url, json={"router": {"routes": []}})
    assert cleared.json()["router"]["routes"] == []
    far = [{"destination": "10.0.20.0/24", "nexthop": "192.168.9.9"}]
    error(await client.put(url, json={"router": {"routes": far}}), 400, "InvalidRoutes")
    refused = await client.post(f"{V2}/routers", json={"router": {"name": "r2", "routes": []}})
    assert refused.status_code == 400
