"""Template parameters: declarations, their HOT constraints, and the values a stack gets.

`parse_parameter()` reads one entry of a template's `parameters` section,
`check_parameter()` converts and checks one value against it, and `resolve_parameters()`
gives every parameter of a template its value. The plain-value checks here
(`plain_value()`, `mapping_at()`...) are shared with template loading: a json parameter
must be as plain as a template document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from domain.errors import InvalidRequest
from domain.hot.constraints import check_custom
from domain.stack.resource_types import parse_bool, parse_number

ParameterType = Literal["string", "number", "boolean", "json", "comma_delimited_list"]

#: Deepest nesting of maps and lists a template or a json parameter may have.
MAX_DEPTH: Final = 64
#: Most values (scalars, maps and lists) in one template; also stops YAML alias bombs.
MAX_VALUES: Final = 100_000
#: Parameters every stack has without declaring them.
PSEUDO_PARAMETERS: Final = frozenset({"OS::stack_name", "OS::stack_id", "OS::project_id"})

_PARAMETER_KEYS = frozenset(
    {"type", "default", "description", "hidden", "label", "constraints", "immutable", "tags"}
)


class ParameterDef(BaseModel):
    """A declared parameter and its HOT constraints."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: ParameterType
    default: Any = None
    description: str = ""
    hidden: bool = False
    allowed_values: tuple[Any, ...] = ()
    min_value: int | float | None = None
    max_value: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    allowed_pattern: str | None = None
    #: Heat's `custom_constraint`s: the pure ones (`ip_addr`) are checked with the
    #: value, the ones naming a cloud object (`nova.flavor`) by `cloud_lookups`.
    custom_constraints: tuple[str, ...] = ()


# --- plain values --------------------------------------------------------------------


def plain_value(value: Any, path: str) -> Any:
    """A plain JSON-like copy: string keys, finite numbers, dates as ISO strings.

    Raises `InvalidRequest` naming `path` past `MAX_DEPTH` levels or `MAX_VALUES` values.
    """
    return _normalize(value, path, 0, [MAX_VALUES])


def _normalize(value: Any, path: str, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise InvalidRequest(f"Invalid template: more than {MAX_VALUES} values")
    if depth > MAX_DEPTH:
        raise InvalidRequest(f"{path}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidRequest(f"{path or 'template'}: keys must be strings")
            result[key] = _normalize(item, _join(path, key), depth + 1, budget)
        return result
    if isinstance(value, list | tuple):
        return [_normalize(v, f"{path}[{i}]", depth + 1, budget) for i, v in enumerate(value)]
    if isinstance(value, date):
        return value.isoformat()
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        if parse_number(value) is None:
            raise InvalidRequest(f"{path}: must be a finite number within 64 bits")
        return value
    raise InvalidRequest(f"{path or 'template'}: unsupported value ({type(value).__name__})")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def mapping_at(value: Any, path: str) -> dict[str, Any]:
    """`value` as a mapping (None is empty); anything else is a 400 naming `path`."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"{path}: must be a mapping")
    return value


def text_at(value: Any, path: str) -> str:
    """`value` as a string (None is empty); anything else is a 400 naming `path`."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidRequest(f"{path}: must be a string")
    return value


def check_keys(spec: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    """A 400 naming the first key of `spec` that is not `allowed`."""
    for key in spec:
        if key not in allowed:
            raise InvalidRequest(f"{path}.{key}: unknown key")


def check_name(name: str, path: str) -> None:
    """A 400 unless `name` has 1 to 255 characters."""
    if not name or len(name) > 255:
        raise InvalidRequest(f"{path}: names must have 1 to 255 characters")


# --- parameters ----------------------------------------------------------------------


def parse_parameter(name: str, spec: Any) -> ParameterDef:
    """One entry of a template's `parameters` section, its default checked."""
    path = f"parameters.{name}"
    check_name(name, path)
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{path}: must be a mapping with a type")
    check_keys(spec, _PARAMETER_KEYS, path)
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _PARAMETER_CONVERTERS:
        raise InvalidRequest(f"{path}.type: must be one of {', '.join(_PARAMETER_CONVERTERS)}")
    hidden = parse_bool(spec.get("hidden", False))
    if hidden is None:
        raise InvalidRequest(f"{path}.hidden: must be a boolean")
    param = ParameterDef(
        name=name,
        type=kind,
        description=text_at(spec.get("description"), f"{path}.description"),
        hidden=hidden,
        **_constraints(spec.get("constraints"), f"{path}.constraints", kind),
    )
    if spec.get("default") is None:
        return param
    default = check_parameter(param, spec["default"], f"{path}.default")
    return param.model_copy(update={"default": default})


_CONSTRAINT_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "allowed_values": ("string", "number", "comma_delimited_list"),
    "range": ("number",),
    "length": ("string", "comma_delimited_list", "json"),
    "allowed_pattern": ("string",),
    "custom_constraint": ("string", "number", "boolean", "json", "comma_delimited_list"),
}


def _constraints(value: Any, path: str, kind: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise InvalidRequest(f"{path}: must be a list")
    found: dict[str, Any] = {}
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        names = [k for k in item if k != "description"] if isinstance(item, dict) else []
        if len(names) != 1 or names[0] not in _CONSTRAINT_TYPES:
            raise InvalidRequest(f"{where}: must be one of {', '.join(_CONSTRAINT_TYPES)}")
        name = names[0]
        if kind not in _CONSTRAINT_TYPES[name]:
            raise InvalidRequest(f"{where}.{name}: does not apply to a {kind} parameter")
        if name == "custom_constraint":
            found.setdefault("custom_constraints", ())
            found["custom_constraints"] += (text_at(item[name], f"{where}.{name}"),)
            continue
        found.update(_constraint(name, item[name], f"{where}.{name}", kind))
    return found


def _constraint(name: str, value: Any, path: str, kind: str) -> dict[str, Any]:
    if name == "allowed_values":
        if not isinstance(value, list) or not value:
            raise InvalidRequest(f"{path}: must be a non-empty list")
        numbers = [parse_number(v) for v in value] if kind == "number" else value
        if any(v is None for v in numbers):
            raise InvalidRequest(f"{path}: must be a list of numbers")
        return {"allowed_values": tuple(numbers)}
    if name in ("range", "length"):
        bounds = mapping_at(value, path)
        check_keys(bounds, frozenset({"min", "max"}), path)
        parsed = {k: parse_number(v) for k, v in bounds.items()}
        number, text = (int | float, "numeric") if name == "range" else (int, "integer")
        if not parsed or not all(isinstance(v, number) for v in parsed.values()):
            raise InvalidRequest(f"{path}: must have a {text} min, max or both")
        suffix = "value" if name == "range" else "length"
        return {f"{key}_{suffix}": v for key, v in parsed.items()}
    if name == "allowed_pattern":
        if not isinstance(value, str):
            raise InvalidRequest(f"{path}: must be a regular expression")
        try:
            re.compile(value)
        except (re.error, OverflowError, RecursionError) as exc:
            raise InvalidRequest(f"{path}: invalid pattern ({exc})") from None
        return {"allowed_pattern": value}
    raise AssertionError(f"unhandled constraint {name}")


def _string_parameter(value: Any) -> str | None:
    """Heat's `str(value)` of a scalar: a boolean default reads "True"/"False"."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    return str(value) if parse_number(value) is not None else None


def _list_parameter(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",")] if value.strip() else []
    if not isinstance(value, list):
        return None
    items = [_string_parameter(v) for v in value]
    return None if any(v is None for v in items) else [v for v in items if v is not None]


def _json_parameter(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict | list) else None


_PARAMETER_CONVERTERS: Final = {
    "string": _string_parameter,
    "number": parse_number,
    "boolean": parse_bool,
    "json": _json_parameter,
    "comma_delimited_list": _list_parameter,
}


def check_parameter(param: ParameterDef, value: Any, field: str) -> Any:
    """`value` converted to the parameter's type and checked against its constraints."""
    converted = _PARAMETER_CONVERTERS[param.type](value)
    if converted is None:
        raise InvalidRequest(f"{field}: must be a {param.type.replace('_', ' ')} value")
    converted = plain_value(converted, field)
    items = converted if param.type == "comma_delimited_list" else [converted]
    for item in items if param.allowed_values else ():
        if item not in param.allowed_values:
            allowed = ", ".join(str(v) for v in param.allowed_values)
            raise InvalidRequest(f'{field}: "{item}" is not an allowed value [{allowed}]')
    _check_bounds(converted, param.min_value, param.max_value, field, "")
    if param.min_length is not None or param.max_length is not None:
        _check_bounds(len(converted), param.min_length, param.max_length, field, "length ")
    if param.allowed_pattern is not None and not re.fullmatch(param.allowed_pattern, converted):
        raise InvalidRequest(
            f'{field}: "{converted}" does not match pattern "{param.allowed_pattern}"'
        )
    for constraint in param.custom_constraints:
        for item in items:
            problem = check_custom(constraint, item) if isinstance(item, str) else None
            if problem is not None:
                raise InvalidRequest(f"{field}: Error validating value '{item}': {problem}")
    return converted


def _check_bounds(value: Any, low: float | None, high: float | None, field: str, what: str) -> None:
    if (low is not None and value < low) or (high is not None and value > high):
        raise InvalidRequest(f"{field}: {what}{value} is out of range (min: {low}, max: {high})")


class DeclaresParameters(Protocol):
    """What `resolve_parameters()` reads of a template (`domain.hot.template.Template`)."""

    @property
    def parameters(self) -> Mapping[str, ParameterDef]:
        """Declared parameters by name."""


def resolve_parameters(
    template: DeclaresParameters,
    given: Mapping[str, Any],
    *,
    pseudo: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every parameter's value: given ones converted and checked, others their default.

    Args:
        template: the template declaring the parameters.
        given: the user's values by name.
        pseudo: values of `PSEUDO_PARAMETERS` (`OS::stack_name`...) the stack knows.
    """
    for name in given:
        if name not in template.parameters:
            raise InvalidRequest(f"The Parameter ({name}) was not declared in the template.")
    values: dict[str, Any] = {}
    for name, param in template.parameters.items():
        value = given.get(name)
        if value is None:
            if param.default is None:
                raise InvalidRequest(f"The Parameter ({name}) was not provided.")
            value = param.default
        values[name] = check_parameter(param, value, f"parameters.{name}")
    values.update({k: v for k, v in (pseudo or {}).items() if k in PSEUDO_PARAMETERS})
    return values
