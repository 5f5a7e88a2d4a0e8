"""simcloud's Neutron: extensions, tags (a port's at create, any as a sub-resource), quotas."""

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

MISSING = "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"
NEEDED_ALIASES = {
    "router", "external-net", "security-group", "port-security", "allowed-address-pairs",
    "binding", "standard-attr-tag", "standard-attr-description", "quotas", "tag-creation",
    "ext-gw-mode", "fip-port-details", "net-mtu",
}  # fmt: skip


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


async def test_extensions_list_what_simcloud_implements(client: httpx.AsyncClient) -> None:
    listed_ = (await client.get(f"{V2}/extensions")).json()["extensions"]
    shown = await client.get(f"{V2}/extensions/router")
    unknown = await client.get(f"{V2}/extensions/qos")

    aliases = {e["alias"] for e in listed_}
    assert aliases >= NEEDED_ALIASES
    assert "extra_dhcp_opt" not in aliases
    assert "qos" not in aliases
    assert all(set(e) == {"updated", "name", "links", "alias", "description"} for e in listed_)
    assert shown.json()["extension"]["name"] == "Neutron L3 Router"
    assert error(unknown, 404, "HTTPNotFound") == "Extension with alias qos does not exist"


async def test_tag_sub_resource_routes(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network", name="tagged")
    tags = f"{V2}/networks/{network['id']}/tags"

    added = await client.put(f"{tags}/red")
    again = await client.put(f"{tags}/red")
    obtained = await client.get(tags)
    confirmed = await client.get(f"{tags}/red")
    unconfirmed = await client.get(f"{tags}/green")
    replaced = await client.put(tags, json={"tags": ["red", "blue"]})  # tag-update-request.json
    created = await client.post(tags, json={"tags": ["blue", "green"]})
    removed = await client.delete(f"{tags}/red")
    not_there = await client.delete(f"{tags}/red")
    after_removal = (await client.get(tags)).json()
    cleared = await client.delete(tags)
    shown = (await client.get(f"{V2}/networks/{network['id']}")).json()["network"]

    assert (added.status_code, added.content, again.status_code) == (201, b"", 201)
    assert obtained.json() == {"tags": ["red"]}
    assert confirmed.status_code == 204
    assert error(unconfirmed, 404, "TagNotFound") == "Tag green could not be found."
    assert replaced.json() == {"tags": ["red", "blue"]}
    assert (created.status_code, created.json()) == (201, {"tags": ["blue", "green"]})
    assert removed.status_code == 204
    error(not_there, 404, "TagNotFound")
    assert after_removal == {"tags": ["blue", "green"]}
    assert cleared.status_code == 204
    assert shown["tags"] == []
    assert shown["revision_number"] == 6


async def test_tag_routes_check_the_resource(client: httpx.AsyncClient) -> None:
    public = await public_network(client)

    missing = await client.put(f"{V2}/networks/{MISSING}/tags/red")
    strange = await client.get(f"{V2}/widgets/{MISSING}/tags")
    foreign = await client.put(f"{V2}/networks/{public['id']}/tags/red")
    bad_body = await client.put(f"{V2}/networks/{public['id']}/tags", json={"tag": "x"})

    message = error(missing, 404, "TagResourceNotFound")
    assert message == f"Resource networks {MISSING} could not be found."
    error(strange, 404, "HTTPNotFound")
    error(foreign, 403, "PolicyNotAuthorized")
    error(bad_body, 403, "PolicyNotAuthorized")


async def test_invalid_tags_body_answers_400(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network")

    response = await client.put(f"{V2}/networks/{network['id']}/tags", json={"tag": "x"})

    assert error(response, 400, "InvalidInput") == "Invalid input for operation: Invalid tags body."


async def test_only_a_port_takes_tags_at_create_the_rest_are_tagged_after(
    client: httpx.AsyncClient,
) -> None:
    network, subnet = await network_with_subnet(client)
    public = await public_network(client)
    group = await create(client, "security-groups", "security_group", name="g")
    made: dict[str, dict[str, Any]] = {
        "networks": network,
        "subnets": subnet,
        "security-groups": group,
        "routers": await create(client, "routers", "router"),
        "floatingips": await create(
            client, "floatingips", "floatingip", floating_network_id=public["id"]
        ),
        "security-group-rules": await create(
            client,
            "security-group-rules",
            "security_group_rule",
            security_group_id=group["id"],
            direction="ingress",
        ),
    }
    refused = {
        collection: await client.post(
            f"{V2}/{collection}", json={collection_member(collection): {"tags": ["idem-1"]}}
        )
        for collection in made
    }
    port = await create(client, "ports", "port", network_id=network["id"], tags=["idem-1"])

    for collection, response in refused.items():
        message = error(response, 400, "HTTPBadRequest")
        assert message == "Attribute 'tags' not allowed in POST", collection
    for collection, record in made.items():
        tagged = await client.put(
            f"{V2}/{collection}/{record['id']}/tags", json={"tags": ["idem-1"]}
        )
        assert tagged.status_code == 200, collection
    made["ports"] = port
    for collection, record in made.items():
        found = await listed(client, collection, tags="idem-1")
        assert [r["id"] for r in found] == [record["id"]], collection
        tag_url = f"{V2}/{collection}/{record['id']}/tags/idem-1"
        assert (await client.get(tag_url)).status_code == 204, collection
    assert port["tags"] == ["idem-1"]


def collection_member(collection: str) -> str:
    """A collection's member key: `security-groups` → `security_group`."""
    return {"floatingips": "floatingip"}.get(collection, collection.rstrip("s").replace("-", "_"))


async def test_bad_tags_at_create_answer_400(client: httpx.AsyncClient) -> None:
    network = await create(client, "networks", "network")
    body = {"port": {"network_id": network["id"], "tags": ["a", "a"]}}

    response = await client.post(f"{V2}/ports", json=body)

    message = error(response, 400, "HTTPBadRequest")
    assert message == "Invalid input for tags. Reason: Duplicate items in the list: 'a'."


async def test_quota_shows_neutrons_defaults(client: httpx.AsyncClient) -> None:
    project_id = (await create(client, "networks", "network"))["project_id"]

    own = await client.get(f"{V2}/quotas/{project_id}")
    other = await client.get(f"{V2}/quotas/someone-else")
    changed = await client.put(f"{V2}/quotas/{project_id}", json={"quota": {"port": 1}})

    assert own.json()["quota"] == {
        "floatingip": 50,
        "network": 100,
        "port": 500,
        "rbac_policy": 10,
        "router": 10,
        "security_group": 10,
        "security_group_rule": 100,
        "subnet": 100,
        "subnetpool": -1,
    }
    assert error(other, 403, "PolicyNotAuthorized") == "(rule:get_quota) is disallowed by policy"
    error(changed, 403, "PolicyNotAuthorized")


async def test_exceeding_the_router_quota_answers_409(client: httpx.AsyncClient) -> None:
    routers = [await create(client, "routers", "router", name=f"r{i}") for i in range(10)]

    refused = await client.post(f"{V2}/routers", json={"router": {"name": "r10"}})
    await client.delete(f"{V2}/routers/{routers[0]['id']}")
    accepted = await client.post(f"{V2}/routers", json={"router": {"name": "r10"}})

    assert error(refused, 409, "OverQuota") == "Quota exceeded for resources: ['router']."
    assert accepted.status_code == 201


async def test_exceeding_the_port_quota_answers_409(client: httpx.AsyncClient) -> None:
    network, _ = await network_with_subnet(client, cidr="10.0.0.0/22")
    for _ in range(500):
        response = await client.post(f"{V2}/ports", json={"port": {"network_id": network["id"]}})
        assert response.status_code == 201, response.text

    refused = await client.post(f"{V2}/ports", json={"port": {"network_id": network["id"]}})
    details = (await client.get(f"{V2}/quotas/{network['project_id']}/details")).json()["quota"]

    assert error(refused, 409, "OverQuota") == "Quota exceeded for resources: ['port']."
    assert details["port"] == {"limit": 500, "used": 500, "reserved": 0}
    assert details["network"]["used"] == 1
    assert details["security_group_rule"]["used"] == 4  # the default group's


async def test_the_default_group_counts_against_the_group_quota(client: httpx.AsyncClient) -> None:
    for i in range(9):
        await create(client, "security-groups", "security_group", name=f"g{i}")

    refused = await client.post(f"{V2}/security-groups", json={"security_group": {"name": "g9"}})

    assert error(refused, 409, "OverQuota") == "Quota exceeded for resources: ['security_group']."
