"""The pure side of the cloud-backed types: bodies, lookups, updates, replacement rules."""

from __future__ import annotations

from typing import Any

import pytest

from domain.cloud_objects import Lookup
from domain.errors import InvalidRequest
from domain.servers import NetworkRequest
from domain.stack.resource_types import check_properties, resource_type
from domain.stack.types import server
from domain.stack.types.api_object import physical_name
from domain.stack.types.cinder import volume
from domain.stack.types.heat_schema import heat_schemas
from domain.stack.types.neutron import floating_ip, net, port, router, security_group, subnet

FIELD = "resources.r.properties"


def checked(type_name: str, **props: Any) -> dict[str, Any]:
    return check_properties(resource_type(type_name), props, FIELD)


def test_schemas_are_heat_s_own_dump() -> None:
    dumped = heat_schemas()
    assert dumped["heat_version"]
    server_props = resource_type("OS::Nova::Server").properties
    shown = dumped["types"]["OS::Nova::Server"]["properties"]
    hidden = dumped["types"]["OS::Nova::Server"]["hidden_properties"]
    assert set(server_props) == set(shown) | set(hidden)
    assert resource_type("OS::Nova::Server").hidden >= set(hidden)
    assert server_props["flavor"].required and not server_props["image"].required
    assert server_props["networks"].nested is not None


def test_a_server_request_carries_every_heat_property_nova_takes() -> None:
    props = checked(
        "OS::Nova::Server",
        flavor="m1.tiny",
        image="cirros",
        key_name="k",
        user_data="#!/bin/sh",
        user_data_format="RAW",
        availability_zone="nova",
        security_groups=["web"],
        scheduler_hints={"group": "g"},
        networks=[{"network": "private", "fixed_ip": "10.0.0.9"}, {"port": "p"}],
        metadata={"n": 1, "s": "x"},
        config_drive=True,
        tags=["a"],
    )
    request = server.server_request("st", "sid", "web", props, "rid-1234-5678")
    assert request.networks == (
        NetworkRequest(network="private", fixed_ip="10.0.0.9"),
        NetworkRequest(port="p"),
    )
    assert (request.key_name, request.user_data, request.availability_zone) == (
        "k",
        "#!/bin/sh",
        "nova",
    )
    assert request.security_groups == ("web",)
    assert request.scheduler_hints == {"group": "g"}
    assert request.metadata["n"] == "1" and request.metadata["s"] == "x"
    assert request.config_drive is True and request.tags == ("a",)


def test_allocate_network_alone_is_nova_s_auto_or_none() -> None:
    props = checked("OS::Nova::Server", flavor="f", networks=[{"allocate_network": "none"}])
    assert server.server_request("s", "i", "r", props, "rid").networks == "none"


def test_boot_from_volume_maps_heat_s_block_device_keys() -> None:
    props = checked(
        "OS::Nova::Server",
        flavor="f",
        block_device_mapping_v2=[{"volume_id": "v", "boot_index": 0}, {"swap_size": 1}],
    )
    request = server.server_request("s", "i", "r", props, "rid")
    assert request.image is None
    assert request.block_device_mapping_v2 == (
        {
            "uuid": "v",
            "source_type": "volume",
            "destination_type": "volume",
            "boot_index": 0,
            "delete_on_termination": False,
        },
        {
            "source_type": "blank",
            "guest_format": "swap",
            "destination_type": "local",
            "boot_index": -1,
            "delete_on_termination": True,
            "volume_size": 1,
        },
    )


def test_image_update_policy_replace_makes_a_new_image_a_replacement() -> None:
    servers = resource_type("OS::Nova::Server")
    assert servers.updatable_with("image", {"image_update_policy": "REBUILD"})
    assert not servers.updatable_with("image", {"image_update_policy": "REPLACE"})
    assert not servers.updatable_with("user_data", {"user_data_update_policy": "REPLACE"})
    assert servers.updatable_with("user_data", {"user_data_update_policy": "IGNORE"})
    assert servers.updatable_with("flavor", {"flavor_update_policy": "RESIZE"})
    assert not servers.updatable_with("flavor", {"flavor_update_policy": "REPLACE"})
    rebuild = {"user_data_update_policy": "REBUILD"}
    assert servers.updatable_with("user_data", rebuild, patched=lambda _: True)
    # a history from before the rebuild patch replaced the server: it still does
    assert not servers.updatable_with("user_data", rebuild, patched=lambda _: False)
    ignore = {"user_data_update_policy": "IGNORE"}
    assert servers.updatable_with("user_data", ignore, patched=lambda _: False)


def test_a_port_body_looks_up_its_network_subnets_and_groups() -> None:
    props = checked(
        "OS::Neutron::Port",
        network="private",
        fixed_ips=[{"subnet": "private-subnet", "ip_address": "10.0.0.7"}],
        security_groups=["web", "default"],
    )
    request = port.API.body(props, "st-p-abc")
    assert request.body["network_id"] == "private"
    assert request.body["fixed_ips"] == [{"ip_address": "10.0.0.7", "subnet_id": "private-subnet"}]
    assert request.body["name"] == "st-p-abc"
    assert set(request.lookups) == {
        Lookup(path=("network_id",), kind="network", ref="private"),
        Lookup(path=("fixed_ips", 0, "subnet_id"), kind="subnet", ref="private-subnet"),
        Lookup(path=("security_groups", 0), kind="security_group", ref="web"),
        Lookup(path=("security_groups", 1), kind="security_group", ref="default"),
    }


def test_an_update_sends_only_changed_fields() -> None:
    before = checked("OS::Neutron::Net", name="a", admin_state_up=True)
    after = checked("OS::Neutron::Net", name="a", admin_state_up=False)
    assert net.API.update_request(before, after, "st-n-1").body == {"admin_state_up": False}
    unnamed = checked("OS::Neutron::Net")
    assert net.API.update_request(before, unnamed, "st-n-1").body == {"name": "st-n-1"}


def test_subnet_gateway_empty_means_no_gateway() -> None:
    props = checked("OS::Neutron::Subnet", network="n", cidr="10.0.0.0/24", gateway_ip="")
    assert subnet.API.body(props, "x").body["gateway_ip"] is None
    with pytest.raises(InvalidRequest, match="cidr: Error validating value 'nope'"):
        checked("OS::Neutron::Subnet", network="n", cidr="nope")


def test_router_gateway_and_interface_ids_follow_heat() -> None:
    props = checked("OS::Neutron::Router", external_gateway_info={"network": "public"})
    request = router.API.body(props, "st-r-1")
    assert request.body["external_gateway_info"] == {"network_id": "public"}
    assert request.lookups[0].path == ("external_gateway_info", "network_id")
    rid = router.interface_id("r1", {"subnet_id": "s1"})
    assert rid == "r1:subnet_id=s1"
    assert router.parse_interface_id(rid) == ("r1", {"subnet_id": "s1"})
    with pytest.raises(InvalidRequest, match="Only one of subnet, port"):
        checked("OS::Neutron::RouterInterface", router="r", subnet="s", port="p")


def test_security_group_rules_are_heat_s_formatted_rules() -> None:
    assert security_group.rule_request({"remote_mode": "remote_group_id"}, "g1").body == {
        "security_group_id": "g1",
        "direction": "ingress",
        "ethertype": "IPv4",
        "remote_group_id": "g1",
    }
    assert security_group.has_egress([{"direction": "egress"}])
    with pytest.raises(InvalidRequest, match='cannot be assigned the name "default"'):
        checked("OS::Neutron::SecurityGroup", name="default")


def test_floating_ip_and_volume_requests() -> None:
    fip = floating_ip.API.body(checked("OS::Neutron::FloatingIP", floating_network="public"), "x")
    assert fip.body == {"floating_network_id": "public"}
    assert fip.lookups[0].kind == "network"
    before = checked("OS::Cinder::Volume", size=1, name="a")
    after = checked("OS::Cinder::Volume", size=3, name="b")
    assert volume.extend_to(before, after) == 3
    assert volume.API.update_request(before, after, "x").body == {"name": "b"}
    volumes = resource_type("OS::Cinder::Volume")
    assert volumes.updatable_with("volume_type", {}, patched=lambda _: True)  # a retype
    assert not volumes.updatable_with("volume_type", {}, patched=lambda _: False)
    assert volume.retype_to({"volume_type": "a"}, {"volume_type": "b"}) == "b"
    assert volume.retype_to({"volume_type": "a"}, {"volume_type": "a"}) is None
    assert volumes.updatable_with("read_only", {}, patched=lambda _: True)
    assert not volumes.updatable_with("read_only", {}, patched=lambda _: False)
    assert volume.read_only_to({"read_only": True}, {"read_only": False}) is False
    assert volume.read_only_to({}, {"read_only": None}) is None
    assert not volumes.updatable("backup_id")


def test_physical_names_are_heat_s_shape() -> None:
    assert physical_name("web", "net", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0") == (
        "web-net-0f1e2d3c4b5a"
    )


def test_a_rules_update_reconciles_as_heat_does_keeping_default_egress() -> None:
    current: list[dict[str, Any]] = [
        {"id": "r1", "direction": "egress", "ethertype": "IPv4", "security_group_id": "g"},
        {"id": "r2", "direction": "egress", "ethertype": "IPv6", "security_group_id": "g"},
        {"id": "r3", "direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
         "port_range_min": 80, "port_range_max": 80, "security_group_id": "g"},
    ]  # fmt: skip
    ssh: dict[str, Any] = {
        "direction": "ingress",
        "protocol": "tcp",
        "port_range_min": 22,
        "port_range_max": 22,
    }
    stale, missing = security_group.reconcile([ssh], "g", current)
    assert stale == ["r3"]  # the egress defaults stay: the rules name no egress
    assert [m.body["port_range_min"] for m in missing] == [22]
    stale, missing = security_group.reconcile([{"direction": "egress"}], "g", current)
    assert sorted(stale) == ["r2", "r3"] and missing == []


def test_a_removed_list_property_is_sent_empty_as_heat_does() -> None:
    pools = [{"start": "10.0.0.10", "end": "10.0.0.20"}]
    before = checked("OS::Neutron::Subnet", network="n", cidr="10.0.0.0/24", allocation_pools=pools)
    after = checked("OS::Neutron::Subnet", network="n", cidr="10.0.0.0/24")
    assert subnet.API.update_request(before, after, "x").body == {"allocation_pools": []}


def test_an_images_active_flag_and_members_change_in_place() -> None:
    from domain.stack.types.glance import web_image

    assert web_image.activation(None, {"active": False}) == "deactivate"
    assert web_image.activation(None, {}) is None
    assert web_image.activation({"active": False}, {"active": True}) == "reactivate"
    assert web_image.activation({"active": True}, {}) is None
    assert web_image.member_changes({"members": ["a", "b"]}, {"members": ["b", "c"]}) == (
        ["c"],
        ["a"],
    )
    images = resource_type("OS::Glance::WebImage")
    assert images.updatable_with("members", {}, patched=lambda _: True)
    assert not images.updatable_with("active", {}, patched=lambda _: False)
