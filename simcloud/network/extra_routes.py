"""A router's extra routes: `routes` on the router (`extraroute`) and their atomic
add and remove (`PUT /v2.0/routers/{id}/add_extraroutes`, `remove_extraroutes`,
`extraroute-atomic`), as Heat's `OS::Neutron::ExtraRouteSet` calls them.

Neutron's checks: each route is a `destination` CIDR and a `nexthop` address, and the
next hop must be on a subnet the router has an interface on (400 `InvalidRoutes`).
Adding a route the router has already, or removing one it has not, changes nothing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.identity import AuthToken
from simcloud.network.bodies import read_json
from simcloud.network.exceptions import http_bad_request
from simcloud.network.records import owned, touch
from simcloud.network.routers import check_nexthops, parse_routes
from simcloud.state import state_of

router = APIRouter(prefix="/v2.0/routers")


async def _routes_of(request: Request) -> list[dict[str, str]]:
    body = await read_json(request)
    item = body.get("router") if isinstance(body, dict) else None
    if not isinstance(item, dict) or set(item) != {"routes"}:
        raise http_bad_request("Bad Request: the body must be {'router': {'routes': [...]}}")
    return parse_routes(item["routes"])


@router.put("/{router_id}/add_extraroutes")
async def add_extraroutes(request: Request, router_id: str, token: AuthToken) -> Response:
    """Add routes to the router's (a route it has already stays once)."""
    state = state_of(request)
    record = owned(state, "routers", router_id, token.project_id, "update")
    wanted = await _routes_of(request)
    check_nexthops(state, record, wanted)
    record["routes"] = record["routes"] + [r for r in wanted if r not in record["routes"]]
    touch(state, record)
    return JSONResponse({"router": dict(record)})


@router.put("/{router_id}/remove_extraroutes")
async def remove_extraroutes(request: Request, router_id: str, token: AuthToken) -> Response:
    """Remove routes from the router's (one it has not got is ignored)."""
    state = state_of(request)
    record = owned(state, "routers", router_id, token.project_id, "update")
    gone = await _routes_of(request)
    record["routes"] = [r for r in record["routes"] if r not in gone]
    touch(state, record)
    return JSONResponse({"router": dict(record)})
