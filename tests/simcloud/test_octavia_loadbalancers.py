"""simcloud's Octavia: version discovery, load balancers, their VIP ports and status tree."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.simcloud.test_octavia_helpers import (
    LBAAS,
    NEUTRON,
    create,
    fault,
    listed,
    listener,
    load_balancer,
    octavia,
    pool,
    private_subnet,
    server,
    show,
)

#: loadbalancer-create-request.json without `vip_qos_policy_id` and
#: `availability_zone` (simcloud has no QoS and no Octavia availability zones) and with
#: the caller's `project_id`; the subnet ids are replaced by subnets made in the test.
LB_SAMPLE = {
    "description": "My favorite load balancer",
    "admin_state_up": True,
    "vip_address": "203.0.113.50",
    "provider": "octavia",
    "name": "best_load_balancer",
    "tags": ["test_tag"],
}
#: The keys of loadbalancer-create-response.json (simcloud shows Octavia's
#: `listeners`, `pools` and `vip_sg_ids` too).
LB_KEYS = {
    "description", "admin_state_up", "project_id", "provisioning_status", "flavor_id",
    "vip_subnet_id", "vip_address", "vip_network_id", "vip_port_id", "additional_vips",
    "provider", "created_at", "updated_at", "id", "operating_status", "name",
    "vip_qos_policy_id", "availability_zone", "tags", "vip_vnic_type",
}  # fmt: skip
#: loadbalancer-update-request.json without `vip_qos_policy_id`.
LB_UPDATE_SAMPLE = {
    "description": "Temporarily disabled load balancer",
    "admin_state_up": False,
    "name": "disabled_load_balancer",
    "tags": ["updated_tag"],
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with octavia() as (client, _):
        yield client


async def _subnet(client: httpx.AsyncClient, network_id: str, cidr: str) -> dict[str, Any]:
    version = 6 if ":" in cidr else 4
    body = {"subnet": {"network_id": network_id, "cidr": cidr, "ip_version": version}}
    response = await client.post(f"{NEUTRON}/subnets", json=body)
    assert response.status_code == 201, response.text
    subnet: dict[str, Any] = response.json()["subnet"]
    return subnet


async def _network(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.post(f"{NEUTRON}/networks", json={"network": {"name": "vips"}})
    assert response.status_code == 201, response.text
    network: dict[str, Any] = response.json()["network"]
    return network


async def _port(client: httpx.AsyncClient, port_id: str) -> httpx.Response:
    return await client.get(f"{NEUTRON}/ports/{port_id}")


async def test_version_discovery_needs_no_token(client: httpx.AsyncClient) -> None:
    client.headers.pop("X-Auth-Token")

    root = await client.get("/load-balancer/")
    v2 = await client.get("/load-balancer/v2")

    versions = root.json()["versions"]
    assert root.status_code == 200
    assert [v["id"] for v in versions[:3]] == ["v2.0", "v2.1", "v2.2"]
    assert [v["status"] for v in versions].count("CURRENT") == 1
    assert versions[-1] | {"updated": None} == {
        "id": "v2.30",
        "status": "CURRENT",
        "updated": None,
        "links": [{"href": "http://simcloud/load-balancer/v2", "rel": "self"}],
    }
    assert (v2.status_code, v2.json()) == (200, "v2")


async def test_create_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    network = await _network(client)
    vip_subnet = await _subnet(client, network["id"], "203.0.113.0/24")
    v6 = await _subnet(client, network["id"], "2001:db8::/64")
    v4 = await _subnet(client, network["id"], "198.51.100.0/24")
    additional = [
        {"subnet_id": v6["id"], "ip_address": "2001:db8::b33f"},
        {"subnet_id": v4["id"]},
    ]
    body = LB_SAMPLE | {"vip_subnet_id": vip_subnet["id"], "additional_vips": additional}

    created = await create(client, "loadbalancers", **body)
    shown = await show(client, "loadbalancers", created["id"])

    assert set(created) >= LB_KEYS
    assert {k: created[k] for k in LB_SAMPLE} == LB_SAMPLE
    assert created["project_id"] == network["project_id"]
    assert (created["provisioning_status"], created["operating_status"]) == (
        "PENDING_CREATE",
        "OFFLINE",
    )
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "ONLINE")
    assert created["vip_network_id"] == network["id"]
    assert created["updated_at"] is None
    assert created["additional_vips"][0] == additional[0]
    assert created["additional_vips"][1]["ip_address"].startswith("198.51.100.")
    assert (created["listeners"], created["pools"]) == ([], [])


async def test_vip_port_is_made_in_neutron_and_goes_with_the_load_balancer(
    client: httpx.AsyncClient,
) -> None:
    lb = await load_balancer(client, name="web")

    port = (await _port(client, lb["vip_port_id"])).json()["port"]
    deleted = await client.delete(f"{LBAAS}/loadbalancers/{lb['id']}")
    gone = await client.get(f"{LBAAS}/loadbalancers/{lb['id']}")
    port_after = await _port(client, lb["vip_port_id"])

    assert port["device_owner"] == "Octavia"
    assert port["device_id"] == f"lb-{lb['id']}"
    assert port["name"] == f"octavia-lb-{lb['id']}"
    assert port["admin_state_up"] is False
    assert [ip["ip_address"] for ip in port["fixed_ips"]] == [lb["vip_address"]]
    assert deleted.status_code == 204
    assert fault(gone, 404) == f"Load Balancer {lb['id']} not found."
    assert port_after.status_code == 404


async def test_vip_network_picks_its_ipv4_subnet(client: httpx.AsyncClient) -> None:
    network = await _network(client)
    await _subnet(client, network["id"], "2001:db8::/64")
    v4 = await _subnet(client, network["id"], "192.0.2.0/24")

    lb = await create(client, "loadbalancers", vip_network_id=network["id"])

    assert lb["vip_subnet_id"] == v4["id"]
    assert lb["vip_address"].startswith("192.0.2.")


async def test_a_users_vip_port_is_used_and_left_alone(client: httpx.AsyncClient) -> None:
    subnet = await private_subnet(client)
    body = {"port": {"network_id": subnet["network_id"], "name": "mine"}}
    port = (await client.post(f"{NEUTRON}/ports", json=body)).json()["port"]

    lb = await create(client, "loadbalancers", vip_port_id=port["id"])
    await client.delete(f"{LBAAS}/loadbalancers/{lb['id']}")
    kept = await _port(client, port["id"])

    assert lb["vip_port_id"] == port["id"]
    assert lb["vip_address"] == port["fixed_ips"][0]["ip_address"]
    assert lb["vip_subnet_id"] == subnet["id"]
    assert kept.status_code == 200
    assert kept.json()["port"]["device_owner"] == ""


MISSING = "9f1a4b0e-54c4-4bde-b2f1-5a3f77fbd2aa"


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({}, 400, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, "
         "vip_subnet_id."),
        ({"vip_subnet_id": MISSING}, 400, f"Subnet {MISSING} not found."),
        ({"vip_network_id": MISSING}, 400, f"Network {MISSING} not found."),
        ({"vip_port_id": MISSING}, 400, f"Port {MISSING} not found."),
        ({"vip_subnet_id": "{subnet}", "vip_qos_policy_id": MISSING}, 400,
         "Validation failure: VIP QoS policy is not allowed in this deployment."),
        ({"vip_subnet_id": "{subnet}", "flavor_id": MISSING}, 400,
         "Validation failure: Invalid flavor_id."),
        ({"vip_subnet_id": "{subnet}", "availability_zone": "az1"}, 400,
         "Validation failure: Invalid availability zone."),
        ({"vip_subnet_id": "{subnet}", "provider": "f5"}, 400, "Provider 'f5' is not enabled."),
        ({"vip_subnet_id": "{subnet}", "project_id": "someone-else"}, 403,
         "Policy does not allow this request to be performed."),
        ({"vip_subnet_id": "{subnet}", "color": "red", "size": 1}, 400,
         "Unknown attributes for argument loadbalancer: color, size"),
        ({"vip_subnet_id": "{subnet}", "vip_address": "10.0.0.300"}, 400,
         "Invalid input for field/attribute vip_address. Value: '10.0.0.300'. Value should "
         "be IPv4 or IPv6 format"),
        ({"vip_subnet_id": "{subnet}", "name": "x" * 256}, 400,
         "Invalid input for field/attribute name. Value: '" + "x" * 256 + "'. Value should "
         "have a maximum character requirement of 255"),
    ],
)  # fmt: skip
async def test_bad_creates_get_octavias_answer(
    client: httpx.AsyncClient, fields: dict[str, Any], status: int, message: str
) -> None:
    subnet = await private_subnet(client)
    fields = {k: subnet["id"] if v == "{subnet}" else v for k, v in fields.items()}

    response = await client.post(f"{LBAAS}/loadbalancers", json={"loadbalancer": fields})

    assert fault(response, status) == message
    assert await listed(client, "loadbalancers") == []


@pytest.mark.parametrize(
    "document", [[], {"loadbalancer": None}, {"loadbalancer": {}, "extra": 1}, "text"]
)
async def test_bodies_that_are_not_a_wrapped_object_get_400(
    client: httpx.AsyncClient, document: Any
) -> None:
    response = await client.post(f"{LBAAS}/loadbalancers", json=document)

    assert fault(response, 400)


async def test_list_filters_by_name_id_status_and_tags(client: httpx.AsyncClient) -> None:
    web = await load_balancer(client, name="web", tags=["prod", "web"])
    db = await load_balancer(client, name="db", tags=["prod"])

    def names(found: list[dict[str, Any]]) -> list[str]:
        return [lb["name"] for lb in found]

    assert names(await listed(client, "loadbalancers")) == ["web", "db"]
    assert names(await listed(client, "loadbalancers", name="db")) == ["db"]
    assert names(await listed(client, "loadbalancers", id=web["id"])) == ["web"]
    assert names(await listed(client, "loadbalancers", provisioning_status="ACTIVE")) == [
        "web",
        "db",
    ]
    assert names(await listed(client, "loadbalancers", tags="prod,web")) == ["web"]
    assert names(await listed(client, "loadbalancers", **{"tags-any": "web,x"})) == ["web"]
    assert names(await listed(client, "loadbalancers", **{"not-tags": "web"})) == ["db"]
    assert names(await listed(client, "loadbalancers", sort="name:asc")) == ["db", "web"]
    assert await listed(client, "loadbalancers", fields="id") == [
        {"id": web["id"]},
        {"id": db["id"]},
    ]
    bad = await client.get(f"{LBAAS}/loadbalancers", params={"colour": "red"})
    assert fault(bad, 400) == "One or more arguments are either duplicate or invalid"


async def test_list_pages_with_limit_and_marker(client: httpx.AsyncClient) -> None:
    first = await load_balancer(client, name="a")
    await load_balancer(client, name="b")

    page = (await client.get(f"{LBAAS}/loadbalancers", params={"limit": 1})).json()
    rest = await client.get(f"{LBAAS}/loadbalancers", params={"marker": first["id"]})
    bad = await client.get(f"{LBAAS}/loadbalancers", params={"marker": "nope"})

    assert [lb["name"] for lb in page["loadbalancers"]] == ["a"]
    (link,) = page["loadbalancers_links"]
    assert link["rel"] == "next"
    assert link["href"].endswith(
        f"/load-balancer/v2/lbaas/loadbalancers?limit=1&marker={first['id']}"
    )
    assert [lb["name"] for lb in rest.json()["loadbalancers"]] == ["b"]
    assert fault(bad, 400) == "Supplied pagination marker 'nope' is not valid."


async def test_update_from_the_api_ref_sample(client: httpx.AsyncClient) -> None:
    lb = await load_balancer(client, name="web")

    response = await client.put(
        f"{LBAAS}/loadbalancers/{lb['id']}", json={"loadbalancer": LB_UPDATE_SAMPLE}
    )
    shown = await show(client, "loadbalancers", lb["id"])

    updated = response.json()["loadbalancer"]
    assert response.status_code == 200
    assert {k: updated[k] for k in LB_UPDATE_SAMPLE} == LB_UPDATE_SAMPLE
    assert updated["provisioning_status"] == "PENDING_UPDATE"
    assert updated["updated_at"] is not None
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "OFFLINE")


async def test_delete_with_children_needs_cascade(client: httpx.AsyncClient) -> None:
    lb = await load_balancer(client)
    web = await listener(client, lb)
    backend = await pool(client, listener_id=web["id"])
    await create(client, f"pools/{backend['id']}/members", address="10.0.0.7", protocol_port=80)
    path = f"{LBAAS}/loadbalancers/{lb['id']}"

    refused = await client.delete(path)
    cascaded = await client.delete(path, params={"cascade": "true"})
    after = [
        await client.get(path),
        await client.get(f"{LBAAS}/listeners/{web['id']}"),
        await client.get(f"{LBAAS}/pools/{backend['id']}"),
        await client.get(f"{LBAAS}/pools/{backend['id']}/members"),
        await client.get(f"{NEUTRON}/ports/{lb['vip_port_id']}"),
    ]

    assert (
        fault(refused, 400)
        == f"Validation failure: Cannot delete Load Balancer {lb['id']} - it has children"
    )
    assert cascaded.status_code == 204
    assert [r.status_code for r in after] == [404] * 5


async def test_status_tree_rolls_members_up(client: httpx.AsyncClient) -> None:
    lb = await load_balancer(client, name="lb")
    web = await listener(client, lb, name="web")
    backend = await pool(client, listener_id=web["id"], name="backend")
    await pool(client, loadbalancer_id=lb["id"], name="spare")
    monitor = await create(
        client, "healthmonitors", pool_id=backend["id"], type="TCP", delay=5, timeout=5,
        max_retries=3, name="tcp",
    )  # fmt: skip
    up = await server(client, "up")
    members = f"pools/{backend['id']}/members"
    ok = await create(client, members, address=up["address"], protocol_port=80, name="ok")
    down = await create(client, members, address="192.0.2.9", protocol_port=80, name="down")

    response = await client.get(f"{LBAAS}/loadbalancers/{lb['id']}/status")
    alias = await client.get(f"{LBAAS}/loadbalancers/{lb['id']}/statuses")

    def entry(obj: dict[str, Any], status: str) -> dict[str, Any]:
        return {"id": obj["id"], "name": obj["name"], "provisioning_status": "ACTIVE",
                "operating_status": status}  # fmt: skip

    member_keys = {"address": "10.0.0.1", "protocol_port": 80}
    assert response.status_code == 200
    assert response.json() == alias.json()
    tree = response.json()["statuses"]["loadbalancer"]
    (listener_tree,) = tree.pop("listeners")
    (pool_tree,) = listener_tree.pop("pools")
    members_tree = pool_tree.pop("members")
    assert tree == entry(lb, "DEGRADED")
    assert listener_tree == entry(web, "ONLINE")
    assert pool_tree == entry(backend, "DEGRADED") | {
        "health_monitor": entry(monitor, "ONLINE") | {"type": "TCP"}
    }
    assert members_tree == [
        entry(ok, "ONLINE") | member_keys | {"address": up["address"]},
        entry(down, "ERROR") | member_keys | {"address": "192.0.2.9"},
    ]


async def test_stats_are_zero(client: httpx.AsyncClient) -> None:
    lb = await load_balancer(client)

    response = await client.get(f"{LBAAS}/loadbalancers/{lb['id']}/stats")

    assert response.json() == {
        "stats": {
            "bytes_in": 0,
            "bytes_out": 0,
            "active_connections": 0,
            "total_connections": 0,
            "request_errors": 0,
        }
    }


async def test_calls_without_a_token_answer_401_in_octavia_shape(
    client: httpx.AsyncClient,
) -> None:
    client.headers.pop("X-Auth-Token")

    response = await client.get(f"{LBAAS}/loadbalancers")

    assert fault(response, 401)
