"""Heat templates: loading and validation, parameters, intrinsic functions, the graph.

`load_template()` is the one entry point for user input: it accepts a mapping or a
YAML/JSON string and either returns a frozen `Template` or raises `InvalidRequest`
naming the offending path (`resources.web.properties.flavor: property is required`).
Properties stay raw (intrinsics unresolved) in the template; `resolve_properties()`
evaluates them once the resources they reference exist, and `static_properties()`
evaluates only what does not depend on physical resources, for update planning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import date
from graphlib import CycleError, TopologicalSorter
from typing import Any, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest
from domain.resource_types import (
    AUTO_SCALING_GROUP,
    RESOURCE_TYPES,
    STACK,
    ResourceType,
    check_properties,
    parse_bool,
    parse_number,
    resource_type,
)

ParameterType = Literal["string", "number", "boolean", "json", "comma_delimited_list"]

MAX_RESOURCES: Final = 1_000
#: Deepest nesting of maps and lists a template or a json parameter may have.
MAX_DEPTH: Final = 64
#: Most values (scalars, maps and lists) in one template; also stops YAML alias bombs.
MAX_VALUES: Final = 100_000
#: Heat's default `max_nested_stack_depth`, for inline OS::Heat::Stack templates.
MAX_NESTING: Final = 5
#: Parameters every stack has without declaring them.
PSEUDO_PARAMETERS: Final = frozenset({"OS::stack_name", "OS::stack_id", "OS::project_id"})
INTRINSICS: Final = frozenset({"get_param", "get_resource", "get_attr", "list_join", "str_replace"})

_TOP_KEYS = frozenset(
    {
        "heat_template_version",
        "description",
        "parameters",
        "parameter_groups",
        "resources",
        "outputs",
    }
)
_PARAMETER_KEYS = frozenset(
    {"type", "default", "description", "hidden", "label", "constraints", "immutable", "tags"}
)
_RESOURCE_KEYS = frozenset(
    {"type", "properties", "depends_on", "metadata", "deletion_policy", "update_policy"}
)
_DELETION_POLICIES = ("Delete", "Retain", "Snapshot")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ParameterDef(_Frozen):
    """A declared parameter and its HOT constraints."""

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


class ResourceDef(_Frozen):
    """A resource as written: properties are raw, intrinsics unresolved."""

    name: str
    type: str
    properties: dict[str, Any] = Field(default_factory=dict)
    #: Explicit `depends_on` only; `Template.dependencies()` adds the implicit ones.
    depends_on: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    deletion_policy: str = "Delete"
    update_policy: dict[str, Any] = Field(default_factory=dict)


class OutputDef(_Frozen):
    """A stack output; `value` is raw."""

    name: str
    value: Any = None
    description: str = ""


class ResolvedResource(_Frozen):
    """What intrinsics can read of a resource that exists."""

    #: What `get_resource` returns: the physical id, or a RandomString's value.
    reference: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class Template(_Frozen):
    """A validated template."""

    version: str
    description: str = ""
    parameters: dict[str, ParameterDef] = Field(default_factory=dict)
    resources: dict[str, ResourceDef] = Field(default_factory=dict)
    outputs: dict[str, OutputDef] = Field(default_factory=dict)

    def dependencies(self) -> dict[str, frozenset[str]]:
        """Every resource → the resources it requires (depends_on and references)."""
        return {
            name: frozenset(res.depends_on).union(*property_references(res).values())
            & frozenset(self.resources)
            for name, res in self.resources.items()
        }

    def required_by(self) -> dict[str, list[str]]:
        """Every resource → the resources that require it, by name."""
        result: dict[str, list[str]] = {name: [] for name in self.resources}
        for name, requires in self.dependencies().items():
            for required in requires:
                result[required].append(name)
        return {name: sorted(users) for name, users in result.items()}

    def creation_order(self) -> list[str]:
        """Resources with what each requires first; see `topological_order()`."""
        return topological_order(self.dependencies())


def topological_order(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Nodes of `graph` (node → what it requires), requirements first.

    Deterministic: in waves of nodes whose requirements are all met, each wave by name.
    A cycle is a 400 naming it: `Circular Dependency Found: a -> b -> a`.
    """
    sorter = TopologicalSorter({node: sorted(graph[node]) for node in sorted(graph)})
    try:
        sorter.prepare()
    except CycleError as exc:
        # graphlib lists the cycle from a node to what requires it; Heat reads the other way.
        cycle = " -> ".join(reversed(exc.args[1]))
        raise InvalidRequest(f"Circular Dependency Found: {cycle}") from None
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order.extend(ready)
        sorter.done(*ready)
    return order


# --- loading -------------------------------------------------------------------------


def load_template(raw: Mapping[str, Any] | str) -> Template:
    """Parse and validate a template; every problem is an `InvalidRequest` naming its path."""
    return _load(raw, nesting=0)


def _load(raw: Any, nesting: int) -> Template:
    if nesting > MAX_NESTING:
        raise InvalidRequest(f"Invalid template: stacks nested deeper than {MAX_NESTING}")
    data = _normalize(_parse_text(raw) if isinstance(raw, str) else raw, "", 0, [MAX_VALUES])
    if not isinstance(data, dict):
        raise InvalidRequest("Invalid template: the template must be a mapping")
    for key in data:
        if key == "conditions":
            raise InvalidRequest("conditions: conditions are not supported")
        if key not in _TOP_KEYS:
            raise InvalidRequest(f"{key}: unknown top-level key")
    resources = _mapping(data.get("resources"), "resources")
    if len(resources) > MAX_RESOURCES:
        raise InvalidRequest(f"resources: more than {MAX_RESOURCES} resources")
    template = Template(
        version=_version(data.get("heat_template_version")),
        description=_text(data.get("description"), "description"),
        parameters={
            name: _parameter(name, spec)
            for name, spec in _mapping(data.get("parameters"), "parameters").items()
        },
        resources={name: _resource(name, spec, nesting) for name, spec in resources.items()},
        outputs={
            name: _output(name, spec)
            for name, spec in _mapping(data.get("outputs"), "outputs").items()
        },
    )
    _check_references(template)
    template.creation_order()
    return template


def _parse_text(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        where = f" (line {exc.problem_mark.line + 1})" if exc.problem_mark else ""
        raise InvalidRequest(f"Invalid template: {exc.problem or 'bad YAML'}{where}") from None
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidRequest(f"Invalid template: {str(exc)[:200]}") from None


def _normalize(value: Any, path: str, depth: int, budget: list[int]) -> Any:
    """A plain JSON-like copy: string keys, finite numbers, dates as ISO strings."""
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


def _mapping(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"{path}: must be a mapping")
    return value


def _text(value: Any, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidRequest(f"{path}: must be a string")
    return value


def _check_keys(spec: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    for key in spec:
        if key not in allowed:
            raise InvalidRequest(f"{path}.{key}: unknown key")


def _version(value: Any) -> str:
    if value is None or value == "":
        raise InvalidRequest("heat_template_version: required")
    if isinstance(value, bool) or not isinstance(value, str | int | float) or len(str(value)) > 64:
        raise InvalidRequest("heat_template_version: must be a version string or a date")
    return str(value)


def _name(name: str, path: str) -> None:
    if not name or len(name) > 255:
        raise InvalidRequest(f"{path}: names must have 1 to 255 characters")


def _resource(name: str, spec: Any, nesting: int) -> ResourceDef:
    path = f"resources.{name}"
    _name(name, path)
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{path}: must be a mapping with a type")
    _check_keys(spec, _RESOURCE_KEYS, path)
    kind = spec.get("type")
    if not isinstance(kind, str) or not kind:
        raise InvalidRequest(f"{path}.type: required, a resource type name")
    try:
        rtype = resource_type(kind)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{path}.type: {exc.message}") from None
    properties = _mapping(spec.get("properties"), f"{path}.properties")
    _check_properties(rtype, properties, f"{path}.properties", nesting)
    policy = _text(spec.get("deletion_policy"), f"{path}.deletion_policy") or "Delete"
    if policy.capitalize() not in _DELETION_POLICIES:
        raise InvalidRequest(f"{path}.deletion_policy: must be one of Delete, Retain, Snapshot")
    return ResourceDef(
        name=name,
        type=kind,
        properties=properties,
        depends_on=_depends_on(spec.get("depends_on"), f"{path}.depends_on"),
        metadata=_mapping(spec.get("metadata"), f"{path}.metadata"),
        deletion_policy=policy.capitalize(),
        update_policy=_mapping(spec.get("update_policy"), f"{path}.update_policy"),
    )


def _depends_on(value: Any, path: str) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if value is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InvalidRequest(f"{path}: must be a resource name or a list of them")
    return tuple(dict.fromkeys(names))


def _check_properties(rtype: ResourceType, props: dict[str, Any], path: str, nesting: int) -> None:
    """Schema checks of literal values; intrinsics wait until they are resolved."""
    computed = {n for n, v in props.items() if has_intrinsic(v) or n in rtype.nested_properties}
    check_properties(rtype, props, path, computed=computed)
    for name in rtype.nested_properties:
        value = props.get(name)
        if value is None or intrinsic(value) is not None:
            continue
        if rtype.name == STACK:
            _check_inline_template(value, f"{path}.{name}", nesting)
        elif rtype.name == AUTO_SCALING_GROUP:
            _check_group_member(value, f"{path}.{name}", nesting)


def _check_inline_template(value: Any, path: str, nesting: int) -> None:
    if not isinstance(value, dict | str):
        raise InvalidRequest(f"{path}: must be a template (a mapping or a YAML string)")
    try:
        _load(value, nesting + 1)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{path}: {exc.message}") from None


def _check_group_member(value: Any, path: str, nesting: int) -> None:
    if not isinstance(value, dict):
        raise InvalidRequest(f"{path}: must be a resource definition {{type, properties}}")
    _check_keys(value, frozenset({"type", "properties", "metadata"}), path)
    kind = value.get("type")
    if not isinstance(kind, str):
        raise InvalidRequest(f"{path}.type: required, a resource type name")
    try:
        inner = resource_type(kind)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{path}.type: {exc.message}") from None
    properties = _mapping(value.get("properties"), f"{path}.properties")
    _check_properties(inner, properties, f"{path}.properties", nesting)
    _mapping(value.get("metadata"), f"{path}.metadata")


def _output(name: str, spec: Any) -> OutputDef:
    path = f"outputs.{name}"
    _name(name, path)
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{path}: must be a mapping with a value")
    _check_keys(spec, frozenset({"value", "description"}), path)
    description = _text(spec.get("description"), f"{path}.description")
    return OutputDef(name=name, value=spec.get("value"), description=description)


# --- parameters ----------------------------------------------------------------------


def _parameter(name: str, spec: Any) -> ParameterDef:
    path = f"parameters.{name}"
    _name(name, path)
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{path}: must be a mapping with a type")
    _check_keys(spec, _PARAMETER_KEYS, path)
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _PARAMETER_CONVERTERS:
        raise InvalidRequest(f"{path}.type: must be one of {', '.join(_PARAMETER_CONVERTERS)}")
    hidden = parse_bool(spec.get("hidden", False))
    if hidden is None:
        raise InvalidRequest(f"{path}.hidden: must be a boolean")
    param = ParameterDef(
        name=name,
        type=kind,
        description=_text(spec.get("description"), f"{path}.description"),
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
        bounds = _mapping(value, path)
        _check_keys(bounds, frozenset({"min", "max"}), path)
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
    return {}  # custom_constraint names a backend check (nova.flavor...): not enforced


def _string_parameter(value: Any) -> str | None:
    if isinstance(value, str):
        return value
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
    converted = _normalize(converted, field, 0, [MAX_VALUES])
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
    return converted


def _check_bounds(value: Any, low: float | None, high: float | None, field: str, what: str) -> None:
    if (low is not None and value < low) or (high is not None and value > high):
        raise InvalidRequest(f"{field}: {what}{value} is out of range (min: {low}, max: {high})")


def resolve_parameters(
    template: Template, given: Mapping[str, Any], *, pseudo: Mapping[str, Any] | None = None
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


# --- intrinsic functions -------------------------------------------------------------


def intrinsic(value: Any) -> tuple[str, Any] | None:
    """`(function, arguments)` if `value` is an intrinsic function call, else None."""
    if isinstance(value, dict) and len(value) == 1:
        name, args = next(iter(value.items()))
        if name in INTRINSICS:
            return name, args
    return None


def has_intrinsic(value: Any) -> bool:
    """Whether an intrinsic function call appears anywhere in `value`."""
    if intrinsic(value) is not None:
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(has_intrinsic(v) for v in items)


def references(value: Any) -> set[str]:
    """Names of the resources `get_resource` and `get_attr` read anywhere in `value`."""
    found: set[str] = set()
    call = intrinsic(value)
    if call is not None:
        name, args = call
        target = args if name == "get_resource" else None
        if name == "get_attr" and isinstance(args, list) and args:
            target = args[0]
        if isinstance(target, str):
            found.add(target)
        if isinstance(args, dict | list):
            found |= references(args)
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            found |= references(item)
    return found


def property_references(resource: ResourceDef) -> dict[str, set[str]]:
    """Property name → resources it reads (`"metadata"` too, when it reads any).

    Intrinsics inside an inner template (OS::Heat::Stack `template`, a scaling group's
    `resource`) belong to that template and are not references of this one.
    """
    found = {name: references(value) for name, value in _outer_properties(resource).items()}
    metadata = references(resource.metadata)
    return {**found, "metadata": metadata} if metadata else found


def _outer_properties(resource: ResourceDef) -> dict[str, Any]:
    rtype = RESOURCE_TYPES.get(resource.type)
    nested = rtype.nested_properties if rtype else frozenset()
    return {
        name: value
        for name, value in resource.properties.items()
        if name not in nested or intrinsic(value) is not None
    }


def _check_references(template: Template) -> None:
    for name, res in template.resources.items():
        path = f"resources.{name}"
        for target in res.depends_on:
            _check_target(template, target, name, f"{path}.depends_on")
        for prop, value in _outer_properties(res).items():
            _check_calls(template, value, name, f"{path}.properties.{prop}")
        _check_calls(template, res.metadata, name, f"{path}.metadata")
    for name, output in template.outputs.items():
        _check_calls(template, output.value, None, f"outputs.{name}.value")


def _check_target(template: Template, target: Any, owner: str | None, path: str) -> None:
    if not isinstance(target, str):
        raise InvalidRequest(f"{path}: must be a resource name")
    if target == owner:
        raise InvalidRequest(f"Invalid template: {path}: a resource cannot refer to itself")
    if target not in template.resources:
        raise InvalidRequest(f'Invalid template: {path}: resource "{target}" does not exist')


def _check_calls(template: Template, value: Any, owner: str | None, path: str) -> None:
    """Check every intrinsic call in `value`: its arguments and what it refers to."""
    call = intrinsic(value)
    if call is None:
        if isinstance(value, dict):
            for key, item in value.items():
                _check_calls(template, item, owner, f"{path}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                _check_calls(template, item, owner, f"{path}[{i}]")
        return
    name, args = call
    where = f"{path}.{name}"
    if name == "get_param":
        parts = args if isinstance(args, list) else [args]
        if not parts or not isinstance(parts[0], str) or not _is_path(parts[1:]):
            raise InvalidRequest(f"{where}: must be a parameter name or [name, key, ...]")
        if parts[0] not in template.parameters and parts[0] not in PSEUDO_PARAMETERS:
            raise InvalidRequest(
                f'Invalid template: {where}: parameter "{parts[0]}" does not exist'
            )
    elif name == "get_resource":
        _check_target(template, args, owner, where)
    elif name == "get_attr":
        _check_get_attr(template, args, owner, where)
    elif name == "list_join":
        if not isinstance(args, list) or len(args) < 2 or not isinstance(args[0], str):
            raise InvalidRequest(f"{where}: must be [separator, list, ...]")
        _check_calls(template, args[1:], owner, where)
    else:
        if not isinstance(args, dict) or set(args) != {"template", "params"}:
            raise InvalidRequest(f"{where}: must be a mapping of template and params")
        _check_calls(template, args, owner, where)


def _is_path(parts: list[Any]) -> bool:
    return all(isinstance(p, str | int) and not isinstance(p, bool) for p in parts)


def _check_get_attr(template: Template, args: Any, owner: str | None, path: str) -> None:
    if not isinstance(args, list) or len(args) < 2 or not isinstance(args[1], str):
        raise InvalidRequest(f"{path}: must be [resource, attribute, key, ...]")
    if not _is_path(args[2:]):
        raise InvalidRequest(f"{path}: attribute path items must be keys or indexes")
    _check_target(template, args[0], owner, path)
    target = template.resources[args[0]]
    rtype = resource_type(target.type)
    if not rtype.open_attributes and args[1] not in rtype.attributes:
        raise InvalidRequest(
            f'Invalid template: {path}: resource "{args[0]}" ({target.type}) has no attribute '
            f'"{args[1]}"'
        )


# --- evaluation ----------------------------------------------------------------------


def resolve(
    value: Any, params: Mapping[str, Any], resources: Mapping[str, ResolvedResource]
) -> Any:
    """`value` with every intrinsic evaluated.

    `get_param` with a path that is not there reads "" and `get_attr` reads None, as in
    Heat; a resource missing from `resources` is a 400.
    """
    return _evaluate(value, params, resources)


def static_value(value: Any, params: Mapping[str, Any]) -> Any:
    """`value` with what does not depend on resources evaluated, the rest left as written."""
    return _evaluate(value, params, None)


def _evaluate(
    value: Any, params: Mapping[str, Any], resources: Mapping[str, ResolvedResource] | None
) -> Any:
    call = intrinsic(value)
    if call is None:
        if isinstance(value, dict):
            return {k: _evaluate(v, params, resources) for k, v in value.items()}
        if isinstance(value, list):
            return [_evaluate(v, params, resources) for v in value]
        return value
    name, args = call
    if name in ("get_resource", "get_attr"):
        return value if resources is None else _read_resource(name, args, resources)
    args = _evaluate(args, params, resources)
    if name == "get_param":
        return _get_param(args, params)
    if resources is None and has_intrinsic(args):
        return {name: args}
    return _list_join(args) if name == "list_join" else _str_replace(args)


def _get_param(args: Any, params: Mapping[str, Any]) -> Any:
    parts = args if isinstance(args, list) else [args]
    if not parts or not isinstance(parts[0], str):
        raise InvalidRequest("get_param: must be a parameter name or [name, key, ...]")
    if parts[0] not in params:
        raise InvalidRequest(f"get_param: The Parameter ({parts[0]}) was not provided.")
    return _dig(params[parts[0]], parts[1:], missing="")


def _read_resource(name: str, args: Any, resources: Mapping[str, ResolvedResource]) -> Any:
    target = (
        args if name == "get_resource" else args[0] if isinstance(args, list) and args else None
    )
    if not isinstance(target, str) or target not in resources:
        raise InvalidRequest(f"{name}: resource {target!r} is not available yet")
    if name == "get_resource":
        return resources[target].reference
    if len(args) < 2:
        raise InvalidRequest("get_attr: must be [resource, attribute, key, ...]")
    return _dig(resources[target].attributes.get(args[1]), args[2:], missing=None)


def _dig(value: Any, path: Iterable[Any], missing: Any) -> Any:
    for key in path:
        if isinstance(value, dict) and isinstance(key, str) and key in value:
            value = value[key]
        elif isinstance(value, list) and (index := _index(key)) is not None and index < len(value):
            value = value[index]
        else:
            return missing
    return value


def _index(key: Any) -> int | None:
    if isinstance(key, int) and not isinstance(key, bool):
        return key if key >= 0 else None
    return int(key) if isinstance(key, str) and key.isascii() and key.isdigit() else None


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _list_join(args: Any) -> str:
    if not isinstance(args, list) or len(args) < 2 or not isinstance(args[0], str):
        raise InvalidRequest("list_join: must be [separator, list, ...]")
    if not all(isinstance(items, list) for items in args[1:]):
        raise InvalidRequest("list_join: items to join must be lists")
    return args[0].join(_as_text(item) for items in args[1:] for item in items)


def _str_replace(args: Any) -> str:
    text, mapping = (
        (args.get("template"), args.get("params")) if isinstance(args, dict) else (None, None)
    )
    if not isinstance(text, str) or not isinstance(mapping, dict):
        raise InvalidRequest("str_replace: must be a template string and a params mapping")
    keys = sorted((k for k in mapping if k), key=len, reverse=True)
    if not keys:
        return text
    # One pass, longest key first, so a replacement is never replaced again (Heat's rule).
    pattern = re.compile("|".join(re.escape(k) for k in keys))
    return pattern.sub(lambda m: _as_text(mapping[m.group(0)]), text)


def resolve_properties(
    resource: ResourceDef, params: Mapping[str, Any], resources: Mapping[str, ResolvedResource]
) -> dict[str, Any]:
    """The resource's properties evaluated, converted to their types, defaults filled in.

    An inner template or group member definition is returned as written.
    """
    rtype = resource_type(resource.type)
    field = f"resources.{resource.name}.properties"
    values = dict(resource.properties)
    for name, value in _outer_properties(resource).items():
        try:
            values[name] = resolve(value, params, resources)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{field}.{name}: {exc.message}") from None
    return check_properties(rtype, values, field)


def static_properties(resource: ResourceDef, params: Mapping[str, Any]) -> dict[str, Any]:
    """The properties with parameters applied but `get_resource`/`get_attr` left as written.

    Two definitions with equal static properties configure the same physical resource,
    which is how an update decides what changed before any resource is touched.
    """
    rtype = resource_type(resource.type)
    field = f"resources.{resource.name}.properties"
    values = dict(resource.properties)
    for name, value in _outer_properties(resource).items():
        try:
            values[name] = static_value(value, params)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{field}.{name}: {exc.message}") from None
    computed = {n for n, v in values.items() if has_intrinsic(v) or n in rtype.nested_properties}
    return check_properties(rtype, values, field, computed=computed)
