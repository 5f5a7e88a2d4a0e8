"""What a resource type backed by one cloud object is: its kind, body, changes, attributes.

Heat's Neutron, Cinder, Glance and Octavia resources are one object each in their
service's API. `ApiObjectType` holds the pure part of such a type (how properties
become the create body and the in-place update, how the object becomes the
resource's attributes); the one handler that does the calls is
`workflows/stack/resources/api_object.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.cloud_objects import Lookup
from domain.hot.properties import ResourceType


@dataclass(frozen=True)
class Request:
    """A request body and the names in it still to be resolved to ids."""

    body: dict[str, Any]
    lookups: tuple[Lookup, ...] = ()


#: (properties, physical name) → the create request.
BodyBuilder = Callable[[Mapping[str, Any], str], Request]
#: (properties before, properties after, physical name) → the in-place update.
ChangeBuilder = Callable[[Mapping[str, Any], Mapping[str, Any], str], Request]


@dataclass(frozen=True)
class ApiObjectType:
    """The pure side of a resource type that is one object of a cloud service."""

    rtype: ResourceType
    #: The object's kind in `activities.cloud.collections`.
    kind: str
    body: BodyBuilder
    #: Property → the body keys it fills (an update sends those of changed properties).
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The in-place update; by default the create body's keys of the changed properties.
    changes: ChangeBuilder | None = None
    #: Statuses the object must reach after a create or update (none: no wait).
    ready: tuple[str, ...] = ()
    failed: tuple[str, ...] = ("ERROR", "error")
    #: The status field to wait on.
    status_field: str = "status"
    #: Attribute name → the object's field, when they differ.
    attribute_fields: Mapping[str, str] = field(default_factory=dict)
    #: (property, kind) of the object it lives under (an Octavia member's pool).
    parent: tuple[str, str] | None = None

    def update_request(
        self, before: Mapping[str, Any], after: Mapping[str, Any], name: str
    ) -> Request:
        """What an in-place update from `before` to `after` sends."""
        if self.changes is not None:
            return self.changes(before, after, name)
        diff = changed(before, after)
        keys = {key for prop in diff for key in self.fields.get(prop, ())}
        full = self.body(after, name)
        body = {k: v for k, v in full.body.items() if k in keys}
        # A property set back to nothing clears the field: a list is sent empty (Heat:
        # `allocation_pools` removed → []), anything else as null.
        for prop in diff:
            schema = self.rtype.properties.get(prop)
            empty: Any = [] if schema is not None and schema.type == "list" else None
            body |= {k: empty for k in self.fields.get(prop, ()) if k not in body and k != "name"}
        return Request(body, tuple(lk for lk in full.lookups if lk.path[0] in body))

    def attributes(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The resource's attributes from the object (Heat reads most from `show`)."""
        found = {
            name: obj.get(self.attribute_fields.get(name, name))
            for name in self.rtype.attributes
            if name != "show"
        }
        return found | {"show": dict(obj)}


def physical_name(stack_name: str, resource: str, resource_id: str) -> str:
    """Heat's `physical_resource_name()`: `<stack>-<resource>-<short id>`."""
    return f"{stack_name}-{resource}-{resource_id.replace('-', '')[:12]}"


def given(props: Mapping[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    """The set properties among `renames`, under their API names."""
    return {api: props[p] for p, api in renames.items() if props.get(p) is not None}


def with_value_specs(body: dict[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
    """Heat's `value_specs`: extra keys passed to the API as they are."""
    return body | dict(props.get("value_specs") or {})


def lookup(path: tuple[str | int, ...], kind: str, ref: Any, fld: str = "id") -> Lookup:
    """A name-or-id at `path` to resolve to the `fld` of the `kind` it names."""
    return Lookup(path=path, kind=kind, ref=str(ref), field=fld)


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> set[str]:
    """Names of the properties whose values differ."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def fields_of(renames: Mapping[str, str], **more: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """`ApiObjectType.fields` from a property → API name map, plus properties filling more."""
    return {prop: (api,) for prop, api in renames.items()} | more
