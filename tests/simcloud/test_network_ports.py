"""simcloud's Neutron: ports, address allocation and exhaustion, port security, filters."""

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

#: Keys of port-create-response.json that simcloud shows, plus `binding:vnic_type`
#: (it leaves out the DNS, QoS, extra DHCP option, pvlan, data plane status,
#: uplink status, hardware offload, trusted and ip_allocation attributes).
PORT_KEYS = {
    "admin_state_up", "allowed_address_pairs", "binding:vnic_type", "created_at",
    "description", "device_id", "device_owner", "fixed_ips", "id", "mac_address", "name",
    "network_id", "port_security_enabled", "project_id", "revision_number",
    "security_groups", "status", "tags", "tenant_id", "updated_at",
}  # fmt: skip
MISSING = "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


async def post_port(client: httpx.AsyncClient, **fields: Any) -> httpx.Response:
    return await client.post(f"{V2}/ports", json={"port": fields})


def addresses(port: dict[str, Any]) -> list[str]:
    return [ip["ip_address"] for ip in port["fixed_ips"]]


async def test_create_port_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    # port-create-request.json without the DNS, QoS, pvlan, uplink, offload and
    # trusted attributes
    sample = {
        "admin_state_up": True,
        "name": "private-port",
        "network_id": network["id"],
        "port_security_enabled": True,
        "allowed_address_pairs": [
            {"ip_address": "12.12.11.12", "mac_address": "fa:14:2a:b3:cb:f0"}
        ],
    }

    response = await post_port(client, **sample)
    (default,) = await listed(client, "security-groups", name="default")

    assert response.status_code == 201, response.text
    port = response.json()["port"]
    assert set(port) == PORT_KEYS
    assert port["fixed_ips"] == [{"subnet_id": subnet["id"], "ip_address": "10.0.0.2"}]
    assert port["allowed_address_pairs"] == sample["allowed_address_pairs"]
    assert port["mac_address"].startswith("fa:16:3e:")
    assert (port["status"], port["device_id"], port["device_owner"]) == ("DOWN", "", "")
    assert port["security_groups"] == [default["id"]]
    assert port["binding:vnic_type"] == "normal"


async def test_addresses_come_in_order_and_macs_differ(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)

    ports = [await create(client, "ports", "port", network_id=network["id"]) for _ in range(3)]

    assert [addresses(p) for p in ports] == [["10.0.0.2"], ["10.0.0.3"], ["10.0.0.4"]]
    assert len({p["mac_address"] for p in ports}) == 3


async def test_a_specific_address_is_given_once(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    wanted = [{"subnet_id": subnet["id"], "ip_address": "10.0.0.50"}]

    first = await post_port(client, network_id=network["id"], fixed_ips=wanted)
    second = await post_port(client, network_id=network["id"], fixed_ips=wanted)
    by_address = await post_port(
        client, network_id=network["id"], fixed_ips=[{"ip_address": "10.0.0.51"}]
    )

    assert addresses(first.json()["port"]) == ["10.0.0.50"]
    assert error(second, 409, "IpAddressAlreadyAllocated") == (
        f"IP address 10.0.0.50 already allocated in subnet {subnet['id']}"
    )
    assert by_address.json()["port"]["fixed_ips"][0]["subnet_id"] == subnet["id"]


@pytest.mark.parametrize(
    ("fixed_ip", "kind", "message"),
    [
        ({"ip_address": "192.168.5.5"}, "InvalidIpForNetwork", "IP address 192.168.5.5 is not "
         "a valid IP for any of the subnets on the specified network."),
        ({"ip_address": "10.0.0.255", "subnet_id": "SUBNET"}, "InvalidIpForSubnet", "IP address "
         "10.0.0.255 is not a valid IP for the specified subnet."),
        ({}, "InvalidInput", "Invalid input for operation: IP allocation requires subnet_id or "
         "ip_address."),
    ],
)  # fmt: skip
async def test_addresses_outside_the_subnets_answer_400(
    client: httpx.AsyncClient, fixed_ip: dict[str, str], kind: str, message: str
) -> None:
    network, subnet = await network_with_subnet(client)
    if fixed_ip.get("subnet_id") == "SUBNET":
        fixed_ip["subnet_id"] = subnet["id"]

    response = await post_port(client, network_id=network["id"], fixed_ips=[fixed_ip])

    assert error(response, 400, kind) == message


async def test_exhausted_subnet_answers_409_then_reuses_a_freed_address(
    client: httpx.AsyncClient,
) -> None:
    network, _ = await network_with_subnet(client, cidr="10.7.0.0/29")  # .2 to .6
    ports = [await create(client, "ports", "port", network_id=network["id"]) for _ in range(5)]

    exhausted = await post_port(client, network_id=network["id"])
    await client.delete(f"{V2}/ports/{ports[1]['id']}")
    again = await post_port(client, network_id=network["id"])

    assert [addresses(p)[0] for p in ports] == [f"10.7.0.{i}" for i in range(2, 7)]
    message = error(exhausted, 409, "IpAddressGenerationFailure")
    assert message == f"No more IP addresses available on network {network['id']}."
    assert addresses(again.json()["port"]) == ["10.7.0.3"]


async def test_port_on_a_network_without_subnets_has_no_address_nor_group(
    client: httpx.AsyncClient,
) -> None:
    network = await create(client, "networks", "network")

    port = await create(client, "ports", "port", network_id=network["id"])

    assert (port["fixed_ips"], port["security_groups"]) == ([], [])


async def test_fixed_ip_on_another_networks_subnet_is_invalid(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    other = await create(client, "networks", "network", name="other")

    response = await post_port(
        client, network_id=other["id"], fixed_ips=[{"subnet_id": subnet["id"]}]
    )

    assert error(response, 400, "InvalidInput") == (
        f"Invalid input for operation: Failed to create port on network {other['id']}, "
        f"because fixed_ips included invalid subnet {subnet['id']}."
    )


async def test_port_is_active_while_a_device_holds_it(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)
    port = await create(client, "ports", "port", network_id=network["id"])
    url = f"{V2}/ports/{port['id']}"
    # port-update-request.json without qos_policy_id, uplink and pvlan attributes
    sample = {
        "admin_state_up": True,
        "device_id": "d90a13da-be41-461f-9f99-1dbcf438fdf2",
        "device_owner": "compute:nova",
        "name": "test-for-port-update",
    }

    bound = await client.put(url, json={"port": sample})
    unbound = await client.put(url, json={"port": {"device_id": "", "device_owner": ""}})

    assert bound.status_code == 200, bound.text
    assert set(bound.json()["port"]) == PORT_KEYS
    assert bound.json()["port"]["status"] == "ACTIVE"
    assert bound.json()["port"]["name"] == "test-for-port-update"
    assert bound.json()["port"]["revision_number"] == 2
    assert unbound.json()["port"]["status"] == "DOWN"


async def test_port_security_rules(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)
    group = await create(client, "security-groups", "security_group", name="web")
    pairs = [{"ip_address": "10.0.0.99"}]

    with_group = await post_port(
        client, network_id=network["id"], port_security_enabled=False, security_groups=[group["id"]]
    )
    with_pairs = await post_port(
        client, network_id=network["id"], port_security_enabled=False, allowed_address_pairs=pairs
    )
    open_port = await create(
        client, "ports", "port", network_id=network["id"], port_security_enabled=False
    )
    guarded = await create(client, "ports", "port", network_id=network["id"])
    url = f"{V2}/ports/{guarded['id']}"
    refused = await client.put(url, json={"port": {"port_security_enabled": False}})
    allowed = await client.put(
        url, json={"port": {"port_security_enabled": False, "security_groups": []}}
    )

    assert error(with_group, 400, "PortSecurityAndIPRequiredForSecurityGroups").startswith(
        "Port security must be enabled"
    )
    assert error(with_pairs, 409, "AddressPairAndPortSecurityRequired").startswith(
        "Port Security must be enabled"
    )
    assert open_port["security_groups"] == []
    assert error(refused, 409, "PortSecurityPortHasSecurityGroup").startswith("Port has")
    assert allowed.json()["port"]["port_security_enabled"] is False
    assert allowed.json()["port"]["security_groups"] == []


async def test_ports_filter_by_fixed_ips_device_and_tags(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    other, other_subnet = await network_with_subnet(client, cidr="10.5.0.0/24")
    first = await create(client, "ports", "port", network_id=network["id"], tags=["warden-1"])
    second = await create(
        client,
        "ports",
        "port",
        network_id=network["id"],
        device_id="vm-1",
        device_owner="compute:nova",
    )
    third = await create(client, "ports", "port", network_id=other["id"])

    def ids(ports: list[dict[str, Any]]) -> set[str]:
        return {p["id"] for p in ports}

    assert ids(await listed(client, "ports", fixed_ips="ip_address=10.0.0.3")) == {second["id"]}
    assert ids(await listed(client, "ports", fixed_ips=f"subnet_id={subnet['id']}")) == {
        first["id"],
        second["id"],
    }
    assert ids(
        await listed(
            client, "ports", fixed_ips=[f"subnet_id={other_subnet['id']}", "ip_address=10.5.0.2"]
        )
    ) == {third["id"]}
    assert ids(await listed(client, "ports", device_id="vm-1")) == {second["id"]}
    assert ids(await listed(client, "ports", device_owner="compute:nova")) == {second["id"]}
    assert ids(await listed(client, "ports", network_id=other["id"])) == {third["id"]}
    assert ids(await listed(client, "ports", tags="warden-1")) == {first["id"]}
    assert ids(await listed(client, "ports", name="", network_id=network["id"])) == {
        first["id"],
        second["id"],
    }
    bad = await client.get(f"{V2}/ports", params={"fixed_ips": "10.0.0.3"})
    assert error(bad, 400, "HTTPBadRequest") == "'10.0.0.3' is not of the form <key>=[value]"


async def test_binding_host_is_the_admins(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)

    response = await post_port(client, network_id=network["id"], **{"binding:host_id": "compute-1"})

    message = error(response, 403, "PolicyNotAuthorized")
    assert message == "(rule:create_port:binding:host_id) is disallowed by policy"


async def test_unknown_security_group_answers_404(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)

    response = await post_port(client, network_id=network["id"], security_groups=[MISSING])

    assert (
        error(response, 404, "SecurityGroupNotFound") == f"Security group {MISSING} does not exist"
    )


async def test_a_mac_address_is_unique_on_its_network(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)
    mac = "fa:16:3e:00:00:01"
    await create(client, "ports", "port", network_id=network["id"], mac_address=mac)

    response = await post_port(client, network_id=network["id"], mac_address=mac)

    assert error(response, 409, "MacAddressInUse") == (
        f"Unable to complete operation for network {network['id']}. The mac address {mac} "
        "is in use."
    )


async def test_updating_fixed_ips_moves_the_address(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)
    port = await create(client, "ports", "port", network_id=network["id"])
    url = f"{V2}/ports/{port['id']}"

    kept = await client.put(url, json={"port": {"fixed_ips": [{"subnet_id": subnet["id"]}]}})
    moved = await client.put(url, json={"port": {"fixed_ips": [{"ip_address": "10.0.0.77"}]}})
    reused = await create(
        client, "ports", "port", network_id=network["id"], fixed_ips=[{"ip_address": "10.0.0.2"}]
    )

    assert addresses(kept.json()["port"]) == ["10.0.0.2"]
    assert addresses(moved.json()["port"]) == ["10.0.0.77"]
    assert addresses(reused) == ["10.0.0.2"]


async def test_router_ports_cannot_be_deleted_directly(client: httpx.AsyncClient) -> None:
    _, subnet = await network_with_subnet(client)
    router = await create(client, "routers", "router", name="r1")
    added = await client.put(
        f"{V2}/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet["id"]}
    )
    port_id = added.json()["port_id"]

    response = await client.delete(f"{V2}/ports/{port_id}")

    assert error(response, 409, "ServicePortInUse") == (
        f"Port {port_id} cannot be deleted directly via the port API: has device owner "
        "network:router_interface."
    )


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_unknown_port_answers_404(client: httpx.AsyncClient, method: str) -> None:
    body = {"port": {"name": "x"}} if method == "PUT" else None

    response = await client.request(method, f"{V2}/ports/{MISSING}", json=body)

    assert error(response, 404, "PortNotFound") == f"Port {MISSING} could not be found."
