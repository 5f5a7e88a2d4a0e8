"""`POST /validate`'s answer, field for field as Heat's `validate_template` gives it.

`Description`, `Parameters` (each as `heat.engine.api.format_validate_parameter` shows
it: CFN type names, `Label` falling back to the name, `Value` for a value the request
gives, the constraints as `AllowedValues`, `MinLength`, …), `ParameterGroups` only when
the template declares some, `NestedParameters` of each template resource with
`show_nested`, and the `Environment` as Heat echoes it (its registry listing the files
the template's resources name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.hot.environment import file_template, template_resource_files
from domain.hot.parameters import ParameterDef, mapping_at, parse_parameter

#: HOT parameter types as the answer names them (CFN style).
VALIDATE_TYPES: Final = {
    "string": "String",
    "number": "Number",
    "comma_delimited_list": "CommaDelimitedList",
    "json": "Json",
    "boolean": "Boolean",
}
#: Where a template resource's description comes from when its template has none.
NO_DESCRIPTION: Final = "No description"
#: Heat's limit on how deep `show_nested` looks (its `max_nested_stack_depth`).
MAX_NESTED_DEPTH: Final = 5


def validate_view(
    template: Mapping[str, Any],
    files: Mapping[str, Any],
    env: Mapping[str, Any],
    *,
    given: Mapping[str, Any],
    show_nested: bool,
) -> dict[str, Any]:
    """Heat's answer for a template that passed every check; `given` are the parameter
    values the request sets (its `parameters` and the environment's)."""
    answer: dict[str, Any] = {
        "Description": template.get("description") or NO_DESCRIPTION,
        "Parameters": parameters_view(template, given),
    }
    groups = template.get("parameter_groups")
    if groups:
        answer["ParameterGroups"] = groups
    if show_nested:
        answer.update(_nested(template, files, env, given, depth=1))
    registry = dict(env.get("resource_registry") or {})
    registry.update({f: f for f in template_resource_files(template, files, env).values()})
    answer["Environment"] = {
        "parameters": dict(env.get("parameters") or {}),
        "parameter_defaults": dict(env.get("parameter_defaults") or {}),
        "resource_registry": {"resources": {}, **registry},
        "event_sinks": list(env.get("event_sinks") or []),
    }
    return answer


def parameters_view(template: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Each declared parameter as Heat's validate shows it."""
    declared = mapping_at(template.get("parameters"), "parameters")
    return {
        name: parameter_view(parse_parameter(name, spec), spec, given)
        for name, spec in declared.items()
    }


def parameter_view(
    param: ParameterDef, spec: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, Any]:
    """One parameter (Heat's `format_validate_parameter`)."""
    shown: dict[str, Any] = {
        "Type": VALIDATE_TYPES[param.type],
        "Description": param.description,
        "NoEcho": "true" if param.hidden else "false",
        "Label": spec.get("label") or param.name,
    }
    if param.default is not None:
        shown["Default"] = param.default
    if given.get(param.name) is not None:
        shown["Value"] = given[param.name]
    if spec.get("tags"):
        shown["Tags"] = spec["tags"]
    shown.update(_constraints(spec.get("constraints") or []))
    return shown


def _constraints(constraints: list[Any]) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    descriptions: list[str] = []
    for item in constraints:
        if not isinstance(item, Mapping):
            continue
        if "allowed_values" in item:
            shown["AllowedValues"] = list(item["allowed_values"])
        if "allowed_pattern" in item:
            shown["AllowedPattern"] = item["allowed_pattern"]
        if "custom_constraint" in item:
            shown["CustomConstraint"] = item["custom_constraint"]
        for key, low, high in (
            ("length", "MinLength", "MaxLength"),
            ("range", "MinValue", "MaxValue"),
        ):
            bounds = item.get(key)
            if isinstance(bounds, Mapping):
                if bounds.get("min") is not None:
                    shown[low] = bounds["min"]
                if bounds.get("max") is not None:
                    shown[high] = bounds["max"]
        if item.get("description"):
            descriptions.append(str(item["description"]))
    if descriptions:
        shown["ConstraintDescription"] = " ".join(descriptions)
    return shown


def _nested(
    template: Mapping[str, Any],
    files: Mapping[str, Any],
    env: Mapping[str, Any],
    given: Mapping[str, Any],
    depth: int,
) -> dict[str, Any]:
    """`NestedParameters`: each template resource's parameters, with the values the
    resource's properties give them (Heat's `get_nested_parameters`)."""
    if depth > MAX_NESTED_DEPTH:
        return {}
    resources = mapping_at(template.get("resources"), "resources")
    values = _effective(template, given)
    nested: dict[str, Any] = {}
    for name, file_name in template_resource_files(template, files, env).items():
        inner = file_template(files, file_name)
        properties = resources[name].get("properties") or {}
        passed = {
            key: resolved
            for key, value in properties.items()
            if (resolved := _static(value, values)) is not None
        }
        view: dict[str, Any] = {
            "Description": inner.get("description") or NO_DESCRIPTION,
            "Parameters": parameters_view(inner, passed),
            "Type": file_name,
        }
        view.update(_nested(inner, files, env, passed, depth + 1))
        nested[name] = view
    return {"NestedParameters": nested} if nested else {}


def _effective(template: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Each parameter's value: the one given, else its default."""
    declared = mapping_at(template.get("parameters"), "parameters")
    values = {}
    for name, spec in declared.items():
        value = given.get(name)
        if value is None and isinstance(spec, Mapping):
            value = spec.get("default")
        values[name] = value
    return values


def _static(value: Any, parameters: Mapping[str, Any]) -> Any:
    """A property's value where it is known before anything is created: a plain value,
    or a `get_param` of a top-level parameter; None otherwise."""
    if isinstance(value, Mapping):
        if set(value) == {"get_param"} and isinstance(value["get_param"], str):
            return parameters.get(value["get_param"])
        return None
    return value
