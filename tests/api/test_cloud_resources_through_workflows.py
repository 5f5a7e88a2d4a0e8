"""The cloud-backed resource types through the real workflows and simcloud: what each
does on update, lock, check and delete beyond create (Heat's behaviour as the spec)."""

from __future__ import annotations

import base64
from typing import Any

import httpx

from activities.cloud.collections import collection
from tests.api.test_stacks_through_workflows import resource, settled
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

STACKS = "/v1/demo/stacks"


def hot(resources: dict[str, Any], outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"heat_template_version": "2021-04-16", "resources": resources, "outputs": outputs or {}}


async def create(api: httpx.AsyncClient, name: str, template: dict[str, Any]) -> str:
    created = await api.post(STACKS, json={"stack_name": name, "template": template})
    assert created.status_code == 201, created.text
    url = f"{STACKS}/{name}/{created.json()['stack']['id']}"
    stack = await settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    return url


async def update(api: httpx.AsyncClient, url: str, template: dict[str, Any]) -> dict[str, Any]:
    assert (await api.put(url, json={"template": template})).status_code == 202
    return await settled(api, url)


async def test_lock_level_all_protects_a_web_image_and_unlock_gives_it_back(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    image = {
        "type": "OS::Glance::WebImage",
        "properties": {
            "location": "http://images.example/cirros.img",
            "disk_format": "qcow2",
            "container_format": "bare",
        },
    }
    url = await create(api, "images", hot({"img": image}))
    image_id = (await resource(api, url, "img"))["physical_resource_id"]
    assert (await objects.show(collection("image"), image_id))["status"] == "active"

    lock = {"lock": {"level": "all", "reason": "release", "owner": "ops"}}
    assert (await api.post(f"{url}/actions", json=lock)).status_code == 200
    assert (await settled(api, url))["stack_status"] == "LOCK_COMPLETE"
    assert (await objects.show(collection("image"), image_id))["protected"] is True

    assert (await api.post(f"{url}/actions", json={"unlock": None})).status_code == 200
    assert (await settled(api, url))["stack_status"] == "UNLOCK_COMPLETE"
    assert (await objects.show(collection("image"), image_id))["protected"] is False


async def test_groups_rules_volumes_and_keys_update_as_heat_does(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    web_rule = {"protocol": "tcp", "port_range_min": 80, "port_range_max": 80}
    resources: dict[str, Any] = {
        "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"rules": [web_rule]}},
        "vol": {"type": "OS::Cinder::Volume", "properties": {"size": 1, "name": "data"}},
        "key": {
            "type": "OS::Nova::KeyPair",
            "properties": {"name": "deployer", "save_private_key": True},
        },
    }
    outputs = {"private": {"value": {"get_attr": ["key", "private_key"]}}}
    url = await create(api, "pieces", hot(resources, outputs))
    sg_id = (await resource(api, url, "sg"))["physical_resource_id"]
    vol_id = (await resource(api, url, "vol"))["physical_resource_id"]
    group = await objects.show(collection("security_group"), sg_id)
    ports = sorted((r["direction"], r["port_range_min"]) for r in group["security_group_rules"])
    assert ("ingress", 80) in ports and len(ports) == 3  # Neutron's two egress defaults kept
    stack = (await api.get(url)).json()["stack"]
    private = next(o["output_value"] for o in stack["outputs"] if o["output_key"] == "private")
    assert private.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    keypair = await objects.show(collection("keypair"), "deployer")
    assert keypair["public_key"].startswith("ssh-ed25519 ")

    resources["sg"]["properties"]["rules"] = [{"direction": "egress", "protocol": "udp"}]
    resources["vol"]["properties"] |= {"size": 3, "name": "bigger", "volume_type": "__DEFAULT__"}
    updated = await update(api, url, hot(resources, outputs))

    assert updated["stack_status"] == "UPDATE_COMPLETE", updated["stack_status_reason"]
    assert (await resource(api, url, "sg"))["physical_resource_id"] == sg_id  # in place
    group = await objects.show(collection("security_group"), sg_id)
    assert [(r["direction"], r["protocol"]) for r in group["security_group_rules"]] == [
        ("egress", "udp")
    ]
    volume = await objects.show(collection("volume"), vol_id)
    assert (await resource(api, url, "vol"))["physical_resource_id"] == vol_id
    # extended, retyped and renamed in place
    assert (volume["size"], volume["name"], volume["volume_type"]) == (3, "bigger", "__DEFAULT__")
    assert volume["status"] == "available"


async def test_a_check_fails_a_port_deleted_behind_the_stack_and_an_update_heals_it(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    template = hot({"port": {"type": "OS::Neutron::Port", "properties": {"network": "private"}}})
    url = await create(api, "checked", template)
    port_id = (await resource(api, url, "port"))["physical_resource_id"]
    await objects.delete(collection("port"), port_id)

    assert (await api.post(f"{url}/actions", json={"check": None})).status_code == 200
    checked = await settled(api, url)
    assert checked["stack_status"] == "CHECK_FAILED"
    port = await resource(api, url, "port")
    assert port["resource_status"] == "CHECK_FAILED"
    assert "no longer exists" in port["resource_status_reason"]

    healed = await update(api, url, template)
    assert healed["stack_status"] == "UPDATE_COMPLETE", healed["stack_status_reason"]
    new_id = (await resource(api, url, "port"))["physical_resource_id"]
    assert new_id != port_id
    assert (await objects.show(collection("port"), new_id))["status"] == "DOWN"


async def test_a_load_balanced_server_marked_unhealthy_is_replaced_with_its_membership(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    resources: dict[str, Any] = {
        "lb": {"type": "OS::Octavia::LoadBalancer", "properties": {"vip_subnet": "private-subnet"}},
        "listener": {
            "type": "OS::Octavia::Listener",
            "properties": {
                "loadbalancer": {"get_resource": "lb"},
                "protocol": "HTTP",
                "protocol_port": 80,
            },
        },
        "pool": {
            "type": "OS::Octavia::Pool",
            "properties": {
                "listener": {"get_resource": "listener"},
                "protocol": "HTTP",
                "lb_algorithm": "ROUND_ROBIN",
            },
        },
        "monitor": {
            "type": "OS::Octavia::HealthMonitor",
            "properties": {
                "pool": {"get_resource": "pool"},
                "type": "HTTP",
                "delay": 5,
                "timeout": 3,
                "max_retries": 3,
            },
        },
        "web": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}},
        "member": {
            "type": "OS::Octavia::PoolMember",
            "properties": {
                "pool": {"get_resource": "pool"},
                "address": {"get_attr": ["web", "first_address"]},
                "protocol_port": 80,
                "subnet": "private-subnet",
            },
        },
    }
    outputs = {
        "networks": {"value": {"get_attr": ["web", "networks"]}},
        "addresses": {"value": {"get_attr": ["web", "addresses", "private", 0, "addr"]}},
    }
    template = hot(resources, outputs)
    url = await create(api, "balanced", template)
    shown = {
        o["output_key"]: o["output_value"] for o in (await api.get(url)).json()["stack"]["outputs"]
    }
    # The server's attributes are Nova's addresses, not `{}`.
    assert shown["networks"]["private"] == [shown["addresses"]]
    assert shown["addresses"].startswith("10.0.")
    pool_id = (await resource(api, url, "pool"))["physical_resource_id"]
    lb = await objects.show(
        collection("loadbalancer"), (await resource(api, url, "lb"))["physical_resource_id"]
    )
    assert lb["provisioning_status"] == "ACTIVE"
    old_server = (await resource(api, url, "web"))["physical_resource_id"]

    mark = {"mark_unhealthy": True, "resource_status_reason": "wedged"}
    assert (await api.patch(f"{url}/resources/web", json=mark)).status_code == 200
    healed = await update(api, url, template)

    assert healed["stack_status"] == "UPDATE_COMPLETE", healed["stack_status_reason"]
    new_server = (await resource(api, url, "web"))["physical_resource_id"]
    assert new_server != old_server
    address = (await running_warden.cloud.compute.get_server(new_server)).ip_addresses[0]
    members = await objects.list(collection("member"), parent=pool_id)
    assert [m["address"] for m in members] == [address]  # the membership followed

    assert (await api.delete(url)).status_code == 204


async def test_a_group_member_marked_unhealthy_is_replaced_with_its_pool_membership(
    running_warden: InProcessWarden,
) -> None:
    """Heat's mark-unhealthy rule for groups, with the membership a real group's members
    carry: the marked member (a nested server + pool member) is replaced whole."""
    api, objects = running_warden.api, running_warden.cloud.collections
    member_template = {
        "heat_template_version": "2021-04-16",
        "parameters": {"pool": {"type": "string"}},
        "resources": {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {"image": "cirros", "flavor": "m1.tiny"},
            },
            "member": {
                "type": "OS::Octavia::PoolMember",
                "properties": {
                    "pool": {"get_param": "pool"},
                    "address": {"get_attr": ["server", "first_address"]},
                    "protocol_port": 80,
                },
            },
        },
    }
    resources: dict[str, Any] = {
        "lb": {"type": "OS::Octavia::LoadBalancer", "properties": {"vip_subnet": "private-subnet"}},
        "pool": {
            "type": "OS::Octavia::Pool",
            "properties": {
                "loadbalancer": {"get_resource": "lb"},
                "protocol": "HTTP",
                "lb_algorithm": "ROUND_ROBIN",
            },
        },
        "web": {
            "type": "OS::Heat::ResourceGroup",
            "properties": {
                "count": 2,
                "resource_def": {
                    "type": "OS::Heat::Stack",
                    "properties": {
                        "template": member_template,
                        "parameters": {"pool": {"get_resource": "pool"}},
                    },
                },
            },
        },
    }
    template = hot(resources)
    url = await create(api, "pooled", template)
    pool_id = (await resource(api, url, "pool"))["physical_resource_id"]
    assert len(await objects.list(collection("member"), parent=pool_id)) == 2
    listed = (await api.get(STACKS, params={"show_nested": "true"})).json()["stacks"]
    outer_id = url.rsplit("/", 1)[-1]
    (group,) = [s for s in listed if s["parent"] == outer_id]
    group_url = f"{STACKS}/{group['stack_name']}/{group['id']}"
    old_member = (await resource(api, group_url, "0"))["physical_resource_id"]

    mark = {"mark_unhealthy": True, "resource_status_reason": "wedged"}
    assert (await api.patch(f"{group_url}/resources/0", json=mark)).status_code == 200
    healed = await update(api, url, template)

    assert healed["stack_status"] == "UPDATE_COMPLETE", healed["stack_status_reason"]
    assert (await resource(api, group_url, "0"))["physical_resource_id"] != old_member
    servers = {
        s.ip_addresses[0]
        for s in await running_warden.cloud.compute.list_servers()
        if s.metadata.get("warden_resource") == "server"
    }
    members = {m["address"] for m in await objects.list(collection("member"), parent=pool_id)}
    assert members == servers and len(members) == 2  # the new server in, the old one out


def _networked(networks: list[dict[str, Any]]) -> dict[str, Any]:
    """heat-tempest-plugin's server on a network of two subnets, `networks` as given."""

    def subnet(cidr: str) -> dict[str, Any]:
        props = {"network": {"get_resource": "net"}, "cidr": cidr}
        return {"type": "OS::Neutron::Subnet", "properties": props}

    server = {
        "type": "OS::Nova::Server",
        "properties": {"image": "cirros", "flavor": "m1.tiny", "networks": networks},
    }
    return hot(
        {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": "the_net"}},
            "subnet_a": subnet("11.11.11.0/24"),
            "subnet_b": subnet("12.12.12.0/24"),
            "server": server,
        },
        {
            "port": {"value": {"get_attr": ["server", "addresses", "the_net", 0, "port"]}},
            "addr": {"value": {"get_attr": ["server", "addresses", "the_net", 0, "addr"]}},
        },
    )


def _outputs(stack: dict[str, Any]) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in stack["outputs"]}


async def test_server_networks_change_on_the_same_server_as_heats_interface_update(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create(api, "nics", _networked([{"subnet": {"get_resource": "subnet_a"}}]))
    server_id = (await resource(api, url, "server"))["physical_resource_id"]
    first = _outputs((await api.get(url)).json()["stack"])

    # The same interface described another way: nothing to do, the port stays.
    both = {"network": {"get_resource": "net"}, "subnet": {"get_resource": "subnet_a"}}
    same = await update(api, url, _networked([both]))
    assert same["stack_status"] == "UPDATE_COMPLETE", same["stack_status_reason"]
    assert _outputs(same)["port"] == first["port"]

    # Another subnet: the old interface detached, one on the new subnet attached.
    moved = await update(api, url, _networked([{"subnet": {"get_resource": "subnet_b"}}]))
    assert moved["stack_status"] == "UPDATE_COMPLETE", moved["stack_status_reason"]
    assert (await resource(api, url, "server"))["physical_resource_id"] == server_id
    now = _outputs(moved)
    assert now["port"] != first["port"] and now["addr"].startswith("12.12.12.")
    ports = await running_warden.cloud.collections.list(
        collection("port"), {"device_id": server_id}
    )
    assert [p["id"] for p in ports] == [now["port"]]


async def test_a_network_entry_swapped_for_its_own_port_keeps_the_server_and_port(
    running_warden: InProcessWarden,
) -> None:
    """heat-tempest-plugin's swap_network_port: `network: net` becomes `port: <the port
    Nova made on it>`."""
    api = running_warden.api
    url = await create(api, "swap", _networked([{"network": {"get_resource": "net"}}]))
    server_id = (await resource(api, url, "server"))["physical_resource_id"]
    port = _outputs((await api.get(url)).json()["stack"])["port"]

    swapped = await update(api, url, _networked([{"port": port}]))

    assert swapped["stack_status"] == "UPDATE_COMPLETE", swapped["stack_status_reason"]
    assert (await resource(api, url, "server"))["physical_resource_id"] == server_id
    assert _outputs(swapped)["port"] == port
    # Nova made that port, so it goes with the server: as in Heat, a server whose entry
    # names no network waits for every subnet, so it is deleted before them.
    assert (await api.delete(url)).status_code == 204

    async def deleted() -> str | None:
        response = await api.get(url)
        if response.status_code == 404:
            return "gone"
        stack = response.json()["stack"]
        return (
            None if stack["stack_status"].endswith("IN_PROGRESS") else stack["stack_status_reason"]
        )

    assert await eventually(deleted, timeout=30, what="the stack deleted") == "gone"


def _server(**props: Any) -> dict[str, Any]:
    server = {"type": "OS::Nova::Server", "properties": {"image": "cirros", **props}}
    return hot({"server": server})


async def test_a_new_flavor_password_or_tags_change_the_same_server_as_heat_does(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    url = await create(api, "resized", _server(flavor="m1.tiny", tags=["web"]))
    server_id = (await resource(api, url, "server"))["physical_resource_id"]

    changed = _server(flavor="m1.small", admin_pass="s3cret", tags=["web", "blue"])
    resized = await update(api, url, changed)
    assert resized["stack_status"] == "UPDATE_COMPLETE", resized["stack_status_reason"]
    assert (await resource(api, url, "server"))["physical_resource_id"] == server_id
    shown = await objects.show(collection("server"), server_id)
    assert (shown["status"], shown["flavor"]["original_name"]) == ("ACTIVE", "m1.small")
    assert shown["tags"] == ["web", "blue"]

    # `flavor_update_policy: REPLACE` asks for a new server instead, as in Heat.
    replaced = await update(
        api, url, _server(flavor="m1.tiny", flavor_update_policy="REPLACE", tags=["web", "blue"])
    )
    assert replaced["stack_status"] == "UPDATE_COMPLETE", replaced["stack_status_reason"]
    assert (await resource(api, url, "server"))["physical_resource_id"] != server_id


def _trunked(*subs: tuple[str, int]) -> dict[str, Any]:
    """heat-tempest-plugin's trunk: a parent port and sub-ports on two networks."""
    resources: dict[str, Any] = {}
    for name in ("parent", "one", "two"):
        resources[f"{name}_net"] = {"type": "OS::Neutron::Net"}
        resources[f"{name}_subnet"] = {
            "type": "OS::Neutron::Subnet",
            "properties": {
                "network": {"get_resource": f"{name}_net"},
                "cidr": {"parent": "10.0.0.0/16", "one": "10.10.0.0/16", "two": "10.20.0.0/16"}[
                    name
                ],
            },
        }
        resources[f"{name}_port"] = {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": f"{name}_net"}},
        }
    sub_ports = [
        {"port": {"get_resource": f"{p}_port"}, "segmentation_type": "vlan", "segmentation_id": i}
        for p, i in subs
    ]
    resources["trunk"] = {
        "type": "OS::Neutron::Trunk",
        "properties": {"port": {"get_resource": "parent_port"}, "sub_ports": sub_ports},
    }
    return hot(resources, {"parent": {"value": {"get_attr": ["trunk", "port_id"]}}})


async def test_a_trunks_sub_ports_are_added_and_removed_in_place_as_heat_does(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    url = await create(api, "trunked", _trunked(("one", 10)))
    trunk_id = (await resource(api, url, "trunk"))["physical_resource_id"]

    async def sub_ports() -> set[tuple[str, int]]:
        parent = _outputs((await api.get(url)).json()["stack"])["parent"]
        details = (await objects.show(collection("port"), parent))["trunk_details"]
        assert details["trunk_id"] == trunk_id
        return {(s["port_id"], s["segmentation_id"]) for s in details["sub_ports"]}

    ports = {
        n: (await resource(api, url, f"{n}_port"))["physical_resource_id"] for n in ("one", "two")
    }
    assert await sub_ports() == {(ports["one"], 10)}
    both = await update(api, url, _trunked(("one", 10), ("two", 20)))
    assert both["stack_status"] == "UPDATE_COMPLETE", both["stack_status_reason"]
    assert await sub_ports() == {(ports["one"], 10), (ports["two"], 20)}
    moved = await update(api, url, _trunked(("two", 30)))
    assert moved["stack_status"] == "UPDATE_COMPLETE", moved["stack_status_reason"]
    assert await sub_ports() == {(ports["two"], 30)}
    assert (await resource(api, url, "trunk"))["physical_resource_id"] == trunk_id
    assert (await api.delete(url)).status_code == 204


def _routed(*routes: tuple[str, str]) -> dict[str, Any]:
    """heat-tempest-plugin's extra route set on a router with one interface."""
    return hot(
        {
            "net0": {"type": "OS::Neutron::Net"},
            "subnet0": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": "net0"}, "cidr": "10.0.0.0/24"},
            },
            "router0": {"type": "OS::Neutron::Router"},
            "routerinterface0": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {
                    "router": {"get_resource": "router0"},
                    "subnet": {"get_resource": "subnet0"},
                },
            },
            "routes0": {
                "type": "OS::Neutron::ExtraRouteSet",
                "properties": {
                    "router": {"get_resource": "router0"},
                    "routes": [{"destination": d, "nexthop": n} for d, n in routes],
                },
            },
        }
    )


async def test_an_extra_route_set_changes_only_its_own_routes_as_heat_does(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    a, b, c = (
        ("10.0.10.0/24", "10.0.0.10"),
        ("10.0.11.0/24", "10.0.0.11"),
        ("10.0.12.0/24", "10.0.0.12"),
    )
    url = await create(api, "routed", _routed(a, b))
    router_id = (await resource(api, url, "router0"))["physical_resource_id"]
    assert (await resource(api, url, "routes0"))["physical_resource_id"] == router_id

    async def routes() -> set[tuple[str, str]]:
        shown = await objects.show(collection("router"), router_id)
        return {(r["destination"], r["nexthop"]) for r in shown["routes"]}

    assert await routes() == {a, b}
    # A route someone else added stays through the set's update and delete.
    theirs = {"destination": "10.0.99.0/24", "nexthop": "10.0.0.99"}
    await objects.action(
        collection("router"), router_id, "PUT", "/add_extraroutes", {"router": {"routes": [theirs]}}
    )
    changed = await update(api, url, _routed(b, c))
    assert changed["stack_status"] == "UPDATE_COMPLETE", changed["stack_status_reason"]
    assert await routes() == {b, c, ("10.0.99.0/24", "10.0.0.99")}
    taken = await update(api, url, _routed(b, c, ("10.0.99.0/24", "10.0.0.99")))
    assert taken["stack_status"] == "UPDATE_FAILED"
    assert "The physical resource for" in taken["stack_status_reason"]


async def test_new_user_data_rebuilds_the_same_server_under_the_rebuild_policy(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    policy = {"user_data_update_policy": "REBUILD", "flavor": "m1.tiny"}
    url = await create(api, "rebuilt", _server(user_data="#!/bin/sh\necho one\n", **policy))
    server_id = (await resource(api, url, "server"))["physical_resource_id"]

    rebuilt = await update(api, url, _server(user_data="#!/bin/sh\necho two\n", **policy))
    assert rebuilt["stack_status"] == "UPDATE_COMPLETE", rebuilt["stack_status_reason"]
    assert (await resource(api, url, "server"))["physical_resource_id"] == server_id
    shown = await objects.show(collection("server"), server_id)
    sent = base64.b64decode(shown["OS-EXT-SRV-ATTR:user_data"]).decode()
    assert (shown["status"], sent) == ("ACTIVE", "#!/bin/sh\necho two\n")
    # The default policy (REPLACE) makes a new server, as in Heat.
    replaced = await update(
        api, url, _server(user_data="#!/bin/sh\necho three\n", flavor="m1.tiny")
    )
    assert replaced["stack_status"] == "UPDATE_COMPLETE", replaced["stack_status_reason"]
    assert (await resource(api, url, "server"))["physical_resource_id"] != server_id


def _image(**props: Any) -> dict[str, Any]:
    base = {
        "location": "http://images.example/cirros.img",
        "disk_format": "qcow2",
        "container_format": "bare",
    }
    return hot({"img": {"type": "OS::Glance::WebImage", "properties": base | props}})


async def test_an_images_members_and_active_flag_change_in_place_as_heat_does(
    running_warden: InProcessWarden,
) -> None:
    api, objects = running_warden.api, running_warden.cloud.collections
    url = await create(
        api, "shared", _image(visibility="shared", members=["project-a"], active=False)
    )
    image_id = (await resource(api, url, "img"))["physical_resource_id"]

    async def members() -> list[str]:
        listed = await objects.action(collection("image"), image_id, "GET", "/members", None)
        assert listed is not None
        return sorted(m["member_id"] for m in listed["members"])

    assert (await objects.show(collection("image"), image_id))["status"] == "deactivated"
    assert await members() == ["project-a"]

    changed = await update(api, url, _image(visibility="shared", members=["project-b"]))
    assert changed["stack_status"] == "UPDATE_COMPLETE", changed["stack_status_reason"]
    assert (await resource(api, url, "img"))["physical_resource_id"] == image_id
    assert (await objects.show(collection("image"), image_id))["status"] == "active"
    assert await members() == ["project-b"]

    refused = await api.post(
        STACKS, json={"stack_name": "unshared", "template": _image(members=["project-a"])}
    )
    assert refused.status_code == 400
    assert "members property should only be specified for visibility" in refused.text


def _grouped(policy: str, servers: int) -> dict[str, Any]:
    hints = {"group": {"get_resource": "group"}}
    resources: dict[str, Any] = {
        "group": {"type": "OS::Nova::ServerGroup", "properties": {"policies": [policy]}}
    }
    for i in range(servers):
        props = {"image": "cirros", "flavor": "m1.tiny", "scheduler_hints": hints}
        resources[f"vm{i}"] = {"type": "OS::Nova::Server", "properties": props}
    return hot(resources, {"group": {"value": {"get_attr": ["group", "show"]}}})


async def test_a_server_group_places_its_servers_by_its_policy_as_nova_does(
    running_warden: InProcessWarden,
) -> None:
    """simcloud here has two compute hosts: two anti-affine servers fit, a third does
    not and fails the create with Nova's words; an update of the policy replaces the
    group (Heat: no property updates in place)."""
    api, objects = running_warden.api, running_warden.cloud.collections
    url = await create(api, "spread", _grouped("anti-affinity", 2))
    group_id = (await resource(api, url, "group"))["physical_resource_id"]
    shown = await objects.show(collection("server_group"), group_id)
    vms = [(await resource(api, url, f"vm{i}"))["physical_resource_id"] for i in range(2)]
    assert (shown["policy"], sorted(shown["members"])) == ("anti-affinity", sorted(vms))
    hosts = {(await objects.show(collection("server"), vm))["hostId"] for vm in vms}
    assert len(hosts) == 2

    crowded = await api.post(
        STACKS, json={"stack_name": "crowded", "template": _grouped("anti-affinity", 3)}
    )
    assert crowded.status_code == 201, crowded.text
    stack = await settled(api, f"{STACKS}/crowded/{crowded.json()['stack']['id']}")
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "No valid host was found" in stack["stack_status_reason"]

    together = await update(api, url, _grouped("affinity", 2))
    assert together["stack_status"] == "UPDATE_COMPLETE", together["stack_status_reason"]
    assert (await resource(api, url, "group"))["physical_resource_id"] != group_id
    new_group = (await resource(api, url, "group"))["physical_resource_id"]
    assert (await api.delete(url)).status_code == 204

    async def gone() -> bool:
        return (await api.get(url)).status_code == 404

    await eventually(gone, timeout=30, what="the stack deleted")
    left = {g["id"] for g in await objects.list(collection("server_group"), {})}
    assert group_id not in left and new_group not in left


def _read_only_volume(flag: bool) -> dict[str, Any]:
    vol = {"type": "OS::Cinder::Volume", "properties": {"size": 1, "read_only": flag}}
    server = {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}}
    attach = {
        "type": "OS::Cinder::VolumeAttachment",
        "properties": {
            "instance_uuid": {"get_resource": "vm"},
            "volume_id": {"get_resource": "vol"},
            "mountpoint": "/dev/vdb",
        },
    }
    return hot({"vol": vol, "vm": server, "attach": attach})


async def test_a_volume_s_read_only_flag_is_set_at_create_and_changed_in_place(
    running_warden: InProcessWarden,
) -> None:
    """Heat sets the flag once the volume is available, and changes it by detaching the
    volume, setting it, attaching it again; the volume and its attachment stay."""
    api, objects = running_warden.api, running_warden.cloud.collections
    url = await create(api, "ro", _read_only_volume(True))
    volume_id = (await resource(api, url, "vol"))["physical_resource_id"]
    shown = await objects.show(collection("volume"), volume_id)
    assert (shown["metadata"]["readonly"], shown["status"]) == ("True", "in-use")

    changed = await update(api, url, _read_only_volume(False))
    assert changed["stack_status"] == "UPDATE_COMPLETE", changed["stack_status_reason"]
    assert (await resource(api, url, "vol"))["physical_resource_id"] == volume_id
    shown = await objects.show(collection("volume"), volume_id)
    assert (shown["metadata"]["readonly"], shown["status"]) == ("False", "in-use")
    assert [a["device"] for a in shown["attachments"]] == ["/dev/vdb"]
