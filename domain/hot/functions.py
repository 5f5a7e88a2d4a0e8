"""Heat's intrinsic functions: finding calls, checking them, and evaluating them.

A template keeps its properties raw. `check_references()` checks every call when the
template is loaded; `resolve_properties()` evaluates a resource's properties once the
resources they reference exist, and `static_properties()` evaluates only what does not
depend on physical resources, for update planning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Protocol

from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest
from domain.hot.builtins import EVALUATORS, SHAPES
from domain.hot.cfn_functions import EVALUATED
from domain.hot.parameters import PSEUDO_PARAMETERS
from domain.hot.parts import ResourceDef, TemplateShape
from domain.hot.versions import FUNCTIONS
from domain.stack.groups import MEMBERS, member_order
from domain.stack.resource_types import RESOURCE_TYPES, check_properties, resource_type

#: The functions of a resource's properties, metadata and outputs → the first HOT version
#: that has them (`get_file` is read when the template's files are applied, the
#: condition functions are in `domain.hot.conditions`).
INTRINSICS: Final[dict[str, str]] = {
    **{name: since for name, (since, _) in FUNCTIONS.items() if name != "get_file"},
    # The CloudFormation-style ones evaluated as themselves; the versions that no longer
    # have them refuse them where the template is read (domain/hot/cfn_functions.py).
    **dict.fromkeys(EVALUATED, "2013-05-23"),
}


#: The attribute of a nested stack's resource holding its outputs' errors, by key.
OUTPUT_ERRORS: Final = "output_errors"


class ResolvedResource(BaseModel):
    """What intrinsics can read of a resource that exists."""

    model_config = ConfigDict(frozen=True)

    #: What `get_resource` returns: the physical id, or a RandomString's value.
    reference: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    #: Its type: a group reads some attributes member by member.
    type: str = ""


class Readable(Protocol):
    """A resource as a walk holds it: enough for intrinsics to read."""

    @property
    def reference(self) -> str | None: ...
    @property
    def attributes(self) -> dict[str, Any]: ...
    @property
    def type(self) -> str: ...


class ResolvedResources(Mapping[str, ResolvedResource]):
    """A live, read-only view of a walk's resources as intrinsics read them.

    Each entry is built when it is read. A walk resolves one resource's properties at a
    time and reads only the few resources they name; building every resource's entry
    for each one made a 1,000-resource create quadratic.
    """

    def __init__(self, resources: Mapping[str, Readable]) -> None:
        self._resources = resources

    def __getitem__(self, name: str) -> ResolvedResource:
        r = self._resources[name]
        return ResolvedResource(reference=r.reference, attributes=r.attributes, type=r.type)

    def __iter__(self) -> Iterator[str]:
        return iter(self._resources)

    def __len__(self) -> int:
        return len(self._resources)


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
    found = {name: references(value) for name, value in outer_properties(resource).items()}
    metadata = references(resource.metadata)
    return {**found, "metadata": metadata} if metadata else found


def outer_properties(resource: ResourceDef) -> dict[str, Any]:
    rtype = RESOURCE_TYPES.get(resource.type)
    nested = rtype.nested_properties if rtype else frozenset()
    outer = {
        name: value
        for name, value in resource.properties.items()
        if name not in nested or intrinsic(value) is not None
    }
    member = rtype.member_definition if rtype else None
    if member is not None and isinstance(outer.get(member), dict):
        outer[member] = _member_outer_part(outer[member])
    return outer


def _member_outer_part(definition: dict[str, Any]) -> dict[str, Any]:
    """A group member's definition without what belongs to the member's own inner
    template (a ResourceGroup of OS::Heat::Stack: its `template`'s intrinsics are the
    inner template's, not this one's)."""
    inner = RESOURCE_TYPES.get(str(definition.get("type")))
    props = definition.get("properties")
    if inner is None or not inner.nested_properties or not isinstance(props, dict):
        return definition
    kept = {
        k: v
        for k, v in props.items()
        if k not in inner.nested_properties or intrinsic(v) is not None
    }
    return {**definition, "properties": kept}


def with_member_inner_part(resource: ResourceDef, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with the member definition's inner template put back as written."""
    rtype = RESOURCE_TYPES.get(resource.type)
    member = rtype.member_definition if rtype else None
    written = resource.properties.get(member or "")
    done = values.get(member or "")
    if member is None or not isinstance(written, dict) or not isinstance(done, dict):
        return values
    inner = dict(written.get("properties") or {})
    outer = dict(done.get("properties") or {})
    return values | {member: {**done, "properties": inner | outer}}


def check_references(template: TemplateShape) -> None:
    """Check every `depends_on` and intrinsic call of a template: arguments and targets."""
    for name, res in template.resources.items():
        path = f"resources.{name}"
        for target in res.depends_on:
            _check_target(template, target, name, f"{path}.depends_on")
        for prop, value in outer_properties(res).items():
            _check_calls(template, value, name, f"{path}.properties.{prop}")
        _check_calls(template, res.metadata, name, f"{path}.metadata")
    for name, output in template.outputs.items():
        _check_calls(template, output.value, None, f"outputs.{name}.value")


def _check_target(template: TemplateShape, target: Any, owner: str | None, path: str) -> None:
    if not isinstance(target, str):
        raise InvalidRequest(f"{path}: must be a resource name")
    if target == owner:
        raise InvalidRequest(f"Invalid template: {path}: a resource cannot refer to itself")
    if target not in template.resources:
        raise InvalidRequest(f'Invalid template: {path}: resource "{target}" does not exist')


def _check_calls(template: TemplateShape, value: Any, owner: str | None, path: str) -> None:
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
    _check_version(template, name, where)
    if name == "get_param":
        _check_get_param(template, args, owner, where)
    elif name == "get_resource":
        _check_target(template, args, owner, where)
    elif name == "get_attr":
        _check_get_attr(template, args, owner, where)
    elif name == "list_join":
        if not isinstance(args, list) or len(args) < 2 or not isinstance(args[0], str):
            raise InvalidRequest(f"{where}: must be [separator, list, ...]")
        _check_calls(template, args[1:], owner, where)
    else:
        _check_shape(name, args, where)
        _check_calls(template, args, owner, where)


def _check_shape(name: str, args: Any, where: str) -> None:
    if name in SHAPES:
        try:
            SHAPES[name](args)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{where}: {exc.message}") from None


def _check_version(template: TemplateShape, name: str, where: str) -> None:
    since = INTRINSICS[name]
    if template.version_date < since:
        raise InvalidRequest(
            f'{where}: "{name}" is not a function of heat_template_version '
            f"{template.version} (HOT {since} and later have it)"
        )


def _check_get_param(template: TemplateShape, args: Any, owner: str | None, path: str) -> None:
    parts = args if isinstance(args, list) else [args]
    # Path items may be calls (`[lengths, {get_param: index}]`), worked out before the read.
    keys = [p for p in parts[1:] if intrinsic(p) is None]
    if not parts or not isinstance(parts[0], str) or not _is_path(keys):
        raise InvalidRequest(f"{path}: must be a parameter name or [name, key, ...]")
    for i, item in enumerate(parts[1:], start=1):
        if intrinsic(item) is not None:
            _check_calls(template, item, owner, f"{path}[{i}]")
    if path.startswith("outputs."):
        return  # Heat resolves outputs one by one: a missing parameter is the output's error
    if parts[0] not in template.parameters and parts[0] not in PSEUDO_PARAMETERS:
        raise InvalidRequest(_missing_parameter(path, parts[0]))


def _missing_parameter(path: str, name: str) -> str:
    """Heat's words for a `get_param` of an undeclared parameter: a resource property's
    is its "Property error" (what heatclient users grep for), the rest name the path."""
    if path.startswith("resources.") and ".properties." in path:
        where = path.removesuffix(".get_param")
        return f"Property error: : {where}: : The Parameter ({name}) was not provided."
    return f'Invalid template: {path}: parameter "{name}" does not exist'


def _is_path(parts: list[Any]) -> bool:
    return all(isinstance(p, str | int) and not isinstance(p, bool) for p in parts)


def _check_get_attr(template: TemplateShape, args: Any, owner: str | None, path: str) -> None:
    if not isinstance(args, list) or len(args) < 2 or not isinstance(args[1], str):
        raise InvalidRequest(f"{path}: must be [resource, attribute, key, ...]")
    # Path items may be calls (`{get_param: network}`), worked out before the read.
    if not _is_path([p for p in args[2:] if intrinsic(p) is None]):
        raise InvalidRequest(f"{path}: attribute path items must be keys or indexes")
    for i, item in enumerate(args[2:], start=2):
        if intrinsic(item) is not None:
            _check_calls(template, item, owner, f"{path}[{i}]")
    _check_target(template, args[0], owner, path)
    target = template.resources[args[0]]
    rtype = resource_type(target.type)
    by_name = rtype.member_by_name and args[1].startswith("resource.")
    known = rtype.open_attributes or rtype.member_lists_any or args[1] in rtype.attributes
    if not known and not by_name:
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
    if (
        name == "get_attr"
        and isinstance(args, list)
        and any(intrinsic(p) is not None for p in args[2:])
    ):
        args = [*args[:2], *(_evaluate(p, params, resources) for p in args[2:])]
        value = {name: args}
    if name in ("get_resource", "get_attr"):
        return value if resources is None else _read_resource(name, args, resources)
    if name == "if":
        # Chosen where the template met its parameters (`domain.hot.conditions`).
        raise InvalidRequest('"if": the template\'s conditions were not evaluated')
    args = _evaluate(args, params, resources)
    if name == "get_param":
        return get_param_value(args, params)
    if resources is None and has_intrinsic(args):
        return {name: args}
    if name in SHAPES:
        SHAPES[name](args)
    return EVALUATORS[name](args)


def get_param_value(args: Any, params: Mapping[str, Any]) -> Any:
    """`get_param` of evaluated arguments: a parameter's value, or a path into it."""
    parts = args if isinstance(args, list) else [args]
    if not parts or not isinstance(parts[0], str):
        raise InvalidRequest("get_param: must be a parameter name or [name, key, ...]")
    if parts[0] not in params:
        raise InvalidRequest(f"The Parameter ({parts[0]}) was not provided.")
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
    return _read_attribute(resources[target], args[1], args[2:], target)


def _read_attribute(
    resource: ResolvedResource, name: str, path: list[Any], resource_name: str = ""
) -> Any:
    """`get_attr` of one resource; groups read some attributes member by member (Heat).
    A nested stack's output that could not be worked out is Heat's error for it."""
    rtype = RESOURCE_TYPES.get(resource.type)
    failed = resource.attributes.get(OUTPUT_ERRORS) or {}
    if name == "outputs" and path and path[0] in failed:
        raise InvalidRequest(f"Error in {resource_name} output {path[0]}: {failed[path[0]]}")
    members = resource.attributes.get(MEMBERS) or {}
    if rtype is not None and name in rtype.member_attributes:
        order = sorted(members, key=member_order)
        if rtype.member_attributes[name] == "list":
            return [_dig(members[n], path, missing=None) for n in order]
        return {n: _dig(members[n], path, missing=None) for n in order}
    if rtype is not None and rtype.member_by_name and name.startswith("resource."):
        _, member, *attribute = name.split(".", 2)
        if not attribute:
            refs = resource.attributes.get("refs_map") or {}
            return _dig(refs.get(member), path, missing=None)
        return _dig(members.get(member), [*attribute, *path], missing=None)
    if rtype is not None and rtype.member_lists_any and name not in rtype.attributes:
        return [
            _dig(members[n], [name, *path], missing=None) for n in sorted(members, key=member_order)
        ]
    return _dig(resource.attributes.get(name), path, missing=None)


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


def resolve_properties(
    resource: ResourceDef, params: Mapping[str, Any], resources: Mapping[str, ResolvedResource]
) -> dict[str, Any]:
    """The resource's properties evaluated, converted to their types, defaults filled in.

    An inner template or group member definition is returned as written.
    """
    rtype = resource_type(resource.type)
    field = f"resources.{resource.name}.properties"
    values = dict(resource.properties)
    for name, value in outer_properties(resource).items():
        try:
            values[name] = resolve(value, params, resources)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{field}.{name}: {exc.message}") from None
    return check_properties(rtype, with_member_inner_part(resource, values), field)


def static_properties(resource: ResourceDef, params: Mapping[str, Any]) -> dict[str, Any]:
    """The properties with parameters applied but `get_resource`/`get_attr` left as written.

    Two definitions with equal static properties configure the same physical resource,
    which is how an update decides what changed before any resource is touched.
    """
    rtype = resource_type(resource.type)
    field = f"resources.{resource.name}.properties"
    values = dict(resource.properties)
    for name, value in outer_properties(resource).items():
        try:
            values[name] = static_value(value, params)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{field}.{name}: {exc.message}") from None
    values = with_member_inner_part(resource, values)
    computed = {n for n, v in values.items() if has_intrinsic(v) or n in rtype.nested_properties}
    return check_properties(rtype, values, field, computed=computed)
