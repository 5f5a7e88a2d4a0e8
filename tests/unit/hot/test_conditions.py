"""Heat's conditions: what a template holds for given parameter values."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.template import Template, conditioned, load_template, resolve, resolve_parameters

NONE = "OS::Heat::None"


def template(**sections: Any) -> dict[str, Any]:
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {
            "env": {"type": "string", "default": "prod"},
            "zone": {"type": "string", "default": "a"},
        },
        **sections,
    }


ENV_CONDITIONS = {
    "prod": {"equals": [{"get_param": "env"}, "prod"]},
    "dev": {"not": "prod"},
    "prod_in_a": {"and": ["prod", {"equals": [{"get_param": "zone"}, "a"]}]},
    "anywhere": {"or": ["prod", "dev"]},
    "known_env": {"contains": [{"get_param": "env"}, ["prod", "dev"]]},
}


def seen(raw: dict[str, Any], **params: Any) -> Template:
    loaded = load_template(raw)
    return conditioned(loaded, resolve_parameters(loaded, params))


def test_a_false_condition_leaves_the_resource_out() -> None:
    raw = template(
        conditions=ENV_CONDITIONS,
        resources={
            "always": {"type": NONE},
            "big": {"type": NONE, "condition": "prod"},
            "small": {"type": NONE, "condition": "dev", "depends_on": ["big"]},
            "pinned": {"type": NONE, "condition": "prod_in_a"},
            "literal": {"type": NONE, "condition": False},
            "inline": {"type": NONE, "condition": {"not": "anywhere"}},
            "checked": {"type": NONE, "condition": "known_env"},
        },
    )
    assert sorted(seen(raw).resources) == ["always", "big", "checked", "pinned"]
    dev = seen(raw, env="dev", zone="b")
    assert sorted(dev.resources) == ["always", "checked", "small"]
    # depends_on a resource the condition left out is dropped (Heat allows it).
    assert dev.resources["small"].depends_on == ()
    assert sorted(seen(raw, env="qa").resources) == ["always", "small"]


def test_if_chooses_its_branch_and_may_drop_the_item() -> None:
    raw = template(
        conditions=ENV_CONDITIONS,
        resources={
            "big": {"type": NONE, "condition": "prod"},
            "t": {
                "type": "OS::Heat::TestResource",
                "properties": {
                    "value": {"if": ["prod", {"get_resource": "big"}, "none"]},
                    "action_wait_secs": {"create": {"if": ["dev", 2]}, "update": 1},
                },
            },
        },
        outputs={
            "size": {"value": {"if": [{"equals": [{"get_param": "env"}, "prod"]}, 8, 1]}},
            "big_id": {"value": {"get_resource": "big"}, "condition": "prod"},
            "zones": {"value": [{"if": ["dev", "b"]}, "a"]},
        },
    )
    prod = seen(raw)
    assert prod.resources["t"].properties == {
        "value": {"get_resource": "big"},
        "action_wait_secs": {"update": 1},
    }
    assert prod.dependencies()["t"] == {"big"}
    dev = seen(raw, env="dev")
    assert dev.resources["t"].properties["value"] == "none"
    assert dev.resources["t"].properties["action_wait_secs"] == {"create": 2, "update": 1}
    assert dev.dependencies()["t"] == frozenset()
    assert resolve(dev.outputs["size"].value, {}, {}) == 1
    assert dev.outputs["big_id"].value is None  # Heat: an output whose condition is false
    assert dev.outputs["zones"].value == ["b", "a"]
    assert prod.outputs["zones"].value == ["a"]


def test_a_template_without_conditions_is_kept_as_it_is() -> None:
    loaded = load_template(template(resources={"a": {"type": NONE}}))
    assert conditioned(loaded, resolve_parameters(loaded, {})) is loaded


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        (
            {"resources": {"a": {"type": NONE, "condition": "nope"}}},
            'resources.a.condition: Invalid condition "nope"',
        ),
        ({"conditions": {"c": "other"}}, 'The definition of condition "c" is invalid: other'),
        (
            {"conditions": {"c": {"get_resource": "a"}}},
            'conditions.c: The function "get_resource" is invalid in this context',
        ),
        (
            {"conditions": {"c": {"and": ["x"]}}},
            'The minimum number of condition arguments to "and" is 2.',
        ),
        (
            {"conditions": {"c": {"equals": [1]}}},
            'Arguments to "equals" must be of the form: [value_1, value_2]',
        ),
        (
            {"conditions": {"c": {"equals": [{"get_param": "nope"}, 1]}}},
            'parameter "nope" does not exist',
        ),
        ({"conditions": {"c": {"not": "d"}}}, 'conditions.c.not: Invalid condition "d"'),
        (
            {
                "outputs": {"o": {"value": {"if": ["c", 1]}}},
                "conditions": {"c": True},
                "heat_template_version": "2018-08-31",
            },
            'outputs.o.value.if: Arguments to "if" must be of the form',
        ),
        (
            {"outputs": {"o": {"value": {"if": ["zzz", 1, 2]}}}},
            'outputs.o.value.if: Invalid condition "zzz"',
        ),
        (
            {
                "heat_template_version": "2016-04-08",
                "resources": {"a": {"type": NONE, "condition": True}},
            },
            "resources.a.condition: unknown key",
        ),
    ],
)
def test_bad_conditions_are_refused_when_the_template_loads(
    sections: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        load_template(template(**sections))
    assert message in caught.value.message


def test_what_parameters_decide_is_refused_when_they_are_known() -> None:
    raw = template(
        conditions={"prod": {"equals": [{"get_param": "env"}, "prod"]}, "loop": {"not": "loop"}},
        resources={
            "big": {"type": NONE, "condition": "prod"},
            "user": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_resource": "big"}},
            },
        },
    )
    seen(raw)  # enabled: fine
    with pytest.raises(
        InvalidRequest, match=r'The specified reference "big" \(in resources.user\) is incorrect.'
    ):
        seen(raw, env="dev")
    looped = template(
        conditions={"loop": {"not": "loop"}}, resources={"a": {"type": NONE, "condition": "loop"}}
    )
    with pytest.raises(InvalidRequest, match='Circular definition for condition "loop"'):
        seen(looped)


def test_a_condition_read_from_a_parameter_must_be_a_boolean() -> None:
    raw = template(
        parameters={
            "flag": {"type": "boolean", "default": True},
            "word": {"type": "string", "default": "x"},
        },
        conditions={"on": {"get_param": "flag"}, "bad": {"get_param": "word"}},
        resources={"a": {"type": NONE, "condition": "on"}, "b": {"type": NONE, "condition": "bad"}},
    )
    with pytest.raises(InvalidRequest, match='The definition of condition "bad" is invalid: x'):
        seen(raw)
    raw = {**raw, "resources": {"a": raw["resources"]["a"]}}  # loads cache by identity
    assert list(seen(raw, flag=False).resources) == []
    assert list(seen(raw).resources) == ["a"]


def test_a_condition_may_ask_yaql_from_hot_2017_09_01() -> None:
    raw = template(
        heat_template_version="2017-09-01",
        parameters={"n": {"type": "number", "default": 3}},
        conditions={
            "many": {"yaql": {"expression": "$.data.n > 2", "data": {"n": {"get_param": "n"}}}}
        },
        resources={"a": {"type": NONE, "condition": "many"}},
    )
    assert list(seen(raw).resources) == ["a"]
    assert list(seen(raw, n=1).resources) == []
    with pytest.raises(InvalidRequest, match='The function "yaql" is invalid in this context'):
        load_template({**raw, "heat_template_version": "2016-10-14"})


def test_an_inline_nested_template_keeps_its_own_conditions() -> None:
    inner = {
        "heat_template_version": "2021-04-16",
        "parameters": {"size": {"type": "string", "default": "s"}},
        "conditions": {"big": {"equals": [{"get_param": "size"}, "l"]}},
        "resources": {"x": {"type": NONE, "condition": "big"}},
        "outputs": {"o": {"value": {"if": ["big", 1, 2]}}},
    }
    raw = template(
        conditions=ENV_CONDITIONS,
        resources={
            "nested": {
                "type": "OS::Heat::Stack",
                "properties": {
                    "template": inner,
                    "parameters": {"size": {"if": ["prod", "l", "s"]}},
                },
            }
        },
    )
    props = seen(raw).resources["nested"].properties
    assert props["parameters"] == {"size": "l"}  # the outer `if`, chosen by the outer
    assert props["template"] == inner  # the inner ones wait for the nested stack
    nested = seen(inner, size="l")
    assert list(nested.resources) == ["x"] and nested.outputs["o"].value == 1
