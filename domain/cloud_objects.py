"""What stack workflows ask of the cloud's object APIs (Neutron, Glance, Cinder, Octavia).

One shape for every kind: a create carries the service's own body plus the names
in it still to be resolved to ids (`Lookup`), so a template may say
`network: private` as Heat allows and the activity, which may do I/O, finds the id.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: A place in a request body: keys and list indexes, e.g. ("fixed_ips", 0, "subnet_id");
#: empty for a lookup that is not put in a body (a parent's id).
BodyPath = tuple[str | int, ...]


class Lookup(BaseModel):
    """A name or id in a body, to be replaced by the id of the `kind` it names."""

    model_config = ConfigDict(frozen=True)

    path: BodyPath
    kind: str
    ref: str
    #: The looked-up object's field to put there (`id`, or `network_id` of a subnet).
    field: str = "id"


class CloudCreate(BaseModel):
    """Create one object; `request_id` makes a retried create find the first one."""

    model_config = ConfigDict(frozen=True)

    kind: str
    body: dict[str, Any]
    request_id: str
    lookups: tuple[Lookup, ...] = ()
    #: The parent's id, or its name to look up (an Octavia member's pool).
    parent: Lookup | None = None


class CloudRef(BaseModel):
    """One object by id (and parent id, for a nested collection)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    id: str
    parent: str | None = None


class CloudUpdate(BaseModel):
    """Change fields of one object in place."""

    model_config = ConfigDict(frozen=True)

    ref: CloudRef
    changes: dict[str, Any]
    lookups: tuple[Lookup, ...] = ()


class CloudAction(BaseModel):
    """A call beside CRUD on one object: `PUT /routers/{id}/add_router_interface`, …"""

    model_config = ConfigDict(frozen=True)

    ref: CloudRef
    method: str = "PUT"
    #: Appended to the object's path, e.g. `/add_router_interface`.
    suffix: str
    body: dict[str, Any] = Field(default_factory=dict)
    lookups: tuple[Lookup, ...] = ()
    #: A 404 or 409 the caller means as "done already" (removing a gone interface).
    tolerate: tuple[int, ...] = ()
    #: `ref.id` may be a name: look the object up first (a template's `router: r1`).
    find_target: bool = False


class CloudWait(BaseModel):
    """Wait until the object's status field reaches one of `ready`."""

    model_config = ConfigDict(frozen=True)

    ref: CloudRef
    field: str = "status"
    ready: tuple[str, ...]
    #: Statuses that end the wait with a failure.
    failed: tuple[str, ...] = ("ERROR", "error")


class CloudObject(BaseModel):
    """An object as its service shows it."""

    model_config = ConfigDict(frozen=True)

    kind: str
    id: str
    body: dict[str, Any]
    parent: str | None = None

    def ref(self) -> CloudRef:
        """This object's reference."""
        return CloudRef(kind=self.kind, id=self.id, parent=self.parent)
