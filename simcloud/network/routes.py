"""Neutron v2.0 routes, under the catalog's `network` endpoint (`/networking`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute

from simcloud.identity import AuthToken, base_url
from simcloud.network import (
    extensions,
    extra_routes,
    floating_ips,
    networks,
    port_routes,
    quotas,
    router_interfaces,
    routers,
    security_group_rules,
    security_groups,
    subnets,
    tags,
    trunks,
)
from simcloud.network.exceptions import fault

router = APIRouter(prefix="/networking")

#: (member name, collection) of the core resources `GET /v2.0` lists.
CORE_RESOURCES = (("subnet", "subnets"), ("network", "networks"), ("port", "ports"))


@router.get("")
@router.get("/")
async def list_versions(request: Request) -> JSONResponse:
    """Neutron's version discovery (no token needed)."""
    href = f"{base_url(request)}/networking/v2.0/"
    version = {"status": "CURRENT", "id": "v2.0", "links": [{"href": href, "rel": "self"}]}
    return JSONResponse({"versions": [version]})


@router.get("/v2.0")
@router.get("/v2.0/")
async def list_resources(request: Request, _: AuthToken) -> JSONResponse:
    """The v2.0 document: the core resources and their links."""
    base = f"{base_url(request)}/networking/v2.0"
    resources = [
        {"links": [{"href": f"{base}/{collection}", "rel": "self"}], "name": name,
         "collection": collection}
        for name, collection in CORE_RESOURCES
    ]  # fmt: skip
    return JSONResponse({"resources": resources})


_MODULES = (
    extensions,
    networks,
    subnets,
    port_routes,
    security_groups,
    security_group_rules,
    routers,
    router_interfaces,
    extra_routes,
    floating_ips,
    quotas,
    trunks,
    tags,  # its routes match any collection: it comes last
)
for module in _MODULES:
    router.include_router(module.router)
#: Every path served below `/networking`, to tell a wrong method from a wrong path.
_PATHS = [
    route.path_regex for m in _MODULES for route in m.router.routes if isinstance(route, APIRoute)
]


@router.api_route(
    "/{path:path}",
    methods=["GET", "POST", "PUT", "DELETE", "PATCH"],
    include_in_schema=False,
)
async def unknown_route(request: Request, path: str) -> Response:
    """Neutron's own 404/405 bodies for paths and methods it does not serve."""
    if any(regex.match(f"/{path}") for regex in _PATHS):
        message = f"The method {request.method} is not allowed for this resource."
        raise fault("HTTPMethodNotAllowed", message=message)
    raise fault("HTTPNotFound", message="The resource could not be found.")
