"""The resource types a template may use, with Heat's property schemas and attributes.

`check_properties()` is the one place a resource's properties meet their schema: the
template loader calls it with the intrinsic-valued names in `computed` (checked later,
once resolved), and property resolution calls it again with every value known.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from domain.clusters import MAX_CAPACITY
from domain.errors import InvalidRequest

PropertyType = Literal["string", "integer", "number", "boolean", "map", "list", "any"]

NONE: Final = "OS::Heat::None"
RANDOM_STRING: Final = "OS::Heat::RandomString"
TEST_RESOURCE: Final = "OS::Heat::TestResource"
SERVER: Final = "OS::Nova::Server"
STACK: Final = "OS::Heat::Stack"
AUTO_SCALING_GROUP: Final = "OS::Heat::AutoScalingGroup"
SCALING_POLICY: Final = "OS::Heat::ScalingPolicy"

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
    minimum: int | None = None
    maximum: int | None = None
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
    description: str = ""
    #: What each attribute holds, for `GET /resource_types/{type}` (Heat's wording).
    attribute_docs: dict[str, str] = {}

    def updatable(self, name: str) -> bool:
        """Whether a change of property `name` can be applied without replacement."""
        schema = self.properties.get(name)
        if schema is None:
            return self.open_properties
        return schema.update_allowed and not self.replace_on_any_change


def _schema(kind: PropertyType, **options: Any) -> PropertySchema:
    return PropertySchema(type=kind, **options)


_SEQUENCES = (
    "lettersdigits",
    "letters",
    "lowercase",
    "uppercase",
    "digits",
    "hexdigits",
    "octdigits",
)
_SIZE = {"minimum": 0, "maximum": MAX_CAPACITY, "update_allowed": True}
_SECONDS = {"minimum": 0, "maximum": 86_400, "update_allowed": True}

_DOC: Final = {
    "value": "The input string to be stored.",
    "fail": "Value which can be set to fail the resource operation to test failure scenarios.",
    "wait_secs": "Seconds to wait after an action (action_wait_secs overrides it per action).",
    "action_wait_secs": "Options for simulating waiting: seconds after create, update, delete.",
    "replace": "Value which can be set to trigger update replace for the particular resource.",
    "output": "The string that was stored. This value is also available by referencing "
    "the resource.",
}

RESOURCE_TYPES: Final[dict[str, ResourceType]] = {
    t.name: t
    for t in (
        ResourceType(
            name=NONE,
            properties={},
            open_properties=True,
            attributes=frozenset(),
            open_attributes=True,
        ),
        ResourceType(
            name=RANDOM_STRING,
            properties={
                "length": _schema("integer", default=32, minimum=1, maximum=512),
                "sequence": _schema(
                    "string",
                    default="lettersdigits",
                    allowed_values=_SEQUENCES,
                ),
                "salt": _schema("string"),
            },
            attributes=frozenset({"value"}),
            replace_on_any_change=True,
        ),
        ResourceType(
            name=TEST_RESOURCE,
            properties={
                "value": _schema(
                    "string", default="", update_allowed=True, description=_DOC["value"]
                ),
                "fail": _schema(
                    "boolean", default=False, update_allowed=True, description=_DOC["fail"]
                ),
                "wait_secs": _schema(
                    "number", default=0, description=_DOC["wait_secs"], **_SECONDS
                ),
                "action_wait_secs": _schema(
                    "map", update_allowed=True, description=_DOC["action_wait_secs"]
                ),
                "update_replace": _schema(
                    "boolean", default=False, update_allowed=True, description=_DOC["replace"]
                ),
            },
            attributes=frozenset({"output"}),
            description="A resource which stores the string value that was provided.",
            attribute_docs={"output": _DOC["output"]},
        ),
        ResourceType(
            name=SERVER,
            properties={
                "name": _schema("string"),
                "image": _schema("string", required=True, update_allowed=True),
                "flavor": _schema("string", required=True),
                "metadata": _schema("map"),
            },
            attributes=frozenset({"name", "addresses", "networks", "show"}),
            can_lock=True,
        ),
        ResourceType(
            name=STACK,
            properties={
                "template": _schema("any", required=True, update_allowed=True),
                "parameters": _schema("map", update_allowed=True),
                "timeout": _schema("integer", minimum=1, maximum=10_080, update_allowed=True),
            },
            attributes=frozenset({"outputs"}),
            nested_properties=frozenset({"template"}),
        ),
        ResourceType(
            name=AUTO_SCALING_GROUP,
            properties={
                "min_size": _schema("integer", required=True, **_SIZE),
                "max_size": _schema("integer", required=True, **_SIZE),
                "desired_capacity": _schema("integer", **_SIZE),
                "cooldown": _schema("integer", **_SECONDS),
                "resource": _schema("map", required=True, update_allowed=True),
            },
            attributes=frozenset({"outputs", "outputs_list", "current_size", "refs", "refs_map"}),
            nested_properties=frozenset({"resource"}),
        ),
        ResourceType(
            name=SCALING_POLICY,
            properties={
                "auto_scaling_group_id": _schema("string", required=True, update_allowed=True),
                "adjustment_type": _schema(
                    "string",
                    required=True,
                    update_allowed=True,
                    allowed_values=(
                        "change_in_capacity",
                        "exact_capacity",
                        "percent_change_in_capacity",
                    ),
                ),
                "scaling_adjustment": _schema("number", required=True, update_allowed=True),
                "cooldown": _schema("integer", **_SECONDS),
                "min_adjustment_step": _schema("integer", **_SIZE),
            },
            attributes=frozenset({"alarm_url", "signal_url"}),
        ),
    )
}


def resource_type(name: str) -> ResourceType:
    """The registered type called `name`; anything else is a 400 with Heat's wording."""
    found = RESOURCE_TYPES.get(name)
    if found is None:
        raise InvalidRequest(f"The Resource Type ({name}) could not be found.")
    return found


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


def convert_property(schema: PropertySchema, value: Any, field: str) -> Any:
    """`value` converted to the schema's type and checked against its constraints."""
    expected, convert = _CONVERTERS[schema.type]
    converted = convert(value)
    if converted is _INVALID:
        raise InvalidRequest(f"{field}: must be {expected}")
    if schema.allowed_values and converted not in schema.allowed_values:
        allowed = ", ".join(str(v) for v in schema.allowed_values)
        raise InvalidRequest(f'{field}: "{converted}" is not an allowed value [{allowed}]')
    low, high = schema.minimum, schema.maximum
    if (low is not None and converted < low) or (high is not None and converted > high):
        raise InvalidRequest(f"{field}: {converted} is out of range (min: {low}, max: {high})")
    return converted


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
    _SPECIAL_CHECKS.get(rtype.name, _no_check)(
        {k: v for k, v in result.items() if k not in computed}, field
    )
    return result


def _no_check(props: Mapping[str, Any], field: str) -> None:
    return None


def _check_action_wait_secs(props: Mapping[str, Any], field: str) -> None:
    waits = props.get("action_wait_secs")
    if waits is None:
        return
    for action, seconds in waits.items():
        path = f"{field}.action_wait_secs.{action}"
        if action not in ("create", "update", "delete"):
            raise InvalidRequest(f"{path}: unknown action (create, update or delete)")
        number = parse_number(seconds)
        if not isinstance(number, int) or not 0 <= number <= 86_400:
            raise InvalidRequest(f"{path}: must be an integer between 0 and 86400")


def _check_group_sizes(props: Mapping[str, Any], field: str) -> None:
    low, high = props.get("min_size"), props.get("max_size")
    desired = props.get("desired_capacity")
    if low is not None and high is not None and low > high:
        raise InvalidRequest(f"{field}.min_size: min_size can not be greater than max_size")
    if desired is not None and (
        (low is not None and desired < low) or (high is not None and desired > high)
    ):
        raise InvalidRequest(
            f"{field}.desired_capacity: desired_capacity must be between min_size and max_size"
        )


_SPECIAL_CHECKS: Final[dict[str, Callable[[Mapping[str, Any], str], None]]] = {
    TEST_RESOURCE: _check_action_wait_secs,
    AUTO_SCALING_GROUP: _check_group_sizes,
}
