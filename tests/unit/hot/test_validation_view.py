"""`POST /validate`'s answer as Heat gives it: heat-tempest-plugin's
test_template_validate expectations, on the pure view."""

from __future__ import annotations

from typing import Any

import yaml

from domain.hot.validation_view import validate_view

RANDOM = """
heat_template_version: 2014-10-16
description: the stack description
parameters:
  aparam:
    type: number
    default: 10
    description: the param description
resources:
  myres:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: aparam}
"""
PARENT = """
heat_template_version: 2014-10-16
description: the parent template
parameters:
  pparam:
    type: number
    default: 5
    description: the param description
resources:
  nres:
    type: mynested.yaml
    properties:
      aparam: {get_param: pparam}
"""
APARAM = {
    "Default": 10,
    "Description": "the param description",
    "Label": "aparam",
    "NoEcho": "false",
    "Type": "Number",
}
EMPTY_ENV: dict[str, Any] = {
    "event_sinks": [],
    "parameter_defaults": {},
    "parameters": {},
    "resource_registry": {"resources": {}},
}


def view(text: str, files: dict[str, str] | None = None, **options: Any) -> dict[str, Any]:
    env = options.pop("env", {})
    given = options.pop("given", env.get("parameters") or {})
    return validate_view(yaml.safe_load(text), files or {}, env, given=given, **options)


def test_a_plain_template_has_no_parameter_groups_and_echoes_event_sinks() -> None:
    assert view(RANDOM, show_nested=False) == {
        "Description": "the stack description",
        "Parameters": {"aparam": APARAM},
        "Environment": EMPTY_ENV,
    }


def test_a_value_the_environment_sets_is_shown_beside_the_default() -> None:
    env = {"parameters": {"aparam": 5}}
    shown = view(RANDOM, env=env, show_nested=False)
    assert shown["Parameters"]["aparam"] == {**APARAM, "Value": 5}
    assert shown["Environment"]["parameters"] == {"aparam": 5}


def test_groups_labels_hidden_and_constraints_as_heat_formats_them() -> None:
    data = yaml.safe_load(RANDOM)
    data["parameters"]["sparam"] = {
        "type": "string",
        "label": "A string",
        "hidden": True,
        "constraints": [
            {"length": {"min": 2, "max": 8}, "description": "two to eight"},
            {"allowed_values": ["ab", "cd"]},
        ],
    }
    data["parameter_groups"] = [
        {"label": "str_params", "description": "The string params", "parameters": ["sparam"]}
    ]
    shown = validate_view(data, {}, {}, given={}, show_nested=False)
    assert shown["ParameterGroups"] == data["parameter_groups"]
    assert shown["Parameters"]["sparam"] == {
        "Type": "String",
        "Description": "",
        "NoEcho": "true",
        "Label": "A string",
        "MinLength": 2,
        "MaxLength": 8,
        "AllowedValues": ["ab", "cd"],
        "ConstraintDescription": "two to eight",
    }


def test_template_resources_are_in_the_registry_and_nested_with_show_nested() -> None:
    nested = RANDOM.replace("OS::Heat::RandomString", "mynested2.yaml")
    files = {"mynested.yaml": nested, "mynested2.yaml": RANDOM}
    off = view(PARENT, files, show_nested=False)
    assert "NestedParameters" not in off
    assert off["Environment"]["resource_registry"] == {
        "mynested.yaml": "mynested.yaml",
        "resources": {},
    }
    on = view(PARENT, files, show_nested=True)
    assert on["NestedParameters"] == {
        "nres": {
            "Description": "the stack description",
            "Parameters": {"aparam": {**APARAM, "Value": 5}},  # from the parent's pparam
            "NestedParameters": {
                "myres": {
                    "Description": "the stack description",
                    "Parameters": {"aparam": APARAM},
                    "Type": "mynested2.yaml",
                }
            },
            "Type": "mynested.yaml",
        }
    }
