"""`OS::Neutron::ExtraRouteSet`: extra routes of a router, through Neutron's
`extraroute-atomic` calls (`add_extraroutes`, `remove_extraroutes`).

As in Heat: the physical id is the router's (a route set has none of its own); a route
the router has already is refused at create and update (`The physical resource for
(<router>,<destination>=<nexthop>) exists.`: another stack or a person owns it); an
update removes the routes no longer listed, then adds the new ones, leaving the others
in place; delete removes the set's routes and no others. A new `router` replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Neutron::ExtraRouteSet"

Route = Mapping[str, Any]


def routes_of(props: Mapping[str, Any]) -> list[dict[str, str]]:
    """The set's routes as Neutron takes them."""
    return [
        {"destination": str(r["destination"]), "nexthop": str(r["nexthop"])}
        for r in props.get("routes") or []
    ]


def route_changes(
    before: Sequence[Route], after: Sequence[Route]
) -> tuple[list[Route], list[Route]]:
    """(routes to remove, routes to add): Heat's set difference."""
    return [r for r in before if r not in after], [r for r in after if r not in before]


def ensure_not_there(router: str, existing: Sequence[Route], adding: Sequence[Route]) -> None:
    """Heat's `_raise_if_duplicate`: a route the router has already is someone else's."""
    for route in adding:
        if route in existing:
            name = f"{router},{route['destination']}={route['nexthop']}"
            raise InvalidRequest(f"The physical resource for ({name}) exists.")


TYPE: Final = heat_type(NAME)
