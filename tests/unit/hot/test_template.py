"""Heat templates: loading and validation, and the dependency graph."""

from __future__ import annotations

import contextlib
import copy
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import InvalidRequest
from domain.hot.functions import property_references, references
from domain.hot.template import MAX_RESOURCES, Template, load_template, topological_order
from domain.stack.resource_types import RESOURCE_TYPES, resource_type

NONE = "OS::Heat::None"
SERVER = "OS::Nova::Server"


def hot(
    resources: dict[str, Any] | None = None,
    parameters: dict[str, Any] | None = None,
    **sections: Any,
) -> dict[str, Any]:
    """A template mapping with a version and the given sections."""
    return {
        "heat_template_version": "2021-04-16",
        "parameters": parameters or {},
        "resources": resources or {},
        **sections,
    }


def server(**properties: Any) -> dict[str, Any]:
    return {"type": SERVER, "properties": {"image": "cirros", "flavor": "m1.small", **properties}}


def rejects(raw: Any, message: str) -> None:
    with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}$"):
        load_template(raw)


# --- loading --------------------------------------------------------------------------


def test_load_accepts_yaml_and_keeps_a_date_version_as_a_string() -> None:
    template = load_template(
        """
        heat_template_version: 2018-08-31
        description: web tier
        parameter_groups: [{label: all, parameters: [flavor]}]
        parameters:
          flavor: {type: string, default: m1.small}
        resources:
          web:
            type: OS::Nova::Server
            properties: {image: cirros, flavor: {get_param: flavor}}
        outputs:
          addresses: {value: {get_attr: [web, addresses]}, description: where}
        """
    )
    assert template.version == "2018-08-31"
    assert template.description == "web tier"
    assert template.parameters["flavor"].default == "m1.small"
    assert template.resources["web"].properties["flavor"] == {"get_param": "flavor"}
    assert template.outputs["addresses"].value == {"get_attr": ["web", "addresses"]}


def test_load_accepts_json_string_and_an_empty_stack() -> None:
    template = load_template('{"heat_template_version": "wallaby"}')
    assert template == Template(version="wallaby")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("resources: [", "Invalid template: expected the node content, but found '<stream end>'"),
        ("[1, 2]", "Invalid template: the template must be a mapping"),
        ({"resources": {}}, "heat_template_version: required"),
        (
            {**hot(conditions={"prod": True}), "heat_template_version": "2016-04-08"},
            "The template section is invalid: conditions",
        ),
        (hot(mappings={}), "The template section is invalid: mappings"),
        ({"heat_template_version": ["x"]}, "heat_template_version: must be a version string"),
    ],
)
def test_load_rejects_malformed_documents(raw: Any, message: str) -> None:
    with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}"):
        load_template(raw)


def test_load_rejects_unknown_resource_type_with_heat_wording() -> None:
    rejects(
        hot({"x": {"type": "OS::Trove::Instance"}}),
        "resources.x.type: The Resource Type (OS::Trove::Instance) could not be found.",
    )


def test_load_requires_required_properties() -> None:
    web = {"type": SERVER, "properties": {"image": "cirros"}}
    rejects(hot({"web": web}), "resources.web.properties.flavor: property is required")


SCHEMA_CASES: list[tuple[Any, ...]] = [
    ({"type": NONE, "condition": "prod"}, 'resources.r.condition: Invalid condition "prod"'),
    (server(colour="red"), "resources.r.properties.colour: unknown property for OS::Nova::Server"),
    (server(flavor=["m1"]), "resources.r.properties.flavor: must be a string"),
    (server(metadata=[1]), "resources.r.properties.metadata: must be a map"),
    (
        {"type": "OS::Heat::RandomString", "properties": {"length": "ten"}},
        "resources.r.properties.length: must be an integer",
    ),
    (
        {"type": "OS::Heat::RandomString", "properties": {"sequence": "emoji"}},
        'resources.r.properties.sequence: "emoji" is not an allowed value',
    ),
    (
        {"type": "OS::Heat::RandomString", "properties": {"length": 0}},
        "resources.r.properties.length: 0 is out of range (min: 1, max: 512)",
    ),
    (
        {"type": "OS::Heat::TestResource", "properties": {"fail": "maybe"}},
        "resources.r.properties.fail: must be a boolean",
    ),
    (
        {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": -1}}},
        "resources.r.properties.action_wait_secs.create: must be an integer between 0",
    ),
    (
        {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"boot": 1}}},
        "resources.r.properties.action_wait_secs.boot: unknown action",
    ),
    (
        {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {"min_size": 3, "max_size": 2, "resource": {"type": NONE}},
        },
        "resources.r.properties.min_size: min_size can not be greater than max_size",
    ),
    (
        {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {"min_size": 0, "max_size": 2, "resource": {"type": "Nova"}},
        },
        "resources.r.properties.resource.type: The Resource Type (Nova) could not be found.",
    ),
    (
        {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {"min_size": 0, "max_size": 2, "resource": {"type": SERVER}},
        },
        "resources.r.properties.resource.properties.flavor: property is required",
    ),
]


def test_load_checks_literal_properties_against_the_schema() -> None:
    for resource, message in SCHEMA_CASES:
        with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}"):
            load_template(hot({"r": resource}))


def test_load_accepts_loose_literals_and_defers_intrinsic_values() -> None:
    template = load_template(
        hot(
            {
                "r": {"type": "OS::Heat::RandomString", "properties": {"length": "12"}},
                "t": {"type": "OS::Heat::TestResource", "properties": {"fail": "False"}},
                "s": server(name=42, flavor={"get_param": "size"}),
            },
            {"size": {"type": "number", "default": 3}},
        )
    )
    assert template.resources["r"].properties == {"length": "12"}  # raw until resolved


def test_load_validates_inline_nested_template_under_its_path() -> None:
    inner = hot({"q": {"type": "OS::Unknown"}})
    rejects(
        hot({"s": {"type": "OS::Heat::Stack", "properties": {"template": inner}}}),
        "resources.s.properties.template: resources.q.type: "
        "The Resource Type (OS::Unknown) could not be found.",
    )


def test_load_leaves_references_inside_inner_templates_to_them() -> None:
    """An inline template's references are its own; a scaling group's member definition
    is resolved in this template, as Heat resolves the property."""
    inner = hot(
        {"a": {"type": NONE, "properties": {"x": {"get_resource": "b"}}}, "b": {"type": NONE}}
    )
    member = {
        "type": SERVER,
        "properties": {"image": "cirros", "flavor": "m1", "name": {"get_resource": "web"}},
    }
    template = load_template(
        hot(
            {
                "web": server(),
                "s": {
                    "type": "OS::Heat::Stack",
                    "properties": {"template": inner, "parameters": {"w": {"get_resource": "web"}}},
                },
                "g": {
                    "type": "OS::Heat::AutoScalingGroup",
                    "properties": {"min_size": 1, "max_size": 3, "resource": member},
                },
            }
        )
    )
    assert template.dependencies() == {"web": set(), "s": {"web"}, "g": {"web"}}


REFERENCE_CASES: list[tuple[Any, ...]] = [
    (
        {"a": {"type": NONE, "depends_on": "b"}},
        {},
        'Invalid template: resources.a.depends_on: resource "b" does not exist',
    ),
    (
        {"a": {"type": NONE, "depends_on": ["a"]}},
        {},
        "Invalid template: resources.a.depends_on: a resource cannot refer to itself",
    ),
    (
        {"a": {"type": NONE, "properties": {"x": [{"get_resource": "b"}]}}},
        {},
        'Invalid template: resources.a.properties.x[0].get_resource: resource "b" does not exist',
    ),
    (
        {"a": {"type": NONE, "properties": {"x": {"get_param": "nope"}}}},
        {},
        "Property error: : resources.a.properties.x: : The Parameter (nope) was not provided.",
    ),
    (
        {"w": server(), "a": {"type": NONE, "properties": {"x": {"get_attr": ["w", "ip"]}}}},
        {},
        'Invalid template: resources.a.properties.x.get_attr: resource "w" '
        '(OS::Nova::Server) has no attribute "ip"',
    ),
    (
        {},
        {"o": {"value": {"get_attr": ["ghost", "x"]}}},
        'Invalid template: outputs.o.value.get_attr: resource "ghost" does not exist',
    ),
    (
        {"a": {"type": NONE, "metadata": {"m": {"get_resource": "a"}}}},
        {},
        "Invalid template: resources.a.metadata.m.get_resource: a resource cannot refer to itself",
    ),
]


def test_load_rejects_bad_references_naming_the_path() -> None:
    for resources, outputs, message in REFERENCE_CASES:
        rejects(hot(resources, outputs=outputs), message)


INTRINSIC_CASES: list[tuple[Any, ...]] = [
    ({"get_attr": ["b"]}, "get_attr: must be [resource, attribute, key, ...]"),
    ({"get_param": {"a": 1}}, "get_param: must be a parameter name or [name, key, ...]"),
    ({"list_join": ","}, "list_join: must be [separator, list, ...]"),
    ({"str_replace": {"template": "x"}}, 'str_replace: "str_replace" syntax should be'),
]


def test_load_rejects_malformed_intrinsics() -> None:
    for call, message in INTRINSIC_CASES:
        resources = {"a": {"type": NONE, "properties": {"x": call}}, "b": {"type": NONE}}
        with pytest.raises(InvalidRequest, match=f"^resources.a.properties.x.{re.escape(message)}"):
            load_template(hot(resources))


def test_load_accepts_any_attribute_of_none_and_pseudo_parameters() -> None:
    resources = {
        "b": {"type": NONE},
        "a": {
            "type": NONE,
            "properties": {
                "x": {"get_attr": ["b", "anything", 0]},
                "n": {"get_param": "OS::stack_name"},
            },
        },
    }
    assert load_template(hot(resources)).dependencies()["a"] == {"b"}


def test_load_rejects_cycle_naming_it() -> None:
    resources = {
        "a": {"type": NONE, "properties": {"x": {"get_resource": "b"}}},
        "b": {"type": NONE, "depends_on": ["c"]},
        "c": {"type": NONE, "properties": {"y": {"get_attr": ["a", "z"]}}},
    }
    rejects(hot(resources), "Circular Dependency Found: a -> b -> c -> a")


def test_load_rejects_more_resources_than_allowed() -> None:
    resources = {f"r{i}": {"type": NONE} for i in range(MAX_RESOURCES + 1)}
    rejects(hot(resources), f"resources: more than {MAX_RESOURCES} resources")
    del resources["r0"]
    assert len(load_template(hot(resources)).resources) == MAX_RESOURCES


def test_load_rejects_deep_nesting_and_alias_bombs() -> None:
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    with pytest.raises(InvalidRequest, match="nested deeper than 64 levels"):
        load_template(hot({"a": {"type": NONE, "properties": {"x": deep}}}))
    bomb = "heat_template_version: 2016-04-08\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefg":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [{', '.join([f'*{previous}'] * 10)}]\n"
    with pytest.raises(InvalidRequest, match=r"^Invalid template: more than 100000 values$"):
        load_template(bomb)


UNSUPPORTED_CASES: list[tuple[Any, ...]] = [
    (
        "heat_template_version: 2016-04-08\ndescription: !!binary aGk=",
        "description: unsupported value",
    ),
    (
        "heat_template_version: 2016-04-08\ndescription: .nan",
        "description: must be a finite number",
    ),
    ("heat_template_version: 2016-04-08\n1: a", "template: keys must be strings"),
]


def test_load_rejects_values_json_cannot_carry() -> None:
    for text, message in UNSUPPORTED_CASES:
        with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}"):
            load_template(text)


_KEYS = st.sampled_from(
    [
        "heat_template_version",
        "resources",
        "parameters",
        "outputs",
        "type",
        "properties",
        "depends_on",
        "get_param",
        "get_resource",
        "get_attr",
        "list_join",
        "str_replace",
        "template",
        "params",
        "value",
        "default",
        "constraints",
        "range",
        "length",
        "min",
        "a",
        "b",
        NONE,
        SERVER,
        "image",
        "flavor",
        "OS::Heat::AutoScalingGroup",
        "resource",
    ]
)
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | _KEYS
_JSONISH = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    raw=st.fixed_dictionaries(
        {"heat_template_version": st.just("2021-04-16")},
        optional={"resources": _JSONISH, "parameters": _JSONISH, "outputs": _JSONISH},
    )
    | _JSONISH
    | st.text(max_size=60)
)
def test_load_raises_nothing_but_invalid_request(raw: Any) -> None:
    with contextlib.suppress(InvalidRequest):
        load_template(raw)


# --- dependency graph -------------------------------------------------------------------


def graph_template() -> Template:
    return load_template(
        hot(
            {
                "net": {"type": NONE},
                "key": {"type": "OS::Heat::RandomString"},
                "web": server(
                    name={"list_join": ["-", ["web", {"get_attr": ["key", "value"]}]]},
                    metadata={"net": {"get_resource": "net"}},
                ),
                "db": server(),
                "lb": {"type": NONE, "depends_on": ["web", "db"]},
            }
        )
    )


def test_dependencies_combine_depends_on_and_references_anywhere() -> None:
    assert graph_template().dependencies() == {
        "net": set(),
        "key": set(),
        "web": {"key", "net"},
        "db": set(),
        "lb": {"web", "db"},
    }


def test_required_by_is_the_sorted_reverse() -> None:
    assert graph_template().required_by() == {
        "net": ["web"],
        "key": ["web"],
        "web": ["lb"],
        "db": ["lb"],
        "lb": [],
    }


def test_creation_order_is_waves_sorted_by_name() -> None:
    assert graph_template().creation_order() == ["db", "key", "net", "web", "lb"]


def test_property_references_per_property_and_metadata() -> None:
    resource = load_template(
        hot({"a": {"type": NONE}, "b": {"type": NONE, "metadata": {"x": {"get_resource": "a"}}}})
    ).resources["b"]
    assert property_references(resource) == {"metadata": {"a"}}
    assert references(
        {"x": [{"str_replace": {"template": "$a", "params": {"$a": {"get_attr": ["q", "v"]}}}}]}
    ) == {"q"}


@st.composite
def dags(draw: st.DrawFn, min_size: int = 1) -> dict[str, set[str]]:
    size = draw(st.integers(min_size, 12))
    names = [f"r{i}" for i in range(size)]
    # Each node may require only nodes drawn before it: always acyclic.
    return {
        name: set(draw(st.lists(st.sampled_from(names[:i]), max_size=3))) if i else set()
        for i, name in enumerate(names)
    }


def as_template(graph: dict[str, set[str]]) -> dict[str, Any]:
    return hot(
        {
            name: {
                "type": NONE,
                "properties": {f"p{i}": {"get_resource": r} for i, r in enumerate(sorted(needs))},
            }
            for name, needs in graph.items()
        }
    )


@given(graph=dags())
def test_creation_order_puts_every_requirement_first_for_any_dag(
    graph: dict[str, set[str]],
) -> None:
    order = load_template(as_template(graph)).creation_order()
    assert sorted(order) == sorted(graph)
    for name, needs in graph.items():
        assert all(order.index(need) < order.index(name) for need in needs)


@given(graph=dags(min_size=2), data=st.data())
def test_any_cycle_is_rejected(graph: dict[str, set[str]], data: st.DataObject) -> None:
    names = sorted(graph)
    loop = data.draw(st.lists(st.sampled_from(names), min_size=2, unique=True))
    for needing, needed in zip(loop, loop[1:] + loop[:1], strict=True):
        graph[needing].add(needed)
    with pytest.raises(InvalidRequest, match=r"^Circular Dependency Found: (\w+)( -> \w+)+$"):
        load_template(as_template(graph))
    with pytest.raises(InvalidRequest, match=r"^Circular Dependency Found"):
        topological_order(graph)


def test_every_registered_type_is_found_by_name() -> None:
    assert all(resource_type(name) is rtype for name, rtype in RESOURCE_TYPES.items())
    with pytest.raises(InvalidRequest, match=r"^The Resource Type \(X\) could not be found\.$"):
        resource_type("X")


def test_the_dependency_graph_is_worked_out_once_and_handed_out_as_copies() -> None:
    raw = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "a": {"type": "OS::Heat::RandomString"},
            "b": {"type": "OS::Heat::RandomString", "depends_on": "a"},
        },
    }
    template = load_template(raw)

    assert load_template(raw) is template  # the same document is loaded once
    assert load_template(copy.deepcopy(raw)) is not template
    assert template.graph is template.graph
    order, users = template.creation_order(), template.required_by()
    order.append("x")
    users["a"].append("x")
    assert (template.creation_order(), template.required_by()) == (
        ["a", "b"],
        {"a": ["b"], "b": []},
    )


def test_an_external_id_is_a_string_or_a_get_param_of_a_declared_parameter() -> None:
    def with_id(external: Any, **params: Any) -> dict[str, Any]:
        return {
            "heat_template_version": "2016-10-14",
            "parameters": params,
            "resources": {"s": {"type": "OS::Heat::None", "external_id": external}},
        }

    loaded = load_template(with_id({"get_param": "sid"}, sid={"type": "string"}))
    assert loaded.resources["s"].external_id == {"get_param": "sid"}
    with pytest.raises(InvalidRequest, match=r'external_id\.get_param: parameter "nope"'):
        load_template(with_id({"get_param": "nope"}))
    with pytest.raises(InvalidRequest, match="external_id: must be a string or a get_param"):
        load_template(with_id(["x"]))
