"""simcloud's Neutron: security groups, the default group, rules and their checks."""

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

GROUP_KEYS = {
    "description", "id", "name", "security_group_rules", "project_id", "created_at",
    "updated_at", "revision_number", "tags", "tenant_id", "stateful", "shared",
}  # fmt: skip
#: The rule keys of security-group-create-response.json (without remote_address_group_id,
#: of the address-group extension), plus Neutron's `normalized_cidr`.
RULE_KEYS = {
    "direction", "ethertype", "id", "port_range_max", "port_range_min", "protocol",
    "remote_group_id", "remote_ip_prefix", "security_group_id", "project_id",
    "created_at", "updated_at", "revision_number", "tags", "tenant_id", "description",
    "belongs_to_default_sg", "normalized_cidr",
}  # fmt: skip
MISSING = "0d3d3c1c-6f8c-4a5d-9b7e-2b5d0f3f6a11"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with neutron() as (client, _):
        yield client


@pytest.fixture
async def group(client: httpx.AsyncClient) -> dict[str, Any]:
    return await create(client, "security-groups", "security_group", name="web")


async def post_rule(client: httpx.AsyncClient, group_id: str, **fields: Any) -> httpx.Response:
    body = {"security_group_id": group_id, "direction": "ingress"} | fields
    return await client.post(f"{V2}/security-group-rules", json={"security_group_rule": body})


def summary(rules: list[dict[str, Any]]) -> set[tuple[str, str, str | None]]:
    return {(r["direction"], r["ethertype"], r["remote_group_id"]) for r in rules}


async def test_create_group_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    sample = {
        "name": "new-webservers",
        "description": "security group for webservers",
        "stateful": True,
    }

    response = await client.post(f"{V2}/security-groups", json={"security_group": sample})

    assert response.status_code == 201, response.text
    group = response.json()["security_group"]
    assert set(group) == GROUP_KEYS
    assert (group["name"], group["description"]) == (sample["name"], sample["description"])
    assert (group["stateful"], group["shared"]) == (True, False)
    rules = group["security_group_rules"]
    assert summary(rules) == {("egress", "IPv4", None), ("egress", "IPv6", None)}
    assert all(set(r) == RULE_KEYS for r in rules)
    assert all(r["protocol"] is None and r["remote_ip_prefix"] is None for r in rules)
    assert not any(r["belongs_to_default_sg"] for r in rules)


async def test_the_default_group_appears_once_with_its_four_rules(
    client: httpx.AsyncClient,
) -> None:
    first = await listed(client, "security-groups")
    again = await listed(client, "security-groups", name="default")

    (default,) = first
    assert again == first
    assert default["description"] == "Default security group"
    assert summary(default["security_group_rules"]) == {
        ("egress", "IPv4", None),
        ("egress", "IPv6", None),
        ("ingress", "IPv4", default["id"]),
        ("ingress", "IPv6", default["id"]),
    }
    assert all(r["belongs_to_default_sg"] for r in default["security_group_rules"])


async def test_create_rule_from_the_api_ref_sample(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    remote = await create(client, "security-groups", "security_group", name="lb")
    # security-group-rule-create-request.json without remote_address_group_id
    sample = {
        "direction": "ingress",
        "port_range_min": "80",
        "ethertype": "IPv4",
        "port_range_max": "80",
        "protocol": "tcp",
        "remote_group_id": remote["id"],
        "security_group_id": group["id"],
    }

    response = await client.post(f"{V2}/security-group-rules", json={"security_group_rule": sample})
    shown = await client.get(f"{V2}/security-groups/{group['id']}")

    assert response.status_code == 201, response.text
    rule = response.json()["security_group_rule"]
    assert set(rule) == RULE_KEYS
    assert (rule["port_range_min"], rule["port_range_max"], rule["protocol"]) == (80, 80, "tcp")
    assert (rule["remote_group_id"], rule["remote_ip_prefix"]) == (remote["id"], None)
    assert rule["id"] in {r["id"] for r in shown.json()["security_group"]["security_group_rules"]}


async def test_a_duplicate_rule_answers_409_with_the_existing_id(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    first = await post_rule(
        client, group["id"], protocol="tcp", port_range_min=22, port_range_max=22
    )

    by_number = await post_rule(
        client, group["id"], protocol="6", port_range_min=22, port_range_max=22
    )

    rule_id = first.json()["security_group_rule"]["id"]
    message = error(by_number, 409, "SecurityGroupRuleExists")
    assert message == f"Security group rule already exists. Rule id is {rule_id}."


async def test_rule_values_are_normalized(client: httpx.AsyncClient, group: dict[str, Any]) -> None:
    host = await post_rule(client, group["id"], remote_ip_prefix="10.0.0.5")
    full_range = await post_rule(
        client, group["id"], protocol="udp", port_range_min=1, port_range_max=65535
    )
    legacy = await post_rule(client, group["id"], ethertype="ipv6", protocol="icmp")

    assert host.json()["security_group_rule"]["remote_ip_prefix"] == "10.0.0.5/32"
    assert full_range.json()["security_group_rule"]["port_range_min"] is None
    assert legacy.json()["security_group_rule"]["protocol"] == "ipv6-icmp"
    assert legacy.json()["security_group_rule"]["ethertype"] == "IPv6"


@pytest.mark.parametrize(
    ("fields", "kind", "message"),
    [
        ({"protocol": "tcp", "port_range_min": 90, "port_range_max": 80},
         "SecurityGroupInvalidPortRange",
         "For TCP/UDP protocols, port_range_min must be <= port_range_max"),
        ({"port_range_min": 80, "port_range_max": 80}, "SecurityGroupProtocolRequiredWithPorts",
         "Must also specify protocol if port range is given."),
        ({"protocol": "icmp", "port_range_min": 300}, "SecurityGroupInvalidIcmpValue",
         "Invalid value for ICMP type (port_range_min) 300. It must be 0 to 255."),
        ({"protocol": "tcp", "port_range_min": 70000, "port_range_max": 70000},
         "SecurityGroupInvalidPortValue", "Invalid value for port 70000"),
        ({"protocol": "gre", "port_range_min": 1, "port_range_max": 2},
         "SecurityGroupInvalidProtocolForPort", "Ports cannot be specified for protocol 47. "
         "Ports are only supported for DCCP, SCTP, TCP, UDP, UDPLITE."),
        ({"ethertype": "IPv6", "remote_ip_prefix": "10.0.0.0/8"},
         "SecurityGroupRuleParameterConflict",
         "Conflicting value ethertype IPv6 for CIDR 10.0.0.0/8"),
        ({"ethertype": "IPv5"}, "SecurityGroupRuleInvalidEtherType",
         "Security group rule for ethertype 'IPv5' not supported. Allowed values are "
         "['IPv4', 'IPv6']."),
        ({"remote_ip_prefix": "nowhere"}, "InvalidCIDR",
         "Invalid CIDR nowhere given as IP prefix."),
        ({"remote_ip_prefix": "10.0.0.0/8", "remote_group_id": MISSING},
         "SecurityGroupMultipleRemoteEntites", "Only one of remote_ip_prefix or remote_group_id or "
         "remote_address_group_id may be provided."),
        ({"direction": "sideways"}, "HTTPBadRequest", "Invalid input for direction. Reason: "
         "sideways is not in ['ingress', 'egress']."),
    ],
)  # fmt: skip
async def test_bad_rules_answer_400(
    client: httpx.AsyncClient,
    group: dict[str, Any],
    fields: dict[str, Any],
    kind: str,
    message: str,
) -> None:
    response = await post_rule(client, group["id"], **fields)

    assert error(response, 400, kind) == message


async def test_unknown_protocol_is_refused(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    response = await post_rule(client, group["id"], protocol="carrier-pigeon")

    message = error(response, 400, "SecurityGroupRuleInvalidProtocol")
    assert message.startswith("Security group rule protocol carrier-pigeon not supported.")


async def test_rules_of_unknown_groups_answer_404(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    in_missing = await post_rule(client, MISSING)
    from_missing = await post_rule(client, group["id"], remote_group_id=MISSING)
    shown = await client.get(f"{V2}/security-group-rules/{MISSING}")

    assert (
        error(in_missing, 404, "SecurityGroupNotFound")
        == f"Security group {MISSING} does not exist"
    )
    error(from_missing, 404, "SecurityGroupNotFound")
    message = error(shown, 404, "SecurityGroupRuleNotFound")
    assert message == f"Security group rule {MISSING} does not exist"


async def test_group_in_use_by_a_port_cannot_be_deleted(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    network, _ = await network_with_subnet(client)
    port = await create(
        client, "ports", "port", network_id=network["id"], security_groups=[group["id"]]
    )
    url = f"{V2}/security-groups/{group['id']}"

    refused = await client.delete(url)
    await client.delete(f"{V2}/ports/{port['id']}")
    accepted = await client.delete(url)

    assert error(refused, 409, "SecurityGroupInUse") == f"Security Group {group['id']} in use."
    assert accepted.status_code == 204
    assert await listed(client, "security-group-rules", security_group_id=group["id"]) == []


async def test_deleting_a_group_removes_rules_that_name_it(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    other = await create(client, "security-groups", "security_group", name="db")
    rule = await post_rule(client, other["id"], remote_group_id=group["id"])

    await client.delete(f"{V2}/security-groups/{group['id']}")

    gone = await client.get(f"{V2}/security-group-rules/{rule.json()['security_group_rule']['id']}")
    error(gone, 404, "SecurityGroupRuleNotFound")


async def test_the_default_group_keeps_its_name_and_life(client: httpx.AsyncClient) -> None:
    (default,) = await listed(client, "security-groups")
    url = f"{V2}/security-groups/{default['id']}"

    deleted = await client.delete(url)
    renamed = await client.put(url, json={"security_group": {"name": "mine"}})
    described = await client.put(url, json={"security_group": {"description": "ours"}})
    another = await client.post(
        f"{V2}/security-groups", json={"security_group": {"name": "Default"}}
    )

    message = error(deleted, 409, "SecurityGroupCannotRemoveDefault")
    assert message == "Insufficient rights for removing default security group."
    message = error(renamed, 409, "SecurityGroupCannotUpdateDefault")
    assert message == "Updating default security group not allowed."
    assert described.json()["security_group"]["description"] == "ours"
    message = error(another, 409, "SecurityGroupDefaultAlreadyExists")
    assert message == "Default security group already exists."


async def test_update_group_from_the_api_ref_sample(
    client: httpx.AsyncClient, group: dict[str, Any]
) -> None:
    sample = {"name": "mysecgroup", "description": "my security group", "stateful": True}

    response = await client.put(
        f"{V2}/security-groups/{group['id']}", json={"security_group": sample}
    )

    assert response.status_code == 200, response.text
    updated = response.json()["security_group"]
    assert (updated["name"], updated["description"]) == ("mysecgroup", "my security group")
    assert updated["revision_number"] == 2


async def test_unknown_group_answers_404(client: httpx.AsyncClient) -> None:
    response = await client.delete(f"{V2}/security-groups/{MISSING}")

    assert (
        error(response, 404, "SecurityGroupNotFound") == f"Security group {MISSING} does not exist"
    )
