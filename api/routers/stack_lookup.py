"""Heat's stack lookup: URLs that name a stack by name (or id) alone answer 302.

`…/stacks/{name}` and `…/stacks/{name}/{resources|events|…}[/…]` redirect, for every
method, to the canonical `…/stacks/{name}/{id}/…` with the query string kept; the
`Location` is absolute because python-heatclient and keystoneauth follow it as is.

Two routers, because routes match in order: `subpath_router` goes before the stack
routes (its second segment is a word, not an id), `name_router` after them (so that
`POST …/stacks/preview` is not read as a stack called "preview").
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Request, status
from fastapi.responses import RedirectResponse
from starlette.convertors import Convertor, register_url_convertor

from api.auth import CallerDep, same_project
from api.deps import DbDep
from api.paths import ProjectId, StackName
from api.schemas.common import ERROR_RESPONSES
from api.schemas.stacks import stack_href
from api.stack_service import find_stack_by_identity
from api.urls import api_base

#: What may follow a stack's name in a lookup URL (Heat's list, plus outputs).
LOOKUP_SUBPATHS = (
    "resources",
    "events",
    "template",
    "actions",
    "environment",
    "files",
    "outputs",
    "preview",
)
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


class _StackSubpath(Convertor[str]):
    regex = "|".join(LOOKUP_SUBPATHS)

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


class _StackReference(Convertor[str]):
    """A stack's name or id, never "preview" (that path is `POST …/stacks/preview`)."""

    regex = "(?!preview$)[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("stack_subpath", _StackSubpath())
register_url_convertor("stack_reference", _StackReference())
#: The OpenAPI view of both, so generated clients (and fuzzers) send what routes match.
Subpath = Annotated[str, Path(pattern=f"^({_StackSubpath.regex})$")]

_responses: dict[int | str, dict[str, Any]] = {
    **ERROR_RESPONSES,
    302: {"description": "Where the stack lives"},
    405: {"description": "The path is not a lookup (another word than the sub-paths)"},
}
subpath_router = APIRouter(prefix="/v1/{project_id}/stacks", tags=["stacks"], responses=_responses)
name_router = APIRouter(prefix="/v1/{project_id}/stacks", tags=["stacks"], responses=_responses)
StackReference = StackName  # the route's convertor keeps "preview" out


async def _redirect(
    request: Request, caller: CallerDep, db: DbDep, project_id: str, identity: str, rest: str
) -> RedirectResponse:
    same_project(caller, project_id)
    record = await find_stack_by_identity(db, caller, identity)
    location = stack_href(api_base(request), project_id, record.name, record.id) + rest
    if request.url.query:
        location += f"?{request.url.query}"
    return RedirectResponse(location, status_code=status.HTTP_302_FOUND)


async def lookup_stack_route(
    request: Request,
    project_id: ProjectId,
    caller: CallerDep,
    db: DbDep,
    stack_name: StackReference,
) -> RedirectResponse:
    """`…/stacks/{stack_name}` → 302 to `…/stacks/{stack_name}/{stack_id}`."""
    return await _redirect(request, caller, db, project_id, stack_name, "")


async def lookup_stack_subpath_route(
    request: Request,
    project_id: ProjectId,
    caller: CallerDep,
    db: DbDep,
    stack_name: StackName,
    subpath: Subpath,
) -> RedirectResponse:
    """`…/stacks/{stack_name}/resources` (events, actions, …) → 302 to the canonical URL."""
    return await _redirect(request, caller, db, project_id, stack_name, f"/{subpath}")


async def lookup_stack_deep_route(
    request: Request,
    project_id: ProjectId,
    caller: CallerDep,
    db: DbDep,
    stack_name: StackName,
    subpath: Subpath,
    rest: str,
) -> RedirectResponse:
    """`…/stacks/{stack_name}/resources/{resource_name}…` → 302 to the canonical URL."""
    suffix = f"/{subpath}/{quote(rest, safe='/')}"
    return await _redirect(request, caller, db, project_id, stack_name, suffix)


# One route per method, so each has its own OpenAPI operation.
for _method in METHODS:
    for _router, _path, _endpoint in (
        (name_router, "/{stack_name:stack_reference}", lookup_stack_route),
        (subpath_router, "/{stack_name}/{subpath:stack_subpath}", lookup_stack_subpath_route),
        (
            subpath_router,
            "/{stack_name}/{subpath:stack_subpath}/{rest:path}",
            lookup_stack_deep_route,
        ),
    ):
        _router.add_api_route(
            _path,
            _endpoint,
            methods=[_method],
            name=f"{_endpoint.__name__}_{_method.lower()}",
            status_code=status.HTTP_302_FOUND,
            response_class=RedirectResponse,
        )
