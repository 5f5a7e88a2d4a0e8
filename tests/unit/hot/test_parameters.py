"""Template parameters: conversion, constraints, declarations and pseudo parameters."""

from __future__ import annotations

import re
from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.parameters import resolve_parameters
from domain.hot.template import Template, load_template
from tests.unit.hot.test_template import hot

PARAMETERS = {
    "flavor": {"type": "string", "default": "m1.small"},
    "count": {"type": "number"},
    "debug": {"type": "boolean", "default": False},
    "zones": {"type": "comma_delimited_list", "default": "az1,az2"},
    "extra": {"type": "json", "default": {"k": [1, 2]}},
}


def params_template(**extra: Any) -> Template:
    return load_template(hot(parameters={**PARAMETERS, **extra}))


def test_resolve_parameters_uses_defaults_and_overrides_them() -> None:
    values = resolve_parameters(params_template(), {"count": 2, "flavor": "m1.big"})
    assert values == {
        "flavor": "m1.big",
        "count": 2,
        "debug": False,
        "zones": ["az1", "az2"],
        "extra": {"k": [1, 2]},
    }


def test_resolve_parameters_requires_a_value_and_a_declaration() -> None:
    with pytest.raises(InvalidRequest, match=r"^The Parameter \(count\) was not provided\.$"):
        resolve_parameters(params_template(), {})
    with pytest.raises(
        InvalidRequest, match=r"^The Parameter \(size\) was not declared in the template\.$"
    ):
        resolve_parameters(params_template(), {"count": 1, "size": 3})


CONVERSION_CASES: list[tuple[Any, ...]] = [
    ("count", "3", 3),
    ("count", "3.5", 3.5),
    ("debug", "Yes", True),
    ("debug", "0", False),
    ("zones", " a, b ", ["a", "b"]),
    ("extra", '{"a": [1]}', {"a": [1]}),
    ("flavor", 7, "7"),
]


def test_resolve_parameters_converts_to_the_declared_type() -> None:
    for name, value, expected in CONVERSION_CASES:
        assert resolve_parameters(params_template(), {"count": 1, name: value})[name] == expected


WRONG_TYPE_CASES: list[tuple[Any, ...]] = [
    ("count", "three", "parameters.count: must be a number value"),
    ("debug", "maybe", "parameters.debug: must be a boolean value"),
    ("extra", "[1", "parameters.extra: must be a json value"),
    ("zones", [["a"]], "parameters.zones: must be a comma delimited list value"),
]


def test_resolve_parameters_rejects_values_of_another_type() -> None:
    for name, value, message in WRONG_TYPE_CASES:
        with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}$"):
            resolve_parameters(params_template(), {"count": 1, name: value})


CONSTRAINED = {
    "size": {"type": "number", "constraints": [{"range": {"min": 1, "max": 10}}]},
    "tier": {"type": "string", "constraints": [{"allowed_values": ["web", "db"]}]},
    "code": {
        "type": "string",
        "constraints": [{"length": {"min": 2, "max": 4}}, {"allowed_pattern": "[a-z]+"}],
    },
}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"size": 11}, "parameters.size: 11 is out of range (min: 1, max: 10)"),
        ({"tier": "cache"}, 'parameters.tier: "cache" is not an allowed value [web, db]'),
        ({"code": "abcde"}, "parameters.code: length 5 is out of range (min: 2, max: 4)"),
        ({"code": "AB"}, 'parameters.code: "AB" does not match pattern "[a-z]+"'),
    ],
)
def test_resolve_parameters_checks_constraints(given: dict[str, Any], message: str) -> None:
    template = load_template(hot(parameters=CONSTRAINED))
    values = {"size": 5, "tier": "web", "code": "ab", **given}
    with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}$"):
        resolve_parameters(template, values)


DECLARATION_CASES: list[tuple[Any, ...]] = [
    (
        {"type": "number", "default": 0, "constraints": [{"range": {"min": 1}}]},
        "parameters.p.default: 0 is out of range (min: 1, max: None)",
    ),
    (
        {"type": "string", "constraints": [{"range": {"min": 1}}]},
        "parameters.p.constraints[0].range: does not apply to a string parameter",
    ),
    (
        {"type": "string", "constraints": [{"allowed_pattern": "("}]},
        "parameters.p.constraints[0].allowed_pattern: invalid pattern",
    ),
    ({"type": "text"}, "parameters.p.type: must be one of string, number, boolean"),
]


def test_load_rejects_bad_parameter_declarations() -> None:
    for parameter, message in DECLARATION_CASES:
        with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}"):
            load_template(hot(parameters={"p": parameter}))


def test_resolve_parameters_adds_known_pseudo_parameters() -> None:
    values = resolve_parameters(
        params_template(), {"count": 1}, pseudo={"OS::stack_name": "web", "other": "x"}
    )
    assert values["OS::stack_name"] == "web"
    assert "other" not in values
