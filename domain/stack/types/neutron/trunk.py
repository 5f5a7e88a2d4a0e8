"""`OS::Neutron::Trunk`: a parent port and its sub-ports (Neutron's `trunk` extension).

Its name, description and `admin_state_up` change in place (`PUT /trunks/{id}`); a
change of `sub_ports` removes the sub-ports no longer listed, then adds the new ones
(`remove_subports`, `add_subports`), as Heat's `Trunk.handle_update` does: a port
cannot be two sub-ports at once, so the old go first. A new parent `port` replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from domain.stack.types.api_object import (
    ApiObjectType,
    Request,
    fields_of,
    given,
    lookup,
)
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Neutron::Trunk"
FIELDS: Final = {"name": "name", "description": "description", "admin_state_up": "admin_state_up"}


def sub_ports_request(sub_ports: Sequence[Mapping[str, Any]], *, removal: bool = False) -> Request:
    """The body of `add_subports` (or, with `removal`, `remove_subports`), ports looked up."""
    items: list[dict[str, Any]] = []
    lookups = []
    for i, sub in enumerate(sub_ports):
        item: dict[str, Any] = {"port_id": sub["port"]}
        if not removal:
            item |= {
                "segmentation_type": sub["segmentation_type"],
                "segmentation_id": sub["segmentation_id"],
            }
        items.append(item)
        lookups.append(lookup(("sub_ports", i, "port_id"), "port", sub["port"]))
    return Request({"sub_ports": items}, tuple(lookups))


def sub_port_changes(
    before: Sequence[Mapping[str, Any]] | None, after: Sequence[Mapping[str, Any]] | None
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(sub-ports to remove, sub-ports to add): Heat's set difference of whole entries,
    so a sub-port whose segmentation changed is removed and added again."""
    old, new = list(before or []), list(after or [])
    return [s for s in old if s not in new], [s for s in new if s not in old]


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name, "port_id": props["port"]}
    subs = sub_ports_request(props.get("sub_ports") or [])
    body["sub_ports"] = subs.body["sub_ports"]
    return Request(body, (lookup(("port_id",), "port", props["port"]), *subs.lookups))


TYPE: Final = heat_type(NAME)
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="trunk",
    body=_body,
    fields=fields_of(FIELDS),
    attribute_fields={"port_id": "port_id"},
)
