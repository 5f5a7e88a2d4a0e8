"""Heat's CloudFormation template format (`AWSTemplateFormatVersion: 2010-09-09`,
`HeatTemplateFormatVersion: 2012-12-12`), read as the HOT 2013-05-23 template it means.

Heat reads a CFN template with its own sections and keys (`heat/engine/cfn/template.py`):
`Parameters` (`Type: String`, `Default`, `NoEcho`, `AllowedValues`, …), `Mappings`,
`Resources` (`Type`, `Properties`, `Metadata`, `DependsOn`, `DeletionPolicy`,
`UpdatePolicy`), `Outputs` (`Value`, `Description`), and the functions `Ref`,
`Fn::GetAtt`, `Fn::Join`, `Fn::Select`, `Fn::Split`, `Fn::Replace`, `Fn::Base64`,
`Fn::FindInMap` and `Fn::MemberListToMap`. HOT 2013-05-23 has every one of those but
`Fn::FindInMap`, which reads as two `Fn::Select`s of its map, so the translation is
exact; the pseudo parameters become Heat's own (`AWS::StackName` is `OS::stack_name`;
`AWS::Region` is Heat's fixed `ap-southeast-1`). The stack keeps the translated
template (`GET …/template` shows it as HOT). Not there yet: `Conditions` (and
`Fn::If`, `Fn::Equals`, …), `Fn::GetAZs`, `Fn::ResourceFacade` (each a 400 saying so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.errors import InvalidRequest

#: The version keys and the one value Heat accepts for each.
VERSIONS: Final = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "HeatTemplateFormatVersion": "2012-12-12",
}
_SECTIONS: Final = frozenset(
    {*VERSIONS, "Description", "Mappings", "Parameters", "Resources", "Outputs"}
)
_RESOURCE_KEYS: Final = {
    "Type": "type",
    "Properties": "properties",
    "Metadata": "metadata",
    "DependsOn": "depends_on",
    "DeletionPolicy": "deletion_policy",
    "UpdatePolicy": "update_policy",
}
_PARAMETER_TYPES: Final = {
    "String": "string",
    "Number": "number",
    "CommaDelimitedList": "comma_delimited_list",
    "Json": "json",
    "Boolean": "boolean",
}
_PARAMETER_KEYS: Final = frozenset(
    {
        "Type",
        "Default",
        "NoEcho",
        "AllowedValues",
        "AllowedPattern",
        "MaxLength",
        "MinLength",
        "MaxValue",
        "MinValue",
        "Description",
        "ConstraintDescription",
        "Label",
    }
)
#: CFN pseudo parameter → what Warden reads for it.
PSEUDO: Final[dict[str, Any]] = {
    "AWS::StackName": {"get_param": "OS::stack_name"},
    "AWS::StackId": {"get_param": "OS::stack_id"},
    "AWS::Region": "ap-southeast-1",
}


def is_cfn(data: Mapping[str, Any]) -> bool:
    """Whether a parsed template is in the CFN format."""
    return any(key in data for key in VERSIONS)


def hot_of_cfn(data: Mapping[str, Any]) -> dict[str, Any]:
    """The HOT 2013-05-23 template a CFN template means; Heat's 400 for what it refuses."""
    _check_version(data)
    for key in data:
        if key == "Conditions":
            raise InvalidRequest("Conditions in CFN templates are not supported by Warden yet")
        if key not in _SECTIONS:
            raise InvalidRequest(f"The template section is invalid: {key}")
    mappings = _section(data, "Mappings")
    hot: dict[str, Any] = {"heat_template_version": "2013-05-23"}
    if data.get("Description") is not None:
        hot["description"] = data["Description"]
    params = _section(data, "Parameters")
    hot["parameters"] = {name: _parameter(name, spec) for name, spec in params.items()}
    hot["resources"] = {
        name: _resource(name, spec, mappings) for name, spec in _section(data, "Resources").items()
    }
    hot["outputs"] = {
        name: _output(name, spec, mappings) for name, spec in _section(data, "Outputs").items()
    }
    return hot


def _check_version(data: Mapping[str, Any]) -> None:
    for key, wanted in VERSIONS.items():
        if key in data and str(data[key]) != wanted:
            raise InvalidRequest(
                f'The template version is invalid: "{key}: {data[key]}". '
                f'Should be one of: "{key}: {wanted}"'
            )


def _section(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"{name}: must be a mapping")
    return value


def _parameter(name: str, spec: Any) -> dict[str, Any]:
    where = f"Parameters.{name}"
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{where}: must be a mapping with a Type")
    for key in spec:
        if key not in _PARAMETER_KEYS:
            raise InvalidRequest(f"Invalid key '{key}' for parameter ({name})")
    kind = spec.get("Type")
    if kind not in _PARAMETER_TYPES:
        raise InvalidRequest(
            f"{where}.Type: must be one of {', '.join(_PARAMETER_TYPES)} (not {kind!r})"
        )
    hot: dict[str, Any] = {"type": _PARAMETER_TYPES[kind]}
    for cfn, key in (("Default", "default"), ("Description", "description"), ("Label", "label")):
        if cfn in spec:
            hot[key] = spec[cfn]
    if str(spec.get("NoEcho", "false")).lower() == "true":
        hot["hidden"] = True
    described = (
        {"description": spec["ConstraintDescription"]} if "ConstraintDescription" in spec else {}
    )
    constraints: list[dict[str, Any]] = []
    if "AllowedValues" in spec:
        constraints.append({"allowed_values": spec["AllowedValues"], **described})
    if "AllowedPattern" in spec:
        constraints.append({"allowed_pattern": spec["AllowedPattern"], **described})
    for low, high, key in (("MinLength", "MaxLength", "length"), ("MinValue", "MaxValue", "range")):
        bounds = {k: spec[c] for c, k in ((low, "min"), (high, "max")) if c in spec}
        if bounds:
            constraints.append({key: bounds, **described})
    if constraints:
        hot["constraints"] = constraints
    return hot


def _resource(name: str, spec: Any, mappings: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise InvalidRequest(f"Resources.{name}: must be a mapping with a Type")
    hot: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "Description":
            continue  # Heat takes it and keeps it nowhere
        if key not in _RESOURCE_KEYS:
            raise InvalidRequest(f'"{key}" is not a valid keyword inside a resource definition')
        hot[_RESOURCE_KEYS[key]] = _calls(value, mappings, f"Resources.{name}.{key}")
    return hot


def _output(name: str, spec: Any, mappings: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise InvalidRequest(f"Outputs.{name}: must be a mapping with a Value")
    hot: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "Value":
            hot["value"] = _calls(value, mappings, f"Outputs.{name}.Value")
        elif key == "Description":
            hot["description"] = value
        else:
            raise InvalidRequest(f'"{key}" is not a valid keyword inside an output definition')
    return hot


def _calls(value: Any, mappings: Mapping[str, Any], where: str) -> Any:
    """`value` with CFN-only calls (pseudo parameters, `Fn::FindInMap`) made HOT's."""
    if isinstance(value, list):
        return [_calls(v, mappings, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        fn, args = next(iter(value.items()))
        if fn == "Ref" and isinstance(args, str) and args in PSEUDO:
            return PSEUDO[args]
        if fn == "Fn::FindInMap":
            return _find_in_map(_calls(args, mappings, where), mappings, f"{where}.{fn}")
    return {k: _calls(v, mappings, f"{where}.{k}") for k, v in value.items()}


def _find_in_map(args: Any, mappings: Mapping[str, Any], where: str) -> Any:
    """Heat's `Fn::FindInMap: [map, key, value]`: the entry itself when the keys are
    plain, else the `Fn::Select`s that find it once the keys are known."""
    if not isinstance(args, list) or len(args) != 3:
        raise InvalidRequest(
            f'{where}: Arguments to "Fn::FindInMap" must be of the form [map, key, value]'
        )
    name, key, item = args
    if not isinstance(name, str) or name not in mappings:
        raise InvalidRequest(f"{where}: Mapping {name!r} is not in Mappings")
    table = mappings[name]
    if isinstance(key, str) and isinstance(item, str):
        try:
            return table[key][item]
        except (KeyError, TypeError):
            raise InvalidRequest(f"{where}: {name} has no [{key}][{item}]") from None
    return {"Fn::Select": [item, {"Fn::Select": [key, table]}]}
