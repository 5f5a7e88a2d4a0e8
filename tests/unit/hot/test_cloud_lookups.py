"""What a template names of the cloud, to be looked up before it is made."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.cloud_lookups import AVAILABILITY_ZONE, FINDERS, template_lookups
from domain.hot.template import load_template, resolve_parameters


def lookups(template: dict[str, Any], given: dict[str, Any] | None = None) -> list[tuple[str, ...]]:
    loaded = load_template({"heat_template_version": "2021-04-16", **template})
    params = resolve_parameters(loaded, given or {})
    return [(c.constraint, c.value, c.field) for c in template_lookups(loaded, params)]


def test_parameters_then_literal_and_parameter_values_of_properties_nested_ones_too() -> None:
    found = lookups(
        {
            "parameters": {
                "key": {"type": "string", "constraints": [{"custom_constraint": "nova.keypair"}]},
                "img": {"type": "string", "default": "cirros"},
            },
            "resources": {
                "net": {"type": "OS::Neutron::Net"},
                "vm": {
                    "type": "OS::Nova::Server",
                    "properties": {
                        "key_name": {"get_param": "key"},
                        "image": {"get_param": "img"},
                        "flavor": "m1.tiny",
                        "networks": [
                            {"network": {"get_resource": "net"}},
                            {"network": "public", "fixed_ip": "10.0.0.3"},
                        ],
                    },
                },
            },
        },
        {"key": "k1"},
    )
    assert found == [
        ("nova.keypair", "k1", "parameters.key"),
        ("nova.keypair", "k1", "resources.vm.properties.key_name"),
        ("glance.image", "cirros", "resources.vm.properties.image"),
        ("nova.flavor", "m1.tiny", "resources.vm.properties.flavor"),
        ("neutron.network", "public", "resources.vm.properties.networks[1].network"),
    ]


def test_computed_values_and_resources_a_false_condition_leaves_out_are_not_looked_up() -> None:
    found = lookups(
        {
            "parameters": {"on": {"type": "boolean", "default": False}},
            "conditions": {"wanted": {"get_param": "on"}},
            "resources": {
                "key": {"type": "OS::Nova::KeyPair", "properties": {"name": "k"}},
                "vm": {
                    "type": "OS::Nova::Server",
                    "properties": {"key_name": {"get_resource": "key"}, "flavor": "m1.small"},
                },
                "off": {
                    "type": "OS::Nova::Server",
                    "condition": "wanted",
                    "properties": {"flavor": "m1.huge"},
                },
            },
        }
    )
    assert found == [("nova.flavor", "m1.small", "resources.vm.properties.flavor")]


def test_a_parameter_list_is_looked_up_item_by_item() -> None:
    found = lookups(
        {
            "parameters": {
                "nets": {
                    "type": "comma_delimited_list",
                    "constraints": [{"custom_constraint": "neutron.network"}],
                }
            },
            "resources": {},
        },
        {"nets": "a,b"},
    )
    assert [v for _, v, _ in found] == ["a", "b"]


def test_a_pure_custom_constraint_of_a_parameter_is_checked_with_its_value() -> None:
    template = {
        "parameters": {"ip": {"type": "string", "constraints": [{"custom_constraint": "ip_addr"}]}},
        "resources": {},
    }
    assert lookups(template, {"ip": "10.0.0.1"}) == []
    with pytest.raises(InvalidRequest, match=r"parameters\.ip: Error validating value 'ten'"):
        lookups(template, {"ip": "ten"})


def test_every_finder_names_a_collection_the_driver_has() -> None:
    from activities.cloud.collections import COLLECTIONS

    kinds = {f.kind for name, f in FINDERS.items() if name != AVAILABILITY_ZONE}
    assert kinds <= set(COLLECTIONS)
