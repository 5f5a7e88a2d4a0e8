"""Nested property schemas and Heat's constraints (domain/hot/properties, constraints)."""

from __future__ import annotations

import re

import pytest

from domain.errors import InvalidRequest
from domain.hot.constraints import check_custom
from domain.hot.properties import check_properties, convert_property, prop
from domain.stack.resource_types import resource_type

FIELD = "resources.s.properties"


def server(**props: object) -> dict[str, object]:
    return {"flavor": "m1.tiny", **props}


def test_a_list_of_maps_has_each_item_checked_against_heat_s_nested_schema() -> None:
    checked = check_properties(
        resource_type("OS::Nova::Server"),
        server(networks=[{"network": "private", "fixed_ip": "10.0.0.5"}, {"port": "p1"}]),
        FIELD,
    )
    assert checked["networks"] == [{"network": "private", "fixed_ip": "10.0.0.5"}, {"port": "p1"}]


@pytest.mark.parametrize(
    ("networks", "message"),
    [
        ([{"netwrk": "x"}], f"{FIELD}.networks[0]: Unknown Property netwrk"),
        ([{"fixed_ip": "10.0.0"}], f"{FIELD}.networks[0].fixed_ip: Error validating value"),
        (["private"], f"{FIELD}.networks[0]: must be a map"),
        ([{"allocate_network": "some"}], f'{FIELD}.networks[0].allocate_network: "some" is not'),
    ],
)
def test_bad_nested_entries_are_refused_with_their_path(networks: object, message: str) -> None:
    with pytest.raises(InvalidRequest, match="^" + re.escape(message)):
        check_properties(resource_type("OS::Nova::Server"), server(networks=networks), FIELD)


def test_nested_required_keys_and_defaults_follow_heat() -> None:
    rule = {"direction": "egress", "remote_ip_prefix": "0.0.0.0/0"}
    checked = check_properties(
        resource_type("OS::Neutron::SecurityGroup"), {"rules": [rule]}, FIELD
    )
    (filled,) = checked["rules"]
    assert filled["direction"] == "egress"
    assert filled["ethertype"] == "IPv4"  # Heat's default, filled in
    assert filled["remote_mode"] == "remote_ip_prefix"
    with pytest.raises(InvalidRequest, match=r"allowed_address_pairs\[0\]\.ip_address: property"):
        check_properties(
            resource_type("OS::Neutron::Port"),
            {"network": "n", "allowed_address_pairs": [{"mac_address": "fa:16:3e:00:00:01"}]},
            FIELD,
        )


def test_length_and_pattern_constraints() -> None:
    name = prop("string", min_length=1, max_length=3, pattern="[a-z]+")
    assert convert_property(name, "abc", "n") == "abc"
    with pytest.raises(InvalidRequest, match=r"^n: length \(4\) must be no greater than 3$"):
        convert_property(name, "abcd", "n")
    with pytest.raises(InvalidRequest, match=r'^n: "a1" does not match pattern'):
        convert_property(name, "a1", "n")


@pytest.mark.parametrize(
    ("constraint", "value", "problem"),
    [
        ("ip_addr", "10.0.0.1", None),
        ("ip_addr", "fe80::1", None),
        ("ip_addr", "10.0.0", "Invalid IP address"),
        ("net_cidr", "10.0.0.0/24", None),
        ("net_cidr", "10.0.0.0", "'10.0.0.0' is not a valid IP subnet"),
        ("ip_or_cidr", "10.0.0.0/8", None),
        ("ip_or_cidr", "x", "x is not a valid IP or CIDR"),
        ("mac_addr", "fa:16:3e:aa:bb:cc", None),
        ("mac_addr", "fa:16:3e", "Invalid MAC address."),
        ("dns_domain", "example.org.", None),
        ("dns_domain", "example.org", "'example.org' must end with '.'."),
        ("rel_dns_name", "web.", "'web.' is a FQDN. It should be a relative domain name."),
        ("nova.flavor", "anything", None),  # checked when the activity looks it up
    ],
)
def test_custom_constraints_that_need_no_cloud(
    constraint: str, value: str, problem: str | None
) -> None:
    assert check_custom(constraint, value) == problem


def test_deprecated_names_move_to_their_successors_as_heat_translates_them() -> None:
    port = resource_type("OS::Neutron::Port")
    assert check_properties(port, {"network_id": "private"}, FIELD)["network"] == "private"
    assert "network_id" not in check_properties(port, {"network_id": "private"}, FIELD)
    with pytest.raises(InvalidRequest, match="at the same time: network, network_id"):
        check_properties(port, {"network_id": "a", "network": "b"}, FIELD)
    # Hidden from the schema Heat shows, still taken in templates.
    assert "network_id" in port.hidden
