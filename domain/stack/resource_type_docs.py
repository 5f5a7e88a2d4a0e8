"""What `GET /resource_types/{type}` and `…/{type}/template` show: Heat's schema format
and a generated template using every property as a parameter."""

from __future__ import annotations

from typing import Any, Final

from domain.errors import NotFound
from domain.hot.versions import LATEST
from domain.stack.resource_types import RESOURCE_TYPES, PropertySchema, ResourceType

#: Heat's parameter type for each property type.
_PARAMETER_TYPES: Final = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "map": "json",
    "list": "comma_delimited_list",
    "any": "json",
}


def known_type(name: str) -> ResourceType:
    """The resource type called `name` (404, as Heat, for one this Warden does not have)."""
    found = RESOURCE_TYPES.get(name)
    if found is None:
        raise NotFound(f"The Resource Type ({name}) could not be found.")
    return found


def _constraints(schema: PropertySchema) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if schema.allowed_values:
        found.append({"allowed_values": list(schema.allowed_values)})
    if schema.minimum is not None or schema.maximum is not None:
        bounds = {"min": schema.minimum, "max": schema.maximum}
        found.append({"range": {k: v for k, v in bounds.items() if v is not None}})
    if schema.min_length is not None or schema.max_length is not None:
        bounds = {"min": schema.min_length, "max": schema.max_length}
        found.append({"length": {k: v for k, v in bounds.items() if v is not None}})
    if schema.pattern is not None:
        found.append({"allowed_pattern": schema.pattern})
    if schema.custom_constraint is not None:
        found.append({"custom_constraint": schema.custom_constraint})
    return found


def property_schema(schema: PropertySchema) -> dict[str, Any]:
    """One property in Heat's schema format."""
    shown: dict[str, Any] = {
        "type": schema.type if schema.type != "any" else "map",
        "description": schema.description,
        "required": schema.required,
        "update_allowed": schema.update_allowed,
        "immutable": schema.immutable,
    }
    if schema.default is not None:
        shown["default"] = schema.default
    if constraints := _constraints(schema):
        shown["constraints"] = constraints
    if schema.nested is not None:
        shown["schema"] = {k: property_schema(v) for k, v in sorted(schema.nested.items())}
    return shown


def resource_schema(rtype: ResourceType) -> dict[str, Any]:
    """Heat's `resource_schema` answer for `rtype`."""
    return {
        "resource_type": rtype.name,
        "description": rtype.description,
        "properties": {
            n: property_schema(s)
            for n, s in sorted(rtype.properties.items())
            if n not in rtype.hidden
        },
        "attributes": {
            name: {"description": rtype.attribute_docs.get(name, "")}
            for name in sorted(rtype.attributes - rtype.hidden)
        },
        "support_status": {
            "status": "SUPPORTED",
            "version": None,
            "message": None,
            "previous_status": None,
        },
    }


def generated_template(rtype: ResourceType) -> dict[str, Any]:
    """Heat's `generate_template` (HOT): each property a parameter, each attribute an output."""
    resource = rtype.name.rsplit("::", 1)[-1]
    parameters = {}
    for name, schema in sorted(rtype.properties.items()):
        if name in rtype.hidden:
            continue
        param: dict[str, Any] = {
            "type": _PARAMETER_TYPES[schema.type],
            "description": schema.description,
        }
        if schema.default is not None:
            param["default"] = schema.default
        parameters[name] = param
    return {
        "heat_template_version": LATEST,
        "description": f"Initial template of {resource}",
        "parameters": parameters,
        "resources": {
            resource: {
                "type": rtype.name,
                "properties": {name: {"get_param": name} for name in parameters},
            }
        },
        "outputs": {
            name: {
                "description": rtype.attribute_docs.get(name, ""),
                "value": {"get_attr": [resource, name]},
            }
            for name in sorted(rtype.attributes - rtype.hidden)
        },
    }
