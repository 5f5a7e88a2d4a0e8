"""simcloud's Neutron: floating IPs, their association and the reachability rule."""

from __future__ import annotations

import ipaddress
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
    routed_port,
)

#: Keys of floatingip-create-response.json that simcloud shows (it leaves out dns_domain,
#: dns_name, qos_policy_id and port_forwardings).
FIP_KEYS = {
    "fixed_ip_address", "floating_ip_address", "floating_network_id", "id", "port_id",
    "router_id", "status", "project_id", "tenant_id", "description", "created_at",
    "updated_at", "revision_number", "port_details", "tags",
}  # fmt: skip
PORT_DETAILS_KEYS = {
    "status",
    "name",
    "admin_state_up",
    "network_id",
    "device_owner",
    "mac_address",
    "device_id",
}
MISSING = "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


async def post_fip(client: httpx.AsyncClient, **fields: Any) -> httpx.Response:
    return await client.post(f"{V2}/floatingips", json={"floatingip": fields})


def unreachable(external_id: str, subnet_id: str, port_id: str) -> str:
    return (
        f"External network {external_id} is not reachable from subnet {subnet_id}.  "
        f"Therefore, cannot associate Port {port_id} with a Floating IP."
    )


async def test_create_an_associated_floating_ip_from_the_api_ref_sample(
    client: httpx.AsyncClient,
) -> None:
    port, router = await routed_port(client)
    public = await public_network(client)
    # floatingip-create-request.json without floating_ip_address (admin-only) and the
    # DNS and QoS attributes
    sample = {
        "floating_network_id": public["id"],
        "port_id": port["id"],
        "subnet_id": public["subnets"][0],
        "fixed_ip_address": port["fixed_ips"][0]["ip_address"],
        "description": "floating ip for testing",
    }

    response = await post_fip(client, **sample)

    assert response.status_code == 201, response.text
    fip = response.json()["floatingip"]
    assert set(fip) == FIP_KEYS
    assert (fip["status"], fip["router_id"], fip["port_id"]) == ("ACTIVE", router["id"], port["id"])
    assert fip["fixed_ip_address"] == "10.0.0.2"
    assert ipaddress.ip_address(fip["floating_ip_address"]) in ipaddress.ip_network("172.24.4.0/24")
    assert fip["description"] == "floating ip for testing"
    assert set(fip["port_details"]) == PORT_DETAILS_KEYS
    assert fip["port_details"]["mac_address"] == port["mac_address"]


async def test_unassociated_floating_ip_is_down(client: httpx.AsyncClient) -> None:
    public = await public_network(client)

    fip = await create(client, "floatingips", "floatingip", floating_network_id=public["id"])

    assert (fip["status"], fip["router_id"], fip["port_id"]) == ("DOWN", None, None)
    assert (fip["fixed_ip_address"], fip["port_details"]) == (None, None)


async def test_associate_then_disassociate_with_put(client: httpx.AsyncClient) -> None:
    port, router = await routed_port(client)
    public = await public_network(client)
    fip = await create(client, "floatingips", "floatingip", floating_network_id=public["id"])
    url = f"{V2}/floatingips/{fip['id']}"

    associated = await client.put(url, json={"floatingip": {"port_id": port["id"]}})
    disassociated = await client.put(url, json={"floatingip": {"port_id": None}})

    assert associated.status_code == 200, associated.text
    after = associated.json()["floatingip"]
    assert (after["status"], after["router_id"], after["fixed_ip_address"]) == (
        "ACTIVE",
        router["id"],
        "10.0.0.2",
    )
    gone = disassociated.json()["floatingip"]
    assert (gone["status"], gone["port_id"], gone["fixed_ip_address"]) == ("DOWN", None, None)
    assert (gone["router_id"], gone["port_details"]) == (None, None)
    assert gone["floating_ip_address"] == fip["floating_ip_address"]
    assert gone["revision_number"] == 3


async def test_floating_ips_need_an_external_network(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network")

    response = await post_fip(client, floating_network_id=network["id"])

    message = error(response, 400, "BadRequest")
    assert message == (
        f"Bad floatingip request: Network {network['id']} is not a valid external network."
    )


async def test_port_without_a_router_is_unreachable(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    port = await create(client, "ports", "port", network_id=network["id"])
    public = await public_network(client)

    response = await post_fip(client, floating_network_id=public["id"], port_id=port["id"])

    message = error(response, 404, "ExternalGatewayForFloatingIPNotFound")
    assert message == unreachable(public["id"], subnet["id"], port["id"])
    assert (await client.get(f"{V2}/floatingips")).json()["floatingips"] == []


async def test_router_without_a_gateway_does_not_reach(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    router = await create(client, "routers", "router")
    await client.put(
        f"{V2}/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet["id"]}
    )
    port = await create(client, "ports", "port", network_id=network["id"])
    public = await public_network(client)

    response = await post_fip(client, floating_network_id=public["id"], port_id=port["id"])

    message = error(response, 404, "ExternalGatewayForFloatingIPNotFound")
    assert message == unreachable(public["id"], subnet["id"], port["id"])


async def test_router_on_another_subnet_does_not_reach(client: httpx.AsyncClient) -> None:
    _, router = await routed_port(client)
    network, subnet = await network_with_subnet(client, cidr="10.9.0.0/24")
    lonely = await create(client, "ports", "port", network_id=network["id"])
    public = await public_network(client)

    response = await post_fip(client, floating_network_id=public["id"], port_id=lonely["id"])

    message = error(response, 404, "ExternalGatewayForFloatingIPNotFound")
    assert message == unreachable(public["id"], subnet["id"], lonely["id"])
    assert router["external_gateway_info"]["network_id"] == public["id"]


async def test_choosing_the_floating_address_is_the_admins(client: httpx.AsyncClient) -> None:
    public = await public_network(client)

    response = await post_fip(
        client, floating_network_id=public["id"], floating_ip_address="172.24.4.228"
    )

    message = error(response, 403, "PolicyNotAuthorized")
    assert message == "(rule:create_floatingip:floating_ip_address) is disallowed by policy"


async def test_interface_serving_a_floating_ip_cannot_be_removed(
    client: httpx.AsyncClient,
) -> None:
    port, router = await routed_port(client)
    public = await public_network(client)
    fip = await create(
        client, "floatingips", "floatingip", floating_network_id=public["id"], port_id=port["id"]
    )
    subnet_id = port["fixed_ips"][0]["subnet_id"]
    remove = f"{V2}/routers/{router['id']}/remove_router_interface"

    refused = await client.put(remove, json={"subnet_id": subnet_id})
    await client.put(f"{V2}/floatingips/{fip['id']}", json={"floatingip": {"port_id": None}})
    accepted = await client.put(remove, json={"subnet_id": subnet_id})

    assert error(refused, 409, "RouterInterfaceInUseByFloatingIP") == (
        f"Router interface for subnet {subnet_id} on router {router['id']} cannot be deleted, "
        "as it is required by one or more floating IPs."
    )
    assert accepted.status_code == 200


async def test_gateway_serving_a_floating_ip_cannot_be_removed(client: httpx.AsyncClient) -> None:
    port, router = await routed_port(client)
    public = await public_network(client)
    await create(
        client, "floatingips", "floatingip", floating_network_id=public["id"], port_id=port["id"]
    )

    response = await client.put(
        f"{V2}/routers/{router['id']}", json={"router": {"external_gateway_info": None}}
    )

    assert error(response, 409, "RouterExternalGatewayInUseByFloatingIp") == (
        f"Gateway cannot be updated for router {router['id']}, since a gateway to external "
        f"network {public['id']} is required by one or more floating IPs."
    )


async def test_deleting_the_port_disassociates_its_floating_ip(client: httpx.AsyncClient) -> None:
    port, _ = await routed_port(client)
    public = await public_network(client)
    fip = await create(
        client, "floatingips", "floatingip", floating_network_id=public["id"], port_id=port["id"]
    )

    await client.delete(f"{V2}/ports/{port['id']}")
    shown = (await client.get(f"{V2}/floatingips/{fip['id']}")).json()["floatingip"]

    assert (shown["status"], shown["port_id"], shown["router_id"]) == ("DOWN", None, None)


async def test_a_fixed_ip_takes_one_floating_ip_per_network(client: httpx.AsyncClient) -> None:
    port, _ = await routed_port(client)
    public = await public_network(client)
    first = await create(
        client, "floatingips", "floatingip", floating_network_id=public["id"], port_id=port["id"]
    )

    second = await post_fip(client, floating_network_id=public["id"], port_id=port["id"])

    message = error(second, 409, "FloatingIPPortAlreadyAssociated")
    assert message.startswith("Cannot associate floating IP ")
    assert f"with port {port['id']} using fixed IP 10.0.0.2" in message
    assert first["floating_ip_address"] not in message  # the refused one is named


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"fixed_ip_address": "10.0.0.2"}, "Bad floatingip request: fixed_ip_address cannot be "
         "specified without a port_id."),
        ({"port_id": "ROUTER_PORT"}, "Bad floatingip request: Port ROUTER_PORT is unable to be "
         "assigned a floating IP."),
        ({"port_id": "PORT", "fixed_ip_address": "10.0.0.99"}, "Bad floatingip request: Port "
         "PORT does not have fixed ip 10.0.0.99."),
    ],
)  # fmt: skip
async def test_bad_associations_answer_400(
    client: httpx.AsyncClient, fields: dict[str, str], message: str
) -> None:
    port, router = await routed_port(client)
    router_port = (await client.get(f"{V2}/ports", params={"device_id": router["id"]})).json()
    names = {"ROUTER_PORT": router_port["ports"][0]["id"], "PORT": port["id"]}
    for placeholder, value in names.items():
        message = message.replace(placeholder, value)
        fields = {k: v.replace(placeholder, value) for k, v in fields.items()}
    public = await public_network(client)

    response = await post_fip(client, floating_network_id=public["id"], **fields)

    assert error(response, 400, "BadRequest") == message


async def test_deleted_floating_ip_gives_its_address_back() -> None:
    async with neutron() as (client, state):
        public = await public_network(client)
        fip = await create(client, "floatingips", "floatingip", floating_network_id=public["id"])
        allocated = state.network.allocations[public["subnets"][0]]
        held = fip["floating_ip_address"] in allocated
        url = f"{V2}/floatingips/{fip['id']}"

        deleted = await client.delete(url)
        gone = await client.get(url)
        details = (await client.get(f"{V2}/quotas/{fip['project_id']}/details")).json()["quota"]

    assert held
    assert deleted.status_code == 204
    message = error(gone, 404, "FloatingIPNotFound")
    assert message == f"Floating IP {fip['id']} could not be found"
    assert details["floatingip"]["used"] == 0
    assert fip["floating_ip_address"] not in allocated


async def test_unknown_floating_ip_answers_404(client: httpx.AsyncClient) -> None:
    response = await client.put(
        f"{V2}/floatingips/{MISSING}", json={"floatingip": {"port_id": None}}
    )

    assert error(response, 404, "FloatingIPNotFound") == f"Floating IP {MISSING} could not be found"
