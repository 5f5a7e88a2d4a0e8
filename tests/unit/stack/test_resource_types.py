"""The resource type registry and the pure rules of each type (domain/stack/types)."""

from __future__ import annotations

import random

import pytest

from domain.errors import InvalidRequest
from domain.servers import ServerInfo
from domain.stack.resource_types import (
    NONE,
    RESOURCE_TYPES,
    SERVER,
    TEST_RESOURCE,
    check_properties,
    resource_type,
)
from domain.stack.types import random_string, scaling_policy, server, test_resource


def test_registry_keys_are_the_type_names_heat_uses() -> None:
    assert sorted(RESOURCE_TYPES) == [
        "OS::Cinder::Volume",
        "OS::Cinder::VolumeAttachment",
        "OS::Glance::WebImage",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::CloudConfig",
        "OS::Heat::MultipartMime",
        "OS::Heat::None",
        "OS::Heat::RandomString",
        "OS::Heat::ResourceGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Heat::SoftwareConfig",
        "OS::Heat::SoftwareDeployment",
        "OS::Heat::SoftwareDeploymentGroup",
        "OS::Heat::SoftwareDeployments",
        "OS::Heat::Stack",
        "OS::Heat::StructuredConfig",
        "OS::Heat::StructuredDeployment",
        "OS::Heat::StructuredDeploymentGroup",
        "OS::Heat::StructuredDeployments",
        "OS::Heat::TestResource",
        "OS::Heat::Value",
        "OS::Heat::WaitCondition",
        "OS::Heat::WaitConditionHandle",
        "OS::Neutron::ExtraRouteSet",
        "OS::Neutron::FloatingIP",
        "OS::Neutron::FloatingIPAssociation",
        "OS::Neutron::Net",
        "OS::Neutron::Port",
        "OS::Neutron::Router",
        "OS::Neutron::RouterInterface",
        "OS::Neutron::SecurityGroup",
        "OS::Neutron::SecurityGroupRule",
        "OS::Neutron::Subnet",
        "OS::Neutron::Trunk",
        "OS::Nova::KeyPair",
        "OS::Nova::Server",
        "OS::Nova::ServerGroup",
        "OS::Octavia::HealthMonitor",
        "OS::Octavia::Listener",
        "OS::Octavia::LoadBalancer",
        "OS::Octavia::Pool",
        "OS::Octavia::PoolMember",
    ]
    assert all(name == t.name for name, t in RESOURCE_TYPES.items())


def test_unknown_type_is_a_400_in_heat_words() -> None:
    with pytest.raises(InvalidRequest, match=r"The Resource Type \(OS::Nope\) could not be found"):
        resource_type("OS::Nope")


def test_update_replace_replaces_only_types_that_honour_it_when_planning() -> None:
    flagged = {"value": "b", "update_replace": True}
    assert not resource_type(TEST_RESOURCE).updatable_with("value", flagged)
    assert resource_type(TEST_RESOURCE).updatable_with("value", {"value": "b"})
    assert resource_type(NONE).updatable_with("anything", flagged)


def test_in_place_update_needs_every_changed_property_updatable() -> None:
    servers = resource_type(SERVER)
    assert servers.updatable_in_place({"image": "a", "flavor": "f"}, {"image": "b", "flavor": "f"})
    assert servers.updatable_in_place({"flavor": "small"}, {"flavor": "large"})  # a resize
    assert not servers.updatable_in_place({"key_name": "a"}, {"key_name": "b"})
    tests = resource_type(TEST_RESOURCE)
    assert not tests.updatable_in_place({"value": "a"}, {"value": "a", "update_replace": True})


def test_type_rules_run_with_the_schema_checks() -> None:
    group = RESOURCE_TYPES["OS::Heat::AutoScalingGroup"]
    props = {"min_size": 3, "max_size": 1, "resource": {"type": NONE}}
    with pytest.raises(InvalidRequest, match="min_size can not be greater than max_size"):
        check_properties(group, props, "resources.g.properties")
    waits = {"action_wait_secs": {"suspend": 1}}
    with pytest.raises(InvalidRequest, match=r"action_wait_secs\.suspend: unknown action"):
        check_properties(resource_type(TEST_RESOURCE), waits, "resources.t.properties")


def test_random_value_follows_sequence_and_length_and_replays_from_the_seed() -> None:
    props = {"sequence": "digits", "length": 12}
    value = random_string.random_value(props, random.Random(7))
    assert len(value) == 12 and value.isdigit()
    assert random_string.random_value(props, random.Random(7)) == value
    assert len(random_string.random_value({}, random.Random(7))) == 32


def test_test_resource_waits_per_action_and_fails_on_demand() -> None:
    props = {"wait_secs": 5, "action_wait_secs": {"delete": 2}}
    assert test_resource.wait_seconds("delete", props) == 2
    assert test_resource.wait_seconds("create", props) == 5
    assert test_resource.wait_seconds("update", {}) == 0
    assert test_resource.failure("t", {"fail": True}) == "Test Resource failed t"
    assert test_resource.failure("t", {"fail": False}) is None
    assert test_resource.attributes({"value": "v"}) == {"output": "v"}


def test_server_request_names_the_server_after_stack_and_resource() -> None:
    request = server.server_request(
        "web",
        "s-1",
        "db",
        {"image": "cirros", "flavor": "m1", "metadata": {"n": 1}},
        "ab-cd-ef-12-34",
    )
    assert request.name == "web-db-abcdef12"
    assert request.request_id == "ab-cd-ef-12-34"
    assert request.metadata == {"n": "1", "warden_stack": "s-1", "warden_resource": "db"}
    assert server.needs_rebuild({"image": "a"}, {"image": "b"})
    assert not server.needs_rebuild({"image": "a", "name": "x"}, {"image": "a", "name": "y"})


def test_server_attributes_show_the_cloud_view() -> None:
    info = ServerInfo(physical_id="p1", name="web-db", status="ACTIVE")
    attributes = server.server_attributes(info)
    assert attributes["name"] == "web-db"
    assert attributes["show"]["physical_id"] == "p1"


def test_policy_signal_url_is_the_resource_signal_route() -> None:
    url = "/v1/demo/stacks/web/s-1/resources/up/signal"
    assert scaling_policy.policy_attributes("demo", "web", "s-1", "up") == {
        "signal_url": url,
        "alarm_url": url,
    }


def test_nested_types_declare_what_their_nested_property_holds() -> None:
    holds = {name: (t.nested_properties, t.nested_holds) for name, t in RESOURCE_TYPES.items()}
    assert holds["OS::Heat::Stack"] == (frozenset({"template"}), "template")
    assert holds["OS::Heat::AutoScalingGroup"] == (frozenset(), None)
    assert RESOURCE_TYPES["OS::Heat::AutoScalingGroup"].member_definition == "resource"
    assert all(
        h == (frozenset(), None) for n, h in holds.items() if "Stack" not in n and "Group" not in n
    )
