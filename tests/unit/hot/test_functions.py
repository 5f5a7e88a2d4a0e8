"""Intrinsic functions: evaluation with and without the resources they read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.functions import (
    ResolvedResource,
    ResolvedResources,
    resolve,
    resolve_properties,
    static_properties,
    static_value,
)
from domain.hot.parameters import resolve_parameters
from domain.hot.template import load_template
from tests.unit.hot.test_parameters import PARAMETERS, params_template
from tests.unit.hot.test_template import NONE, hot, server

RESOURCES = {
    "key": ResolvedResource(reference="s3cr3t", attributes={"value": "s3cr3t"}),
    "web": ResolvedResource(
        reference="srv-1", attributes={"addresses": {"private": [{"addr": "10.0.0.5"}]}}
    ),
}


EVALUATION_CASES: list[tuple[Any, ...]] = [
    ({"get_param": ["extra", "k", 1]}, 2),
    ({"get_param": ["extra", "k", "7"]}, ""),
    ({"get_param": ["zones", 0]}, "az1"),
    ({"get_resource": "web"}, "srv-1"),
    ({"get_attr": ["web", "addresses", "private", 0, "addr"]}, "10.0.0.5"),
    ({"get_attr": ["web", "addresses", "public", 0]}, None),
    ({"get_attr": ["web", "networks"]}, None),
    (
        {"list_join": [",", ["a", {"get_param": "count"}], {"get_param": "zones"}]},
        "a,1,az1,az2",
    ),
    (
        {
            "str_replace": {
                "template": "$host:$hostport $host",
                "params": {"$host": {"get_resource": "web"}, "$hostport": 80},
            }
        },
        "srv-1:80 srv-1",
    ),
    ([{"a": {"get_attr": ["key", "value"]}}], [{"a": "s3cr3t"}]),
]


def test_resolve_evaluates_intrinsics() -> None:
    for value, expected in EVALUATION_CASES:
        params = resolve_parameters(params_template(), {"count": 1})
        assert resolve(value, params, RESOURCES) == expected


def test_resolve_rejects_resources_not_available_yet() -> None:
    with pytest.raises(InvalidRequest, match=r"^get_attr: resource 'db' is not available yet$"):
        resolve({"get_attr": ["db", "name"]}, {}, RESOURCES)


def test_static_properties_apply_parameters_and_keep_resource_references() -> None:
    template = load_template(
        hot(
            {
                "key": {
                    "type": "OS::Heat::RandomString",
                    "properties": {"salt": {"get_param": "flavor"}},
                },
                "web": server(
                    flavor={"get_param": "flavor"},
                    name={
                        "list_join": [
                            "-",
                            [{"get_param": "flavor"}, {"get_attr": ["key", "value"]}],
                        ]
                    },
                    metadata={"zone": {"list_join": ["/", {"get_param": "zones"}]}},
                ),
            },
            PARAMETERS,
        )
    )
    params = resolve_parameters(template, {"count": 1})
    web = static_properties(template.resources["web"], params)
    assert {k: web[k] for k in ("image", "flavor", "name", "metadata")} == {
        "image": "cirros",
        "flavor": "m1.small",
        "name": {"list_join": ["-", ["m1.small", {"get_attr": ["key", "value"]}]]},
        "metadata": {"zone": "az1/az2"},
    }
    # Heat's defaults are filled in (so a later default change shows as a change).
    assert web["image_update_policy"] == "REBUILD"
    assert web["user_data_format"] == "HEAT_CFNTOOLS"
    assert static_properties(template.resources["key"], params) == {
        "length": 32,
        "sequence": "lettersdigits",
        "salt": "m1.small",
    }


def test_resolve_properties_converts_resolved_values_and_names_bad_ones() -> None:
    template = load_template(
        hot(
            {
                "key": {
                    "type": "OS::Heat::RandomString",
                    "properties": {"length": {"get_param": "n"}},
                }
            },
            {"n": {"type": "string"}},
        )
    )
    key = template.resources["key"]
    assert resolve_properties(key, {"n": "8"}, {})["length"] == 8
    with pytest.raises(
        InvalidRequest, match=r"^resources\.key\.properties\.length: must be an integer$"
    ):
        resolve_properties(key, {"n": "eight"}, {})
    missing = r"^resources\.key\.properties\.length: The Parameter \(n\) was not provided"
    with pytest.raises(InvalidRequest, match=missing):
        resolve_properties(key, {}, {})


def test_resolve_properties_leaves_inner_templates_as_written() -> None:
    inner = hot(
        {"a": {"type": NONE, "properties": {"x": {"get_param": "p"}}}}, {"p": {"type": "string"}}
    )
    template = load_template(
        hot(
            {
                "web": server(),
                "s": {
                    "type": "OS::Heat::Stack",
                    "properties": {"template": inner, "parameters": {"p": {"get_resource": "web"}}},
                },
            }
        )
    )
    props = resolve_properties(template.resources["s"], {}, RESOURCES)
    assert props == {"template": inner, "parameters": {"p": "srv-1"}}


def test_resolved_resources_is_a_live_view_built_on_read() -> None:
    @dataclass
    class Held:
        reference: str | None
        attributes: dict[str, Any] = field(default_factory=dict)
        type: str = "OS::Heat::RandomString"

    held: dict[str, Held] = {"a": Held("ref-a", {"value": "x"})}
    view = ResolvedResources(held)
    held["b"] = Held("ref-b")  # added after the view was made: a walk's resources grow
    assert sorted(view) == ["a", "b"] and len(view) == 2
    assert view["a"] == ResolvedResource(
        reference="ref-a", attributes={"value": "x"}, type="OS::Heat::RandomString"
    )
    assert resolve({"get_resource": "b"}, {}, view) == "ref-b"
    with pytest.raises(InvalidRequest):
        resolve({"get_resource": "c"}, {}, view)


def test_a_group_member_s_inner_template_keeps_its_own_intrinsics() -> None:
    inner = {
        "heat_template_version": "2021-04-16",
        "parameters": {"size": {"type": "number"}},
        "resources": {
            "key": {
                "type": "OS::Heat::RandomString",
                "properties": {"length": {"get_param": "size"}},
            }
        },
    }
    member = {
        "type": "OS::Heat::Stack",
        "properties": {"template": inner, "parameters": {"size": {"get_param": "outer"}}},
    }
    group = {"type": "OS::Heat::ResourceGroup", "properties": {"count": 2, "resource_def": member}}
    template = load_template(
        {
            "heat_template_version": "2021-04-16",
            "parameters": {"outer": {"type": "number", "default": 8}},
            "resources": {"group": group},
        }
    )  # the inner `get_param: size` is the inner template's, not a missing outer one

    props = static_properties(template.resources["group"], resolve_parameters(template, {}))
    resolved = props["resource_def"]["properties"]
    assert resolved["parameters"] == {"size": 8}  # the outer part is resolved here
    assert resolved["template"] == inner  # the inner template is kept as written


def test_a_get_attr_path_may_hold_calls_worked_out_before_the_read() -> None:
    template = load_template(
        {
            "heat_template_version": "2016-10-14",
            "parameters": {"network": {"type": "string"}},
            "resources": {"s": {"type": "OS::Heat::None"}},
            "outputs": {
                "ip": {"value": {"get_attr": ["s", "networks", {"get_param": "network"}, 0]}}
            },
        }
    )
    server = ResolvedResource(
        type="OS::Heat::None", attributes={"networks": {"private": ["10.0.0.5"]}}
    )
    value = template.outputs["ip"].value
    assert resolve(value, {"network": "private"}, {"s": server}) == "10.0.0.5"
    with pytest.raises(
        InvalidRequest, match=r"value\.get_attr\[2\]: : The Parameter \(nope\) was not provided"
    ):
        load_template(
            {
                "heat_template_version": "2016-10-14",
                "resources": {
                    "s": {"type": "OS::Heat::None"},
                    "t": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"value": {"get_attr": ["s", "x", {"get_param": "nope"}]}},
                    },
                },
            }
        )


def test_get_param_path_items_may_be_calls_as_in_heat() -> None:
    template = load_template(
        {
            "heat_template_version": "2015-10-15",
            "parameters": {
                "lengths": {"type": "comma_delimited_list"},
                "index": {"type": "number"},
            },
            "resources": {
                "random": {
                    "type": "OS::Heat::RandomString",
                    "properties": {"length": {"get_param": ["lengths", {"get_param": "index"}]}},
                }
            },
        }
    )
    props = template.resources["random"].properties
    assert static_value(props, {"lengths": ["4", "5", "6"], "index": 1}) == {"length": "5"}
    with pytest.raises(InvalidRequest, match=r"get_param.*The Parameter \(nope\)"):
        load_template(
            {
                "heat_template_version": "2015-10-15",
                "parameters": {"lengths": {"type": "comma_delimited_list"}},
                "resources": {
                    "random": {
                        "type": "OS::Heat::RandomString",
                        "properties": {"length": {"get_param": ["lengths", {"get_param": "nope"}]}},
                    }
                },
            }
        )
