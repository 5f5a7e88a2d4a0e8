"""What a resource type is made of: property schemas, and how values meet them.

`check_properties()` is the one place a resource's properties meet their schema: the
template loader calls it with the intrinsic-valued names in `computed` (checked later,
once resolved), and property resolution calls it again with every value known. The
types themselves live one per module in `domain/stack/types/`, registered in
`domain/stack/resource_types.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from domain.cluster.state import MAX_CAPACITY
from domain.errors import InvalidRequest
from domain.hot.constraints import check_custom

PropertyType = Literal["string", "integer", "number", "boolean", "map", "list", "any"]
#: A rule on a resource's converted properties beyond each one's schema (raises a 400).
PropertiesCheck = Callable[[Mapping[str, Any], str], None]
#: `workflow.patched`, handed to the rules a workflow's decisions depend on.
Patched = Callable[[str], bool]
#: A boolean property that, when true, asks for replacement instead of an in-place
#: update (Heat's TestResource; OS::Heat::None accepts any property, this one too).
UPDATE_REPLACE: Final = "update_replace"
#: Bounds of a group size and of a number of seconds, updatable in place.
SIZE_BOUNDS: Final[dict[str, Any]] = {"minimum": 0, "maximum": MAX_CAPACITY, "update_allowed": True}
SECONDS_BOUNDS: Final[dict[str, Any]] = {"minimum": 0, "maximum": 86_400, "update_allowed": True}

_INTEGER = re.compile(r"\s*[+-]?\d{1,18}\s*")
_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})
_INVALID: Final = object()
_INT_LIMIT = 2**63


class PropertySchema(BaseModel):
    """One property of a resource type."""

    model_config = ConfigDict(frozen=True)

    type: PropertyType
    required: bool = False
    default: Any = None
    #: A change can be applied in place; otherwise the resource is replaced.
    update_allowed: bool = False
    allowed_values: tuple[Any, ...] = ()
    minimum: int | float | None = None
    maximum: int | float | None = None
    #: Bounds of a string's, list's or map's length (Heat's `length` constraint).
    min_length: int | None = None
    max_length: int | None = None
    #: A regular expression the whole string must match (Heat's `allowed_pattern`).
    pattern: str | None = None
    #: Heat's `custom_constraint` (`ip_addr`, `nova.flavor`, …): the pure ones are
    #: checked here; those naming a cloud object are checked when it is looked up.
    custom_constraint: str | None = None
    #: A map's keys, or `*` → the schema of each list item (Heat's nested `schema`).
    nested: dict[str, PropertySchema] | None = None
    #: Heat's `immutable`: no change at all is accepted, not even by replacement.
    immutable: bool = False
    description: str = ""


class ResourceType(BaseModel):
    """A resource type: its properties, attributes and what Warden may do with it."""

    model_config = ConfigDict(frozen=True)

    name: str
    properties: dict[str, PropertySchema]
    #: Any property name is accepted (OS::Heat::None), and updated in place.
    open_properties: bool = False
    attributes: frozenset[str]
    #: Any attribute name is accepted and reads as None (OS::Heat::None).
    open_attributes: bool = False
    #: Lock level "all" locks its physical resource (servers).
    can_lock: bool = False
    replace_on_any_change: bool = False
    #: Properties holding an inner template or resource definition: intrinsics inside
    #: them belong to that inner template, not to the one declaring the resource.
    nested_properties: frozenset[str] = frozenset()
    #: What the nested properties hold: a whole inner template (OS::Heat::Stack) or one
    #: resource definition (a scaling group's member); the loader checks it as such.
    nested_holds: Literal["template", "resource"] | None = None
    #: A property that, when set, sends the inner template to another Heat (a remote
    #: stack's `context`): that Heat checks it, this one does not look inside.
    remote_when: str | None = None
    #: A property holding one member's definition, resolved in this template
    #: (ResourceGroup's `resource_def`); the loader checks it as a resource definition.
    member_definition: str | None = None
    #: The plan replaces the resource when its UPDATE_REPLACE property is true (TestResource).
    honours_update_replace: bool = False
    #: Its handler may answer that an in-place update replaces it after all (a software
    #: deployment whose `replace_on_change` input changed: Heat's `UpdateReplace`).
    replaced_on_inputs: bool = False
    #: Deprecated property and attribute names Heat still takes but no longer shows.
    hidden: frozenset[str] = frozenset()
    #: Deprecated property → its successor (Heat's translation rules: `network_id` →
    #: `network` on a port); the value moves over before any check.
    translations: dict[str, str] = {}
    #: Properties Warden once replaced the resource for and now updates in place, each
    #: with the id of the workflow patch that changed it: a workflow replaying a history
    #: from before the patch still replaces (see `updatable_with`'s `patched`).
    in_place_since: dict[str, str] = {}
    #: Property → a test its old and new values must both pass for a change to be made in
    #: place (a server's `networks`: only NICs Warden can attach and detach as they are).
    in_place_when: dict[str, Callable[[Any], bool]] = {}
    #: Property → a test of its (old, new) values for a change to be made in place (a
    #: stack's `context`: the same region).
    in_place_between: dict[str, Callable[[Any, Any], bool]] = {}
    #: Property → (policy property, policy values that make a change of it a replacement):
    #: Heat's `image_update_policy: REPLACE` on a server.
    replace_policies: dict[str, tuple[str, tuple[str, ...]]] = {}
    #: Property → (policy property, policy value, workflow patch): a change under that
    #: policy value is made in place only past the patch (replaced before it), the other
    #: policy values as they always were (a server's `user_data_update_policy: REBUILD`).
    in_place_policies_since: dict[str, tuple[str, str, str]] = {}
    #: The type's own rule across properties (a scaling group's sizes), if any.
    check: PropertiesCheck | None = None
    #: Group attributes read member by member from the group's `members` attribute:
    #: `[group, outputs, key…]` is a map name → each member's `key…` ("map"), or a list
    #: of them in member order ("list") — Heat's `outputs`, `outputs_list`, `attributes`.
    member_attributes: dict[str, Literal["map", "list"]] = {}
    #: `resource.{name}` and `resource.{name}.{attribute}` read one member (ResourceGroup).
    member_by_name: bool = False
    #: Any other attribute name reads as the list of each member's attribute of that
    #: name, in member order (Heat's ResourceGroup: `get_attr: [group, first_address]`).
    member_lists_any: bool = False
    description: str = ""
    #: What each attribute holds, for `GET /resource_types/{type}` (Heat's wording).
    attribute_docs: dict[str, str] = {}

    def holds_local_template(self, props: Mapping[str, Any]) -> bool:
        """Whether the inner template in these properties is this Warden's to run."""
        return self.nested_holds == "template" and (
            self.remote_when is None or props.get(self.remote_when) is None
        )

    def updatable(self, name: str) -> bool:
        """Whether a change of property `name` can be applied without replacement."""
        schema = self.properties.get(name)
        if schema is None:
            return self.open_properties
        return schema.update_allowed and not self.replace_on_any_change

    def updatable_with(
        self,
        name: str,
        props: Mapping[str, Any],
        patched: Patched | None = None,
        before: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether a change of `name` can be applied in place, given all the new properties
        (and the old ones, when known).

        `patched` is `workflow.patched` when a workflow asks: a property in
        `in_place_since` is then updated in place only past its patch.
        """
        test = self.in_place_when.get(name)
        if test is not None and not all(
            test(values.get(name)) for values in (props, before) if values is not None
        ):
            return False
        between = self.in_place_between.get(name)
        if (
            between is not None
            and before is not None
            and not between(before.get(name), props.get(name))
        ):
            return False
        if self.honours_update_replace and props.get(UPDATE_REPLACE) is True:
            return False
        policy = self.replace_policies.get(name)
        if policy is not None and props.get(policy[0]) in policy[1]:
            return False
        later = self.in_place_policies_since.get(name)
        if (
            later is not None
            and props.get(later[0]) == later[1]
            and patched is not None
            and not patched(later[2])
        ):
            return False
        since = self.in_place_since.get(name)
        if since is not None and patched is not None and not patched(since):
            return False
        return self.updatable(name)

    def updatable_in_place(
        self, before: Mapping[str, Any], after: Mapping[str, Any], patched: Patched | None = None
    ) -> bool:
        """Whether every change between two resolved property sets can be applied in place."""
        if after.get(UPDATE_REPLACE) is True:
            return False
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        return all(self.updatable_with(k, after, patched, before) for k in changed)


def prop(kind: PropertyType, **options: Any) -> PropertySchema:
    """A property schema of type `kind` (options as PropertySchema's fields)."""
    return PropertySchema(type=kind, **options)


def parse_bool(value: Any) -> bool | None:
    """`value` as a boolean (true/false, yes/no, 1/0 in any case), or None if it is not one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
    return None


def parse_number(value: Any) -> int | float | None:
    """A finite int or float from a number or its string form, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if _INTEGER.fullmatch(value):
            return int(value)
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int) and -_INT_LIMIT < value < _INT_LIMIT:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def _to_string(value: Any) -> Any:
    if isinstance(value, str):
        return value
    # Heat accepts numbers for string properties (a YAML `name: 42`).
    number = parse_number(value) if isinstance(value, int | float) else None
    return _INVALID if number is None else str(value)


def _to_integer(value: Any) -> Any:
    number = parse_number(value)
    if isinstance(number, float) and number.is_integer() and not isinstance(value, str):
        return int(number)
    return number if isinstance(number, int) else _INVALID


def _to_number(value: Any) -> Any:
    number = parse_number(value)
    return _INVALID if number is None else number


def _to_boolean(value: Any) -> Any:
    flag = parse_bool(value)
    return _INVALID if flag is None else flag


_CONVERTERS: Final[dict[PropertyType, tuple[str, Callable[[Any], Any]]]] = {
    "string": ("a string", _to_string),
    "integer": ("an integer", _to_integer),
    "number": ("a number", _to_number),
    "boolean": ("a boolean", _to_boolean),
    "map": ("a map", lambda v: v if isinstance(v, dict) else _INVALID),
    "list": ("a list", lambda v: v if isinstance(v, list) else _INVALID),
    "any": ("anything", lambda v: v),
}


def _allowed(value: Any, allowed: tuple[Any, ...]) -> bool:
    """Heat's `AllowedValues`: a list is allowed when each of its items is."""
    if isinstance(value, list):
        return all(item in allowed for item in value)
    return value in allowed


def convert_property(schema: PropertySchema, value: Any, field: str) -> Any:
    """`value` converted to the schema's type and checked against its constraints.

    A map or list with a nested schema has its entries converted too, as Heat's
    nested `Properties` are: unknown keys refused, required ones demanded, defaults
    filled in.
    """
    expected, convert = _CONVERTERS[schema.type]
    converted = convert(value)
    if converted is _INVALID:
        raise InvalidRequest(f"{field}: must be {expected}")
    if schema.allowed_values and not _allowed(converted, schema.allowed_values):
        allowed = ", ".join(str(v) for v in schema.allowed_values)
        raise InvalidRequest(f'{field}: "{converted}" is not an allowed value [{allowed}]')
    low, high = schema.minimum, schema.maximum
    if (low is not None and converted < low) or (high is not None and converted > high):
        raise InvalidRequest(f"{field}: {converted} is out of range (min: {low}, max: {high})")
    _check_length(schema, converted, field)
    if schema.pattern is not None and not re.fullmatch(schema.pattern, str(converted)):
        raise InvalidRequest(f'{field}: "{converted}" does not match pattern "{schema.pattern}"')
    if schema.custom_constraint is not None and isinstance(converted, str):
        problem = check_custom(schema.custom_constraint, converted)
        if problem is not None:
            raise InvalidRequest(f"{field}: Error validating value '{converted}': {problem}")
    if schema.nested is not None:
        return _convert_nested(schema.nested, converted, field)
    return converted


def _check_length(schema: PropertySchema, value: Any, field: str) -> None:
    if schema.min_length is None and schema.max_length is None:
        return
    if not isinstance(value, str | list | dict):
        return
    size, low, high = len(value), schema.min_length, schema.max_length
    if low is not None and size < low:
        raise InvalidRequest(f"{field}: length ({size}) must be at least {low}")
    if high is not None and size > high:
        raise InvalidRequest(f"{field}: length ({size}) must be no greater than {high}")


def _convert_nested(nested: Mapping[str, PropertySchema], value: Any, field: str) -> Any:
    if isinstance(value, list):
        item = nested.get("*")
        if item is None:
            return value
        return [
            None if v is None else convert_property(item, v, f"{field}[{i}]")
            for i, v in enumerate(value)
        ]
    if isinstance(value, dict):
        return _convert_map(nested, value, field)
    return value


def _convert_map(
    nested: Mapping[str, PropertySchema], value: Mapping[str, Any], field: str
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, entry in value.items():
        schema = nested.get(key)
        if schema is None:
            raise InvalidRequest(f"{field}: Unknown Property {key}")
        if entry is not None:
            result[key] = convert_property(schema, entry, f"{field}.{key}")
    for key, schema in nested.items():
        if key in result:
            continue
        if schema.required:
            raise InvalidRequest(f"{field}.{key}: property is required")
        if schema.default is not None:
            result[key] = schema.default
    return result


def _translated(
    translations: Mapping[str, str], props: Mapping[str, Any], field: str
) -> dict[str, Any]:
    """Deprecated names moved to their successors; both given is Heat's 400."""
    moved = dict(props)
    for old, new in translations.items():
        if moved.get(old) is None:
            moved.pop(old, None)
            continue
        if moved.get(new) is not None:
            raise InvalidRequest(
                f"{field}: Cannot define the following properties at the same time: {new}, {old}"
            )
        moved[new] = moved.pop(old)
    return moved


def check_properties(
    rtype: ResourceType, props: Mapping[str, Any], field: str, *, computed: Collection[str] = ()
) -> dict[str, Any]:
    """The properties converted to their types, defaults filled in; a bad one is a 400.

    Args:
        rtype: the resource's type.
        props: property name → value; a None value counts as not given (Heat's rule).
        field: path of the properties in messages, e.g. `resources.web.properties`.
        computed: names whose values are intrinsics: kept as they are, checked later.
    """
    if rtype.translations:
        props = _translated(rtype.translations, props, field)
        computed = {rtype.translations.get(n, n) for n in computed}
    result: dict[str, Any] = {}
    for name, value in props.items():
        schema = rtype.properties.get(name)
        if schema is None and not rtype.open_properties:
            raise InvalidRequest(f"{field}.{name}: unknown property for {rtype.name}")
        if value is not None:
            result[name] = (
                value
                if schema is None or name in computed
                else convert_property(schema, value, f"{field}.{name}")
            )
    for name, schema in rtype.properties.items():
        if name in result:
            continue
        if schema.required:
            raise InvalidRequest(f"{field}.{name}: property is required")
        if schema.default is not None:
            result[name] = schema.default
    if rtype.check is not None:
        rtype.check({k: v for k, v in result.items() if k not in computed}, field)
    return result
