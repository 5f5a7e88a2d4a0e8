"""Heat environments and `files`: what a client sends beside a template, applied to it.

Heat clients (python-heatclient, the `openstack stack` commands) send a template with a
`files` map (every file the template or environment names, by the name used there) and
an `environment` (`parameters`, `parameter_defaults`, `resource_registry`, ...).
`expand_template()` turns all of that into one self-contained template and its
parameters, so the rest of Warden deals with plain templates only:

- `get_file: <name>` becomes the file's text;
- a type aliased in `resource_registry` (`My::Server: OS::Nova::Server`, or a glob
  `My::*: OS::Heat::*`) becomes its target;
- a type naming a template in `files` (a *template resource*) becomes an
  `OS::Heat::Stack` whose inline template is that file, its properties the nested
  stack's parameters, and `get_attr: [res, out]` reads that stack's output `out`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import yaml

from domain.errors import InvalidRequest
from domain.hot.cfn_template import hot_of_cfn, is_cfn
from domain.hot.parameters import mapping_at, plain_value
from domain.hot.template import parse_template_text
from domain.hot.yaml_format import load_yaml
from domain.stack.event_sinks import parse_event_sinks
from domain.stack.hooks import Breakpoints, parse_breakpoints
from domain.stack.resource_types import RESOURCE_TYPES, STACK, ResourceType

ENVIRONMENT_SECTIONS: Final = frozenset(
    {
        "parameters",
        "parameter_defaults",
        "resource_registry",
        "encrypted_param_names",
        "event_sinks",
        "parameter_merge_strategies",
    }
)
#: Registry aliases followed before giving up (Heat refuses loops the same way).
MAX_ALIAS_HOPS: Final = 10
MAX_FILE_NESTING: Final = 5
_TEMPLATE_SUFFIXES: Final = (".yaml", ".yml", ".template", ".json", ".hot")


def parse_environment(raw: Any) -> dict[str, Any]:
    """An environment (object or YAML/JSON text) checked section by section (400 otherwise)."""
    if raw is None or raw == "":
        return {}
    data = _yaml(raw, "environment") if isinstance(raw, str) else raw
    data = plain_value(data, "environment")
    env = mapping_at(data, "environment")
    for section in env:
        if section not in ENVIRONMENT_SECTIONS:
            raise InvalidRequest(f'environment has wrong section "{section}"')
    for section in ("parameters", "parameter_defaults", "resource_registry"):
        mapping_at(env.get(section), f"environment.{section}")
    parse_event_sinks(env.get("event_sinks"))
    registry = env.get("resource_registry") or {}
    for key, target in registry.items():
        if key == "resources":
            parse_breakpoints(target)
            continue
        if not isinstance(target, str) or not target:
            raise InvalidRequest(
                f"environment.resource_registry.{key}: must name a resource type or a file"
            )
    return env


def environment_breakpoints(env: Mapping[str, Any]) -> Breakpoints:
    """The breakpoint hooks of a (merged) environment's `resource_registry.resources`."""
    return parse_breakpoints((env.get("resource_registry") or {}).get("resources"))


def merge_environments(envs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several environments in order, later ones winning per key (Heat's default merge)."""
    merged: dict[str, Any] = {}
    for env in envs:
        for section, value in env.items():
            if isinstance(value, dict):
                merged[section] = {**(merged.get(section) or {}), **value}
            else:
                merged[section] = value
    return merged


def stack_parameters(
    declared: Mapping[str, Any], env: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Parameters of a top-level stack: defaults it declares, then env, then the request."""
    defaults = env.get("parameter_defaults") or {}
    values = {name: defaults[name] for name in declared if name in defaults}
    values.update(env.get("parameters") or {})
    values.update(given)
    return values


def expand_template(
    template: dict[str, Any], files: Mapping[str, Any], env: Mapping[str, Any]
) -> dict[str, Any]:
    """`template` with `get_file`, registry aliases and template resources resolved."""
    return _Expander(files, env).template(template, nesting=0)


class _Expander:
    def __init__(self, files: Mapping[str, Any], env: Mapping[str, Any]) -> None:
        for name, content in files.items():
            if not isinstance(content, str):
                raise InvalidRequest(f"files.{name}: must be the file's text")
        self.files = files
        self.registry: dict[str, str] = {
            k: v for k, v in (env.get("resource_registry") or {}).items() if k != "resources"
        }
        self.defaults: dict[str, Any] = dict(env.get("parameter_defaults") or {})

    def template(self, template: dict[str, Any], nesting: int) -> dict[str, Any]:
        if nesting > MAX_FILE_NESTING:
            raise InvalidRequest(f"Template resources nested deeper than {MAX_FILE_NESTING}")
        data = self.inline_files(template)
        resources = mapping_at(data.get("resources"), "resources")
        nested: set[str] = set()
        expanded: dict[str, Any] = {}
        for name, spec in resources.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
                expanded[name] = spec  # the template loader names the problem
                continue
            kind = self.resolve_type(spec["type"], f"resources.{name}.type")
            if kind == STACK:
                expanded[name] = self.with_inner_template({**spec, "type": kind}, name, nesting)
                continue
            if kind in RESOURCE_TYPES or kind not in self.files:
                expanded[name] = self.with_members({**spec, "type": kind}, name, nesting)
                continue
            nested.add(name)
            expanded[name] = self.template_resource(name, spec, kind, nesting)
        if resources:
            data = {**data, "resources": expanded}
        result: dict[str, Any] = _read_outputs_of(data, nested) if nested else data
        return result

    def with_inner_template(self, spec: dict[str, Any], name: str, nesting: int) -> dict[str, Any]:
        """An `OS::Heat::Stack` whose template (often a `get_file`) has template resources
        or files of its own: they are resolved from this request's files, as Heat
        resolves them from the parent's (and sends them along to a remote stack's Heat,
        which here gets the template with them resolved)."""
        props = spec.get("properties")
        if not isinstance(props, dict):
            return spec
        inner = self.inline_files(props.get("template"))
        if isinstance(inner, str):
            try:
                parsed = _yaml_template(inner, f"resources.{name}.properties.template")
            except InvalidRequest:
                return spec  # the nested stack's own checks say what is wrong with it
        elif isinstance(inner, dict):
            parsed = inner
        else:
            return spec
        resolved = self.template(parsed, nesting + 1)
        if resolved == parsed:
            return spec
        return {**spec, "properties": {**props, "template": resolved}}

    def with_members(self, spec: dict[str, Any], name: str, nesting: int) -> dict[str, Any]:
        """A group whose member definition names a template (directly or through the
        registry): each member is then a stack of that template, as in Heat."""
        rtype = RESOURCE_TYPES.get(spec["type"])
        props = spec.get("properties")
        key = _member_key(rtype) if rtype is not None else None
        if key is None or not isinstance(props, dict):
            return spec
        member = props.get(key)
        if not isinstance(member, dict) or not isinstance(member.get("type"), str):
            return spec
        path = f"resources.{name}.properties.{key}"
        kind = self.resolve_type(member["type"], f"{path}.type")
        if kind in RESOURCE_TYPES or kind not in self.files:
            expanded = {**member, "type": kind}
        else:
            expanded = self.template_resource(f"{name}.properties.{key}", member, kind, nesting)
        return {**spec, "properties": {**props, key: expanded}}

    def template_resource(
        self, name: str, spec: dict[str, Any], file_name: str, nesting: int
    ) -> dict[str, Any]:
        inner = self.template(_yaml_template(self.files[file_name], file_name), nesting + 1)
        declared = mapping_at(inner.get("parameters"), f"{file_name}: parameters")
        properties = mapping_at(spec.get("properties"), f"resources.{name}.properties")
        parameters = {k: v for k, v in self.defaults.items() if k in declared}
        parameters.update(properties)
        rest = {k: v for k, v in spec.items() if k not in ("type", "properties")}
        return {**rest, "type": STACK, "properties": {"template": inner, "parameters": parameters}}

    def resolve_type(self, kind: str, path: str) -> str:
        seen = [kind]
        for _ in range(MAX_ALIAS_HOPS):
            target = self.registry.get(kind) or _glob_target(self.registry, kind)
            if target is None or target == kind:
                break
            kind = target
            if kind in seen:
                raise InvalidRequest(f"{path}: resource_registry loops: {' -> '.join(seen)}")
            seen.append(kind)
        is_file = kind not in RESOURCE_TYPES and kind.endswith(_TEMPLATE_SUFFIXES)
        if is_file and kind not in self.files:
            raise InvalidRequest(
                f'{path}: Could not fetch remote template "{kind}": it is not in "files" '
                "(Warden reads nested templates only from the request)"
            )
        return kind

    def inline_files(self, value: Any) -> Any:
        if isinstance(value, dict):
            if len(value) == 1 and "get_file" in value:
                return self.file_text(value["get_file"])
            return {k: self.inline_files(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.inline_files(v) for v in value]
        return value

    def file_text(self, key: Any) -> str:
        if not isinstance(key, str) or key not in self.files:
            raise InvalidRequest(
                f'No content found in the "files" section for get_file path: {key}'
            )
        text: str = self.files[key]
        return text


def template_resource_files(
    template: Mapping[str, Any], files: Mapping[str, Any], env: Mapping[str, Any]
) -> dict[str, str]:
    """The resources of `template` (a mapping, not expanded) that are template resources:
    name → the file in `files` their type names (directly or through the registry)."""
    expander = _Expander(files, env)
    found: dict[str, str] = {}
    for name, spec in mapping_at(template.get("resources"), "resources").items():
        if isinstance(spec, dict) and isinstance(spec.get("type"), str):
            kind = expander.resolve_type(spec["type"], f"resources.{name}.type")
            if kind not in RESOURCE_TYPES and kind in files:
                found[name] = kind
    return found


def file_template(files: Mapping[str, Any], file_name: str) -> dict[str, Any]:
    """The template in `files` under `file_name`, read as YAML or JSON."""
    return _yaml_template(str(files[file_name]), file_name)


def _member_key(rtype: ResourceType) -> str | None:
    """The property of a group type that holds its member's definition."""
    if rtype.member_definition is not None:
        return rtype.member_definition
    if rtype.nested_holds == "resource":
        return next(iter(sorted(rtype.nested_properties)), None)
    return None


def _glob_target(registry: Mapping[str, str], kind: str) -> str | None:
    """Heat's `Prefix::*: Other::*` aliases."""
    for pattern, target in registry.items():
        if pattern.endswith("*") and kind.startswith(pattern[:-1]):
            if target.endswith("*"):
                return target[:-1] + kind[len(pattern) - 1 :]
            return target
    return None


def _read_outputs_of(value: Any, nested: set[str]) -> Any:
    """`get_attr: [res, out, ...]` of a template resource reads its stack's output `out`."""
    if isinstance(value, dict):
        if len(value) == 1 and "get_attr" in value:
            args = value["get_attr"]
            if (
                isinstance(args, list)
                and len(args) >= 2
                and args[0] in nested
                and args[1] != "outputs"
            ):
                return {"get_attr": [args[0], "outputs", *args[1:]]}
        return {k: _read_outputs_of(v, nested) for k, v in value.items()}
    if isinstance(value, list):
        return [_read_outputs_of(v, nested) for v in value]
    return value


def _yaml(text: str, what: str) -> Any:
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise InvalidRequest(f"{what}: not valid YAML or JSON ({str(exc)[:200]})") from None


def _yaml_template(text: str, file_name: str) -> dict[str, Any]:
    data = plain_value(_yaml(text, file_name), file_name)
    if not isinstance(data, dict):
        raise InvalidRequest(f"{file_name}: a template resource's file must hold a template")
    return hot_of_cfn(data) if is_cfn(data) else data


def template_data(raw: Mapping[str, Any] | str) -> dict[str, Any]:
    """A template as JSON-safe data (YAML/JSON text parsed, dates as text), not yet checked;
    a CFN template as the HOT one it means (`domain.hot.cfn_template`)."""
    data = plain_value(parse_template_text(raw) if isinstance(raw, str) else raw, "")
    if not isinstance(data, dict):
        raise InvalidRequest("Invalid template: the template must be a mapping")
    return hot_of_cfn(data) if is_cfn(data) else data
