"""The profile and policy types Warden runs, described as Senlin's type API shows them.

`GET /v1/profile-types` and `/v1/policy-types` list them; `GET …/{name}-{version}` shows
one with its property schema, in Senlin's own format (`type` String, Integer, Number,
Boolean, Map or List; `required`; `updatable`; `default`; `description`; `constraints`
of type AllowedValues; a nested `schema` for a Map's properties or, under `*`, a List's
items). The schema is derived from the same pydantic models that validate a spec, so
what the API shows is what it accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from domain.cluster.policies.specs import policy_type_models
from domain.cluster.profiles import PROFILE_TYPE, VERSIONS, ServerProperties
from domain.cluster.stack_profile import STACK_PROFILE_TYPE, STACK_VERSIONS, StackProperties
from domain.errors import NotFound

_SENLIN_TYPES: Final = {
    "string": "String",
    "integer": "Integer",
    "number": "Number",
    "boolean": "Boolean",
    "object": "Map",
    "array": "List",
}
#: When Senlin first supported each version (its `VERSIONS`), which clients show as is.
_SINCE: Final = {
    **{(PROFILE_TYPE, version): since for version, since in VERSIONS.items()},
    **{(STACK_PROFILE_TYPE, version): since for version, since in STACK_VERSIONS.items()},
    ("senlin.policy.deletion", "1.1"): "2018.01",
    ("senlin.policy.health", "1.1"): "2018.09",
    ("senlin.policy.batch", "1.0"): "2017.02",
    ("senlin.policy.affinity", "1.0"): "2016.10",
}


@dataclass(frozen=True)
class SpecType:
    """One profile or policy type at one version Warden accepts."""

    name: str
    version: str
    properties: type[BaseModel]

    @property
    def full_name(self) -> str:
        """`os.nova.server-1.0`: how Senlin names a type in URLs and before 1.5."""
        return f"{self.name}-{self.version}"

    def support_status(self) -> dict[str, list[dict[str, str]]]:
        """Senlin's `support_status` in a list: this version, supported."""
        return {self.version: _supported(self.name, self.version)}

    def all_support_status(self) -> dict[str, list[dict[str, str]]]:
        """Senlin's `support_status` of a shown type: its plugin's whole `VERSIONS`, every
        version Warden accepts of this type."""
        return {t.version: _supported(t.name, t.version) for t in _ALL if t.name == self.name}

    def listed(self, *, versioned: bool) -> dict[str, Any]:
        """A list entry: `{name, version, support_status}` from microversion 1.5, else
        `{name: "<name>-<version>"}`."""
        if not versioned:
            return {"name": self.full_name}
        return {
            "name": self.name,
            "version": self.version,
            "support_status": self.support_status(),
        }

    def shown(self, *, versioned: bool) -> dict[str, Any]:
        """The type with its schema (and, from 1.5, its support status)."""
        shown: dict[str, Any] = {
            "name": self.full_name,
            "schema": senlin_schema(self.properties),
        }
        if versioned:
            shown["support_status"] = self.all_support_status()
        return shown


def _supported(name: str, version: str) -> list[dict[str, str]]:
    return [{"status": "SUPPORTED", "since": _SINCE.get((name, version), "")}]


#: One schema serves both server versions, as one Senlin class serves them.
PROFILE_TYPES: Final = (
    *(SpecType(PROFILE_TYPE, version, ServerProperties) for version in VERSIONS),
    *(SpecType(STACK_PROFILE_TYPE, version, StackProperties) for version in STACK_VERSIONS),
)
POLICY_TYPES: Final = tuple(
    SpecType(name, version, model) for name, version, model in policy_type_models()
)
_ALL: Final = (*PROFILE_TYPES, *POLICY_TYPES)


def find_type(types: tuple[SpecType, ...], type_name: str, kind: str) -> SpecType:
    """The type named `<name>-<version>` (or just `<name>`); Senlin's 404 otherwise."""
    for spec_type in types:
        if type_name in (spec_type.full_name, spec_type.name):
            return spec_type
    raise NotFound(f"The {kind} '{type_name}' could not be found.")


def senlin_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s properties in Senlin's schema format."""
    root = model.model_json_schema()
    return _properties(root, root.get("$defs", {}))


def _properties(node: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    required = set(node.get("required", ()))
    return {
        name: _property(sub, defs, required=name in required)
        for name, sub in node.get("properties", {}).items()
    }


def _property(
    node: Mapping[str, Any], defs: Mapping[str, Any], *, required: bool
) -> dict[str, Any]:
    inner = _resolved(node, defs)
    out: dict[str, Any] = {
        "type": _SENLIN_TYPES.get(str(inner.get("type")), "Map"),
        "required": required,
        "updatable": False,
    }
    description = node.get("description") or inner.get("description")
    bounds = _bounds(inner)
    if description or bounds:
        out["description"] = " ".join(part for part in (description, bounds) if part)
    default = node.get("default", inner.get("default"))
    if default is not None:
        out["default"] = default
    allowed = _allowed(inner)
    if allowed:
        out["constraints"] = [{"type": "AllowedValues", "constraint": list(allowed)}]
    if "properties" in inner:
        out["schema"] = _properties(inner, defs)
    elif isinstance(inner.get("items"), Mapping):
        out["schema"] = {"*": _property(inner["items"], defs, required=False)}
    return out


def _resolved(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema `node` stands for: a `$ref` followed, an optional's `null` dropped, and
    a choice of objects (a detection mode of one `type` or another) merged into one."""
    if "$ref" in node:
        return _resolved(defs[str(node["$ref"]).rsplit("/", 1)[-1]], defs)
    union = [*node.get("anyOf", ()), *node.get("oneOf", ())]
    choices = [_resolved(c, defs) for c in union if c.get("type") != "null"]
    if len(choices) == 1:
        return choices[0]
    if choices and all("properties" in c for c in choices):
        return {"type": "object", "properties": _merged(choices, defs)}
    return node


def _merged(choices: list[Mapping[str, Any]], defs: Mapping[str, Any]) -> dict[str, Any]:
    """The properties of several objects; a property they share with different fixed
    values (their `type`) takes all of those values, one that is an object in each takes
    all of their fields."""
    merged: dict[str, Any] = {}
    for choice in choices:
        for name, sub in choice["properties"].items():
            known = merged.get(name)
            if known is None:
                merged[name] = dict(_resolved(sub, defs))
                continue
            other = _resolved(sub, defs)
            values = [*_allowed(known), *_allowed(other)]
            if values:
                merged[name] = {**known, "enum": list(dict.fromkeys(values))}
                merged[name].pop("const", None)
            elif "properties" in known and "properties" in other and known != other:
                # Each choice's own `options`: all of their fields, no one's description.
                merged[name] = {"type": "object", "properties": _merged([known, other], defs)}
    return merged


def _allowed(node: Mapping[str, Any]) -> list[Any]:
    return list(node.get("enum") or ([node["const"]] if "const" in node else []))


def _bounds(node: Mapping[str, Any]) -> str:
    """Limits Senlin's format has no constraint for, said in words."""
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f"({low} to {high})"
    if low is not None:
        return f"(at least {low})"
    if high is not None:
        return f"(at most {high})"
    if node.get("maxLength") is not None:
        return f"(at most {node['maxLength']} characters)"
    return ""
