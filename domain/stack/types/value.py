"""`OS::Heat::Value`: a value worked out from parameters and other resources, read back as
its `value` attribute; typed by `type` as a parameter of that type is (Heat's `reparse`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.hot.properties import PropertySchema, convert_property
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Heat::Value"

#: A parameter type → the property type its value is checked and converted as.
_AS: Final = {
    "string": "string",
    "number": "number",
    "comma_delimited_list": "list",
    "json": "map",
    "boolean": "boolean",
}


def typed_value(props: Mapping[str, Any]) -> Any:
    """The `value` property as its `type` reads it (any value without a type)."""
    kind = _AS.get(str(props.get("type") or ""))
    value = props.get("value")
    if kind is None:
        return value
    return convert_property(PropertySchema(type=kind, required=True), value, "value")


def _check(props: Mapping[str, Any], field: str) -> None:
    """A value written in the template is checked against its type before anything runs
    (one a function works out is checked when the resource is made)."""
    if "value" in props and props.get("type"):
        try:
            typed_value(props)
        except InvalidRequest as err:
            raise InvalidRequest(f"{field}.{err.message}") from None


TYPE: Final = heat_type(NAME, check=_check)
