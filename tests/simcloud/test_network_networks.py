"""simcloud's Neutron: discovery, networks, request validation, filters and pages."""

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
    public_network,
)

#: network-create-request.json without dns_domain, qos_policy_id, pvlan (extensions
#: simcloud lacks).
NETWORK_SAMPLE = {"name": "sample_network", "admin_state_up": True, "mtu": 1400}
#: Keys of network-create-response.json that simcloud shows (it leaves out dns_domain,
#: qos_policy_id, pvlan, vlan_transparent, qinq, is_default and the address scopes).
NETWORK_KEYS = {
    "admin_state_up", "availability_zone_hints", "availability_zones", "created_at",
    "description", "id", "l2_adjacency", "mtu", "name", "port_security_enabled",
    "project_id", "revision_number", "router:external", "shared", "status", "subnets",
    "tags", "tenant_id", "updated_at",
}  # fmt: skip


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


async def test_version_discovery_lists_v2_without_a_token(client: httpx.AsyncClient) -> None:
    client.headers.pop("X-Auth-Token")

    response = await client.get("/networking/")

    assert response.status_code == 200
    (version,) = response.json()["versions"]
    assert version["id"] == "v2.0"
    assert version["status"] == "CURRENT"
    assert version["links"] == [{"href": "http://simcloud/networking/v2.0/", "rel": "self"}]


async def test_v2_document_lists_the_core_resources(client: httpx.AsyncClient) -> None:
    response = await client.get(V2)

    assert response.status_code == 200
    resources = {r["collection"]: r for r in response.json()["resources"]}
    assert set(resources) == {"networks", "subnets", "ports"}
    assert resources["ports"]["name"] == "port"
    assert resources["ports"]["links"][0]["href"] == f"http://simcloud{V2}/ports"


async def test_calls_without_a_token_answer_401_in_neutron_shape(
    client: httpx.AsyncClient,
) -> None:
    client.headers.pop("X-Auth-Token")

    response = await client.get(f"{V2}/networks")

    assert error(response, 401, "NotAuthorized").startswith("The request you have made")


async def test_public_external_network_exists_from_the_start(client: httpx.AsyncClient) -> None:
    public = await public_network(client)
    (subnet,) = await listed(client, "subnets", network_id=public["id"])
    own = await create(client, "networks", "network", name="mine")

    assert public["router:external"] is True
    assert public["status"] == "ACTIVE"
    assert set(public) == set(own) == NETWORK_KEYS
    assert public["project_id"] != own["project_id"]
    assert public["subnets"] == [subnet["id"]]
    assert subnet["cidr"] == "172.24.4.0/24"
    assert subnet["gateway_ip"] == "172.24.4.1"
    assert subnet["allocation_pools"] == [{"start": "172.24.4.2", "end": "172.24.4.254"}]


async def test_create_network_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    response = await client.post(f"{V2}/networks", json={"network": NETWORK_SAMPLE})

    assert response.status_code == 201, response.text
    network = response.json()["network"]
    assert set(network) == NETWORK_KEYS
    assert (network["name"], network["mtu"], network["status"]) == (
        "sample_network",
        1400,
        "ACTIVE",
    )
    assert network["project_id"] == network["tenant_id"]
    assert (network["subnets"], network["tags"], network["revision_number"]) == ([], [], 1)
    assert (network["shared"], network["router:external"]) == (False, False)
    assert network["port_security_enabled"] is True
    assert network["created_at"].endswith("Z")


async def test_network_defaults_to_the_vxlan_mtu(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network")

    assert network["mtu"] == 1450
    assert network["name"] == ""


async def test_show_update_and_delete_a_network(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network", name="before")
    url = f"{V2}/networks/{network['id']}"
    # network-update-request.json without dns_domain, qos_policy_id and pvlan
    update = {"name": "sample_network_5_updated", "mtu": 1300}

    updated = await client.put(url, json={"network": update})
    shown = await client.get(url)
    deleted = await client.delete(url)
    gone = await client.get(url)

    assert updated.status_code == 200, updated.text
    assert updated.json()["network"]["revision_number"] == 2
    assert shown.json()["network"]["name"] == "sample_network_5_updated"
    assert shown.json()["network"]["mtu"] == 1300
    assert deleted.status_code == 204
    assert error(gone, 404, "NetworkNotFound") == f"Network {network['id']} could not be found."


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"network": {"name": "x", "foo": 1}}, "Unrecognized attribute(s) 'foo'"),
        ({"network": {"name": 5}}, "Invalid input for name. Reason: '5' is not a valid string."),
        (
            {"network": {"admin_state_up": "maybe"}},
            "Invalid input for admin_state_up. Reason: 'maybe' cannot be converted to boolean.",
        ),
        ({"network": {"status": "DOWN"}}, "Attribute 'status' not allowed in POST"),
        (
            {"network": {"name": "x" * 256}},
            f"Invalid input for name. Reason: '{'x' * 256}' exceeds maximum length of 255.",
        ),
        ({}, "Resource body required"),
        ({"net": {}}, "Unable to find 'network' in request body"),
        ({"network": []}, "Object 'network' contains invalid data"),
        (
            {"network": {"project_id": "someone-else"}},
            "Specifying 'project_id' other than the authenticated project in request is not "
            "allowed for the current user.",
        ),
        (
            {"network": {"mtu": 10}},
            "Invalid input for mtu. Reason: '10' is too small - must be at least '68'.",
        ),
    ],
)
async def test_bad_network_bodies_answer_400_in_neutron_words(
    client: httpx.AsyncClient, body: Any, message: str
) -> None:
    response = await client.post(f"{V2}/networks", json=body)

    assert error(response, 400, "HTTPBadRequest") == message


async def test_malformed_json_answers_400(client: httpx.AsyncClient) -> None:
    response = await client.post(f"{V2}/networks", content=b"{nope")

    assert error(response, 400, "HTTPBadRequest") == "Body contains invalid data"


async def test_too_big_an_mtu_is_invalid_input(client: httpx.AsyncClient) -> None:
    response = await client.post(f"{V2}/networks", json={"network": {"mtu": 9000}})

    message = error(response, 400, "InvalidInput")
    assert message == "Invalid input for operation: Requested MTU is too big, maximum is 1450."


async def test_updating_a_read_only_attribute_answers_400(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network")

    response = await client.put(f"{V2}/networks/{network['id']}", json={"network": {"subnets": []}})

    assert error(response, 400, "HTTPBadRequest") == "Cannot update read-only attribute subnets"


@pytest.mark.parametrize("attribute", ["shared", "router:external"])
async def test_shared_and_external_networks_are_the_admins(
    client: httpx.AsyncClient, attribute: str
) -> None:
    response = await client.post(f"{V2}/networks", json={"network": {attribute: True}})

    message = error(response, 403, "PolicyNotAuthorized")
    assert message == f"(rule:create_network:{attribute}) is disallowed by policy"


async def test_members_may_not_change_the_public_network(client: httpx.AsyncClient) -> None:
    public = await public_network(client)
    url = f"{V2}/networks/{public['id']}"

    updated = await client.put(url, json={"network": {"name": "mine"}})
    deleted = await client.delete(url)

    assert "update_network" in error(updated, 403, "PolicyNotAuthorized")
    assert "delete_network" in error(deleted, 403, "PolicyNotAuthorized")
    assert (await public_network(client))["name"] == "public"


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_unknown_network_answers_404(client: httpx.AsyncClient, method: str) -> None:
    missing = "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"
    body = {"network": {"name": "x"}} if method == "PUT" else None

    response = await client.request(method, f"{V2}/networks/{missing}", json=body)

    assert error(response, 404, "NetworkNotFound") == f"Network {missing} could not be found."


async def test_network_with_a_port_cannot_be_deleted(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client)
    port = await create(client, "ports", "port", network_id=network["id"])

    response = await client.delete(f"{V2}/networks/{network['id']}")

    message = error(response, 409, "NetworkInUse")
    assert message == (
        f"Unable to complete operation on network {network['id']}. There are one or more "
        f"ports still in use on the network, id for these ports is: {port['id']}."
    )
    assert (await client.get(f"{V2}/networks/{network['id']}")).status_code == 200


async def test_deleting_a_network_deletes_its_subnets(client: httpx.AsyncClient) -> None:
    network, subnet = await network_with_subnet(client)

    response = await client.delete(f"{V2}/networks/{network['id']}")

    assert response.status_code == 204
    error(await client.get(f"{V2}/subnets/{subnet['id']}"), 404, "SubnetNotFound")


async def test_networks_filter_by_attributes_and_tags(client: httpx.AsyncClient) -> None:
    red = await create(client, "networks", "network", name="red")
    blue = await create(client, "networks", "network", name="blue")
    for record, tags in ((red, ["warden", "red"]), (blue, ["warden", "blue"])):
        await client.put(f"{V2}/networks/{record['id']}/tags", json={"tags": tags})
    await create(client, "networks", "network", name="plain")

    def names(records: list[dict[str, Any]]) -> set[str]:
        return {r["name"] for r in records}

    assert names(await listed(client, "networks", name="red")) == {"red"}
    assert names(await listed(client, "networks", id=[red["id"], blue["id"]])) == {"red", "blue"}
    assert names(await listed(client, "networks", tags="warden,red")) == {"red"}
    assert names(await listed(client, "networks", tags="warden")) == {"red", "blue"}
    assert names(await listed(client, "networks", **{"tags-any": "red,blue"})) == {"red", "blue"}
    assert "red" not in names(await listed(client, "networks", **{"not-tags": "red"}))
    assert names(await listed(client, "networks", **{"router:external": "True"})) == {"public"}
    assert await listed(client, "networks", name="nothing") == []


async def test_unknown_filters_answer_400(client: httpx.AsyncClient) -> None:
    response = await client.get(f"{V2}/networks", params={"colour": "red"})

    assert error(response, 400, "HTTPBadRequest") == "['colour'] is invalid attribute for filtering"


async def test_lists_page_with_limit_and_marker(client: httpx.AsyncClient) -> None:
    for name in ("a", "b"):
        await create(client, "networks", "network", name=name)

    first = (await client.get(f"{V2}/networks", params={"limit": 2})).json()
    href = first["networks_links"][0]["href"]
    second = (await client.get(href.removeprefix("http://simcloud"))).json()

    assert [n["name"] for n in first["networks"]] == ["public", "a"]
    assert first["networks_links"][0]["rel"] == "next"
    assert [n["name"] for n in second["networks"]] == ["b"]
    assert "networks_links" not in second


async def test_unknown_paths_and_methods_answer_in_neutron_shape(
    client: httpx.AsyncClient,
) -> None:
    missing = await client.get(f"{V2}/widgets")
    wrong_method = await client.delete(f"{V2}/networks")

    assert error(missing, 404, "HTTPNotFound") == "The resource could not be found."
    assert error(wrong_method, 405, "HTTPMethodNotAllowed").startswith("The method DELETE")


@pytest.mark.parametrize(
    "collection", ["networks", "subnets", "ports", "routers", "floatingips", "security-groups"]
)
@pytest.mark.parametrize(
    "body",
    [None, [], "x", 7, {"x": 1}, {"network": None}, {"a": {"b": {"c": []}}}, [{"port": {}}]],
)
async def test_odd_bodies_never_answer_500(
    client: httpx.AsyncClient, collection: str, body: Any
) -> None:
    created = await client.post(f"{V2}/{collection}", json=body)
    updated = await client.put(f"{V2}/{collection}/0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11", json=body)

    assert created.status_code == 400, created.text
    assert 400 <= updated.status_code < 500, updated.text
    assert "NeutronError" in created.json()
