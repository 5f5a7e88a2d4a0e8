"""Resource types built from Heat's own schemas (`heat_schemas.json`).

The JSON is what Heat's `GET /resource_types/{type}` answers, dumped from the real Heat
by `scripts/dump_heat_schemas.py`: property names, types, defaults, constraints,
nested schemas and `update_allowed` are Heat's, not a copy typed by hand. Where
Warden replaces a resource Heat would update in place, the type says so
(`replaced_on`) and the schema it shows says `update_allowed: false`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from domain.hot.properties import PropertySchema, ResourceType

_HEAT_TYPES = {"string", "integer", "number", "boolean", "map", "list"}


@cache
def heat_schemas() -> Mapping[str, Any]:
    """The dumped schemas: `{"heat_version", "types": {name: resource_schema}}`."""
    text = resources.files("domain.stack.types").joinpath("heat_schemas.json").read_text()
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


def heat_property(doc: Mapping[str, Any]) -> PropertySchema:
    """One property of Heat's schema format as Warden's `PropertySchema`."""
    kind = doc.get("type", "string")
    options: dict[str, Any] = {
        "type": kind if kind in _HEAT_TYPES else "any",
        "required": bool(doc.get("required")),
        "default": doc.get("default"),
        "update_allowed": bool(doc.get("update_allowed")),
        "immutable": bool(doc.get("immutable")),
        "description": doc.get("description") or "",
    }
    for constraint in doc.get("constraints") or ():
        options.update(_constraint(constraint, options))
    nested = doc.get("schema")
    if isinstance(nested, Mapping):
        options["nested"] = {key: heat_property(inner) for key, inner in nested.items()}
    return PropertySchema(**options)


def _constraint(constraint: Mapping[str, Any], seen: Mapping[str, Any]) -> dict[str, Any]:
    """Warden's fields for one Heat constraint (the first of each kind wins)."""
    if "allowed_values" in constraint and "allowed_values" not in seen:
        return {"allowed_values": tuple(constraint["allowed_values"])}
    if "range" in constraint and "minimum" not in seen and "maximum" not in seen:
        bounds = constraint["range"]
        return {"minimum": bounds.get("min"), "maximum": bounds.get("max")}
    if "length" in constraint and "min_length" not in seen:
        bounds = constraint["length"]
        return {"min_length": bounds.get("min"), "max_length": bounds.get("max")}
    if "allowed_pattern" in constraint and "pattern" not in seen:
        return {"pattern": constraint["allowed_pattern"]}
    if "custom_constraint" in constraint and "custom_constraint" not in seen:
        return {"custom_constraint": constraint["custom_constraint"]}
    return {}


def heat_type(
    name: str, *, replaced_on: frozenset[str] = frozenset(), **fields: Any
) -> ResourceType:
    """The resource type `name` with Heat's schema; `fields` as ResourceType's.

    Args:
        name: the Heat type name, e.g. `OS::Neutron::Net`.
        replaced_on: properties Heat updates in place that Warden replaces the
            resource for (shown as `update_allowed: false`).
        fields: the rest of `ResourceType` (`can_lock`, `check`, `translations`, …).
    """
    doc = heat_schemas()["types"][name]
    properties = {}
    every = doc["properties"] | doc.get("hidden_properties", {})
    for prop_name, prop_doc in every.items():
        schema = heat_property(prop_doc)
        if prop_name in replaced_on:
            schema = schema.model_copy(update={"update_allowed": False})
        properties[prop_name] = schema
    attributes = doc["attributes"]
    hidden = set(doc.get("hidden_properties", {})) | set(doc.get("hidden_attributes", {}))
    return ResourceType(
        name=name,
        properties=properties,
        attributes=frozenset(attributes) | frozenset(doc.get("hidden_attributes", {})),
        hidden=frozenset(hidden),
        attribute_docs={a: str(d.get("description") or "") for a, d in attributes.items()},
        description=str(doc.get("description") or ""),
        **fields,
    )
