"""Heat templates: the model, loading and validation, the dependency graph.

`load_template()` is the one entry point for user input: it accepts a mapping or a
YAML/JSON string and either returns a frozen `Template` or raises `InvalidRequest`
naming the offending path (`resources.web.properties.flavor: property is required`).
Properties stay raw (intrinsics unresolved) in the template; `domain.hot.functions`
evaluates them and `domain.hot.parameters` gives parameters their values (both re-exported
here for existing importers).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from graphlib import CycleError, TopologicalSorter
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest
from domain.hot.cfn_functions import hot_calls
from domain.hot.cfn_template import hot_of_cfn, is_cfn
from domain.hot.conditions import CONDITIONS_SINCE, check_conditions, enabled_parts, has_if
from domain.hot.functions import (
    ResolvedResource,
    check_references,
    has_intrinsic,
    intrinsic,
    property_references,
    references,
    resolve,
    resolve_properties,
    static_properties,
    static_value,
)
from domain.hot.parameters import (
    ParameterDef,
    check_keys,
    check_name,
    mapping_at,
    parse_parameter,
    plain_value,
    resolve_parameters,
    text_at,
)
from domain.hot.parts import OutputDef, ResourceDef
from domain.hot.properties import Patched
from domain.hot.versions import canonical_version
from domain.hot.yaml_format import load_yaml
from domain.stack.resource_types import ResourceType, check_properties, resource_type
from domain.stack.types.neutron.dependencies import EVERY_SUBNET_PATCH, implicit_dependencies

__all__ = [
    "MAX_NESTING",
    "MAX_RESOURCES",
    "OutputDef",
    "ParameterDef",
    "ResolvedResource",
    "ResourceDef",
    "Template",
    "conditioned",
    "load_template",
    "property_references",
    "references",
    "resolve",
    "resolve_parameters",
    "resolve_properties",
    "static_properties",
    "static_value",
    "topological_order",
]

MAX_RESOURCES: Final = 1_000
#: Heat's default `max_nested_stack_depth`, for inline OS::Heat::Stack templates.
MAX_NESTING: Final = 5

_TOP_KEYS = frozenset(
    {
        "heat_template_version",
        "description",
        "parameters",
        "parameter_groups",
        "resources",
        "outputs",
        "conditions",
    }
)
_RESOURCE_KEYS = frozenset(
    {
        "type",
        "properties",
        "depends_on",
        "metadata",
        "deletion_policy",
        "update_policy",
        "external_id",
        "condition",
    }
)
_DELETION_POLICIES = ("Delete", "Retain", "Snapshot")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Template(_Frozen):
    """A validated template."""

    version: str
    description: str = ""
    parameters: dict[str, ParameterDef] = Field(default_factory=dict)
    resources: dict[str, ResourceDef] = Field(default_factory=dict)
    outputs: dict[str, OutputDef] = Field(default_factory=dict)
    #: The `conditions` section as written (HOT 2016-10-14).
    conditions: dict[str, Any] = Field(default_factory=dict)
    #: Whether parameters decide what is in it: a `condition` or an `if` somewhere.
    conditional: bool = False

    @property
    def version_date(self) -> str:
        """The HOT date `version` stands for (release names resolved)."""
        return canonical_version(self.version)

    @cached_property
    def graph(self) -> DependencyGraph:
        """The dependency graph, worked out once: a template never changes, and a
        workflow of a 1,000-resource stack asked for it ten times in one activation."""
        return self._graph(every_subnet=True)

    @cached_property
    def graph_before_every_subnet(self) -> DependencyGraph:
        """The graph of workflows recorded before `EVERY_SUBNET_PATCH`: a server waited
        only for the subnets of the networks its entries name."""
        return self._graph(every_subnet=False)

    def graph_for(self, patched: Patched | None = None) -> DependencyGraph:
        """`graph`, or for a workflow replaying a history from before the patch (`patched`
        is `workflow.patched`), the graph it was recorded with."""
        if patched is None or patched(EVERY_SUBNET_PATCH):
            return self.graph
        return self.graph_before_every_subnet

    def _graph(self, *, every_subnet: bool) -> DependencyGraph:
        known = frozenset(self.resources)
        implicit = implicit_dependencies(self.resources, every_subnet=every_subnet)
        requires = {
            name: frozenset(res.depends_on).union(
                *property_references(res).values(), implicit.get(name, ())
            )
            & known
            for name, res in self.resources.items()
        }
        users: dict[str, list[str]] = {name: [] for name in self.resources}
        for name, required in requires.items():
            for other in required:
                users[other].append(name)
        return DependencyGraph(
            requires=requires,
            required_by={name: tuple(sorted(u)) for name, u in users.items()},
            order=tuple(topological_order(requires)),
        )

    def dependencies(self, patched: Patched | None = None) -> dict[str, frozenset[str]]:
        """Every resource → the resources it requires: `depends_on`, references, and the
        networking dependencies Heat adds by itself (a port waits for its subnets)."""
        return dict(self.graph_for(patched).requires)

    def required_by(self, patched: Patched | None = None) -> dict[str, list[str]]:
        """Every resource → the resources that require it, by name."""
        return {name: list(u) for name, u in self.graph_for(patched).required_by.items()}

    def creation_order(self, patched: Patched | None = None) -> list[str]:
        """Resources with what each requires first; see `topological_order()`."""
        return list(self.graph_for(patched).order)


@dataclass(frozen=True)
class DependencyGraph:
    """What `Template.graph` works out: each resource's requirements, its users, and an
    order that creates requirements first."""

    requires: Mapping[str, frozenset[str]]
    required_by: Mapping[str, tuple[str, ...]]
    order: tuple[str, ...]


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


#: The templates loaded last, with the very documents they were loaded from: a workflow
#: task loads the same document up to five times (validator, handler, parameter masking,
#: plan), at a tenth of a second each for 1,000 resources in Temporal's sandbox, where
#: every `isinstance` is a call into it. Raw documents are never changed once loaded.
_RECENT: deque[tuple[Mapping[str, Any] | str, Template]] = deque(maxlen=16)


def load_template(raw: Mapping[str, Any] | str) -> Template:
    """Parse and validate a template; every problem is an `InvalidRequest` naming its path."""
    for seen, loaded in tuple(_RECENT):  # a copy: workflow threads share the deque
        if seen is raw:
            return loaded
    loaded = _load(raw, nesting=0)
    _RECENT.append((raw, loaded))
    return loaded


def _load(raw: Any, nesting: int) -> Template:
    if nesting > MAX_NESTING:
        raise InvalidRequest(f"Invalid template: stacks nested deeper than {MAX_NESTING}")
    data = plain_value(parse_template_text(raw) if isinstance(raw, str) else raw, "")
    if not isinstance(data, dict):
        raise InvalidRequest("Invalid template: the template must be a mapping")
    if is_cfn(data):
        data = hot_of_cfn(data)
    version = _version(data.get("heat_template_version"))
    date = canonical_version(version)
    since_conditions = date >= CONDITIONS_SINCE
    for key in data:
        if key not in _TOP_KEYS or (key == "conditions" and not since_conditions):
            raise InvalidRequest(f"The template section is invalid: {key}")
    resources = mapping_at(data.get("resources"), "resources")
    if len(resources) > MAX_RESOURCES:
        raise InvalidRequest(f"resources: more than {MAX_RESOURCES} resources")
    declared = mapping_at(data.get("parameters"), "parameters")
    resources = hot_calls(resources, date, declared, "resources")
    outputs = hot_calls(mapping_at(data.get("outputs"), "outputs"), date, declared, "outputs")
    conditions = mapping_at(data.get("conditions"), "conditions")
    template = Template(
        version=version,
        description=text_at(data.get("description"), "description"),
        parameters={
            name: parse_parameter(name, spec)
            for name, spec in mapping_at(data.get("parameters"), "parameters").items()
        },
        resources={
            name: _resource(name, spec, nesting, since_conditions)
            for name, spec in resources.items()
        },
        outputs={name: _output(name, spec, since_conditions) for name, spec in outputs.items()},
        conditions=conditions,
    )
    if since_conditions and _conditional(template, data):
        template = template.model_copy(update={"conditional": True})
        check_conditions(template)
    check_references(template)
    for res in template.resources.values():
        if isinstance(res.external_id, dict):
            args = res.external_id["get_param"]
            param = args[0] if isinstance(args, list) and args else args
            if not isinstance(param, str) or param not in template.parameters:
                raise InvalidRequest(
                    f"Invalid template: resources.{res.name}.external_id.get_param: "
                    f'parameter "{param}" does not exist'
                )
    template.creation_order()
    return template


def _external_id_at(value: Any, path: str) -> str | dict[str, Any] | None:
    """An `external_id`: a physical id, or a `get_param` of one (Heat resolves it with
    the stack's parameters)."""
    call = intrinsic(value)
    if call is not None and call[0] == "get_param":
        return dict(value)
    if value is not None and not isinstance(value, str):
        raise InvalidRequest(f"{path}: must be a string or a get_param")
    return value or None


def conditioned(template: Template, params: Mapping[str, Any]) -> Template:
    """`template` as Heat's engine sees it for these parameter values: resources whose
    condition is false left out, `if` calls replaced by their branch, outputs whose
    condition is false without a value (`domain.hot.conditions`). A template without
    conditions is returned as it is."""
    if not template.conditional:
        return template
    resources, outputs = enabled_parts(template, params)
    return Template(
        version=template.version,
        description=template.description,
        parameters=template.parameters,
        resources=resources,
        outputs=outputs,
        conditions=template.conditions,
    )


def parse_template_text(text: str) -> Any:
    """YAML or JSON text as data (400 naming the line of a syntax error)."""
    try:
        return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        where = f" (line {exc.problem_mark.line + 1})" if exc.problem_mark else ""
        raise InvalidRequest(f"Invalid template: {exc.problem or 'bad YAML'}{where}") from None
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidRequest(f"Invalid template: {str(exc)[:200]}") from None


def _version(value: Any) -> str:
    if value is None or value == "":
        raise InvalidRequest("heat_template_version: required")
    if isinstance(value, bool) or not isinstance(value, str | int | float) or len(str(value)) > 64:
        raise InvalidRequest("heat_template_version: must be a version string or a date")
    canonical_version(str(value))
    return str(value)


def _conditional(template: Template, data: dict[str, Any]) -> bool:
    """Whether parameters decide what is in the template: conditions, an `if`."""
    return bool(
        template.conditions
        or any(r.condition is not None for r in template.resources.values())
        or any(o.condition is not None for o in template.outputs.values())
        or has_if(data.get("resources"))
        or has_if(data.get("outputs"))
    )


def _resource(name: str, spec: Any, nesting: int, since_conditions: bool) -> ResourceDef:
    path = f"resources.{name}"
    check_name(name, path)
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{path}: must be a mapping with a type")
    check_keys(spec, _RESOURCE_KEYS if since_conditions else _RESOURCE_KEYS - {"condition"}, path)
    kind = spec.get("type")
    if not isinstance(kind, str) or not kind:
        raise InvalidRequest(f"{path}.type: required, a resource type name")
    try:
        rtype = resource_type(kind)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{path}.type: {exc.message}") from None
    properties = mapping_at(spec.get("properties"), f"{path}.properties")
    if spec.get("external_id") is None:  # an adopted resource's properties are not used
        _check_properties(rtype, properties, f"{path}.properties", nesting)
    policy = text_at(spec.get("deletion_policy"), f"{path}.deletion_policy") or "Delete"
    if policy.capitalize() not in _DELETION_POLICIES:
        raise InvalidRequest(f"{path}.deletion_policy: must be one of Delete, Retain, Snapshot")
    return ResourceDef(
        name=name,
        type=kind,
        properties=properties,
        depends_on=_depends_on(spec.get("depends_on"), f"{path}.depends_on"),
        metadata=mapping_at(spec.get("metadata"), f"{path}.metadata"),
        deletion_policy=policy.capitalize(),
        update_policy=mapping_at(spec.get("update_policy"), f"{path}.update_policy"),
        external_id=_external_id_at(spec.get("external_id"), f"{path}.external_id"),
        condition=_condition_at(spec.get("condition"), f"{path}.condition"),
    )


def _condition_at(value: Any, path: str) -> str | bool | dict[str, Any] | None:
    """A resource's or output's `condition`: a name, true/false, or a condition call."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, dict) and len(value) == 1:
        return value
    raise InvalidRequest(f"{path}: must be a condition name, a boolean or a condition function")


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
    member = props.get(rtype.member_definition or "")
    if member is not None and intrinsic(member) is None:
        _check_group_member(member, f"{path}.{rtype.member_definition}", nesting)
    for name in rtype.nested_properties:
        value = props.get(name)
        if value is None or intrinsic(value) is not None:
            continue
        if rtype.holds_local_template(props):
            _check_inline_template(value, f"{path}.{name}", nesting)
        elif rtype.nested_holds == "template":
            continue  # a remote stack's template: its Heat checks it
        elif rtype.nested_holds == "resource":
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
    check_keys(value, frozenset({"type", "properties", "metadata"}), path)
    kind = value.get("type")
    if not isinstance(kind, str):
        raise InvalidRequest(f"{path}.type: required, a resource type name")
    try:
        inner = resource_type(kind)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{path}.type: {exc.message}") from None
    properties = mapping_at(value.get("properties"), f"{path}.properties")
    _check_properties(inner, properties, f"{path}.properties", nesting)
    mapping_at(value.get("metadata"), f"{path}.metadata")


def _output(name: str, spec: Any, since_conditions: bool) -> OutputDef:
    path = f"outputs.{name}"
    check_name(name, path)
    if not isinstance(spec, dict):
        raise InvalidRequest(f"{path}: must be a mapping with a value")
    keys = {"value", "description", "condition"} if since_conditions else {"value", "description"}
    check_keys(spec, frozenset(keys), path)
    description = text_at(spec.get("description"), f"{path}.description")
    return OutputDef(
        name=name,
        value=spec.get("value"),
        description=description,
        condition=_condition_at(spec.get("condition"), f"{path}.condition"),
    )


#: What a hidden parameter's value reads as wherever Warden shows or stores it.
HIDDEN_VALUE: Final = "******"


def masked_parameters(template: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` with the values of the template's hidden parameters masked.

    For everything kept outside the workflow (the database projection, action inputs):
    a hidden value lives only in the workflow's state, encrypted in history when a codec
    key is set. A template that no longer loads masks every value.
    """
    try:
        declared = load_template(template).parameters if template else {}
    except InvalidRequest:
        return dict.fromkeys(given, HIDDEN_VALUE)
    return {
        name: HIDDEN_VALUE if name in declared and declared[name].hidden else value
        for name, value in given.items()
    }
