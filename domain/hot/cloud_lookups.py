"""Heat's custom constraints that name a cloud object (`nova.flavor`, `glance.image`, …).

Heat checks them before it makes anything (`Stack.validate`: the parameters, then each
resource's properties), so a template naming a flavor or a key pair the cloud does not
have is a 400 at create, preview and validate, not a resource failing minutes later.
This module finds what to look up and words what was not found as Heat's client
plugins do; the worker does the looking (`activities.cloud_lookups`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from domain.hot.functions import intrinsic, static_properties
from domain.hot.properties import PropertySchema
from domain.hot.template import Template, conditioned
from domain.stack.resource_types import RESOURCE_TYPES


@dataclass(frozen=True)
class Finder:
    """How a constraint's object is found, and Heat's words when it is not."""

    #: The driver's collection (`activities.cloud.collections.COLLECTIONS`).
    kind: str
    #: `{value}` → why nothing was found.
    missing: str
    #: `{value}` → why several were (a name shared by more than one object).
    ambiguous: str


def _neutron(kind: str) -> Finder:
    return Finder(
        kind,
        f"Unable to find {kind} with name or id '{{value}}'",
        f"Multiple {kind} matches found for name '{{value}}', use an ID to be more specific.",
    )


#: The constraints Warden looks up, with Heat's messages (its client plugins').
FINDERS: Final[dict[str, Finder]] = {
    "nova.flavor": Finder(
        "flavor",
        "No Flavor matching {{'name': '{value}'}}. (HTTP 404)",
        "Multiple Flavor matches found for {{'name': '{value}'}}. (HTTP 409)",
    ),
    "nova.keypair": Finder(
        "keypair", "The Key ({value}) could not be found.", "The Key ({value}) is ambiguous."
    ),
    "glance.image": Finder(
        "image",
        "No images matching {{'name': '{value}'}}.",
        "No images unique match found for {{'name': '{value}'}}.",
    ),
    "cinder.volume": Finder(
        "volume",
        "The Volume ({value}) could not be found.",
        "Multiple volumes are named {value}.",
    ),
    **{f"neutron.{kind}": _neutron(kind) for kind in ("network", "subnet", "port", "router")},
    "neutron.security_group": _neutron("security_group"),
    **{f"octavia.{kind}": _neutron(kind) for kind in ("loadbalancer", "listener", "pool")},
    "octavia.flavor": Finder(
        "lb_flavor",
        "Unable to find flavor with name or id '{value}'",
        "Multiple flavor matches found for name '{value}', use an ID to be more specific.",
    ),
}


#: Not Heat's (its servers' zones are not checked): Senlin's profile validation and
#: zone placement policy look zones up in Nova's list.
AVAILABILITY_ZONE: Final = "nova.availability_zone"
FINDERS[AVAILABILITY_ZONE] = Finder(
    "availability_zone",
    "The specified availability_zone '{value}' could not be found",
    "The specified availability_zone '{value}' could not be found",
)


class ConstraintCheck(BaseModel):
    """One value the cloud must have, and where the template gave it."""

    model_config = ConfigDict(frozen=True)

    constraint: str
    value: str
    #: `parameters.flavor` or `resources.server.properties.flavor`.
    field: str
    #: The whole message when the cloud lacks it, for an API whose words are not
    #: Heat's (Senlin's "The specified flavor 'x' could not be found.").
    missing: str | None = None

    def refusal(self, problem: str) -> str:
        """The 400's message, as Heat's custom constraint words it (or `missing`)."""
        if self.missing is not None:
            return self.missing
        return f"{self.field}: Error validating value '{self.value}': {problem}"


def template_lookups(template: Template, params: Mapping[str, Any]) -> list[ConstraintCheck]:
    """What to look up before `template` is made with `params` (resolved values):
    parameters first, then each resource's properties, as Heat validates them; a
    property whose value is computed (`get_resource`, `get_attr`) is checked by its
    resource's create."""
    found: list[ConstraintCheck] = []
    for name, param in template.parameters.items():
        value = params.get(name)
        for constraint in param.custom_constraints:
            found.extend(_lookups(constraint, value, f"parameters.{name}"))
    for res in conditioned(template, params).resources.values():
        rtype = RESOURCE_TYPES.get(res.type)
        if rtype is None:
            continue  # a template resource: its own template is checked as it is made
        props = static_properties(res, params)
        field = f"resources.{res.name}.properties"
        for prop, value in props.items():
            schema = rtype.properties.get(prop)
            if schema is not None:
                found.extend(_property_lookups(schema, value, f"{field}.{prop}"))
    return found


def _lookups(constraint: str, value: Any, field: str) -> Iterator[ConstraintCheck]:
    if constraint not in FINDERS:
        return
    values = value if isinstance(value, list) else [value]
    for item in values:
        if isinstance(item, str) and item:
            yield ConstraintCheck(constraint=constraint, value=item, field=field)


def _property_lookups(schema: PropertySchema, value: Any, field: str) -> Iterator[ConstraintCheck]:
    if value is None or intrinsic(value) is not None:
        return
    if schema.custom_constraint is not None:
        yield from _lookups(schema.custom_constraint, value, field)
    if schema.nested is None:
        return
    if isinstance(value, list) and "*" in schema.nested:
        for i, item in enumerate(value):
            yield from _property_lookups(schema.nested["*"], item, f"{field}[{i}]")
    elif isinstance(value, dict):
        for key, entry in value.items():
            nested = schema.nested.get(key)
            if nested is not None:
                yield from _property_lookups(nested, entry, f"{field}.{key}")
