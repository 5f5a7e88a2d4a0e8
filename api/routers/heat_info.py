"""Heat's informational API: version documents, template versions and functions,
`/validate`, resource types, build info."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, status
from fastapi.responses import JSONResponse

from api.heat_params import heat_bool
from api.paths import ProjectCaller
from api.schemas.common import ERROR_RESPONSES
from api.schemas.stacks import HeatInputs, TemplateField
from api.stack_service import heat_environment
from api.urls import api_base
from domain.errors import InvalidRequest
from domain.hot.environment import expand_template, template_data
from domain.hot.template import load_template
from domain.hot.validation_view import validate_view
from domain.hot.versions import template_functions, template_versions
from domain.stack.resource_type_docs import generated_template, known_type, resource_schema
from domain.stack.resource_types import RESOURCE_TYPES
from domain.stack.rules import ensure_supported

router = APIRouter(prefix="/v1/{project_id}", tags=["heat"], responses=ERROR_RESPONSES)
versions_router = APIRouter(tags=["versions"])


@versions_router.get("/", status_code=status.HTTP_300_MULTIPLE_CHOICES)
@versions_router.get("/v1/", status_code=status.HTTP_300_MULTIPLE_CHOICES)
async def heat_versions_route(request: Request) -> JSONResponse:
    """Heat's version document (300 Multiple Choices, as Heat answers it)."""
    body = {
        "versions": [
            {
                "id": "v1.0",
                "status": "CURRENT",
                "links": [{"rel": "self", "href": f"{api_base(request)}/v1/"}],
            }
        ]
    }
    return JSONResponse(body, status_code=status.HTTP_300_MULTIPLE_CHOICES)


@router.get("/build_info")
async def build_info_route(
    request: Request,
    caller: ProjectCaller,
) -> dict[str, Any]:
    """Heat's build info: Warden's own revision for both halves."""
    revision = {"revision": f"warden-{request.app.version}"}
    return {"api": revision, "engine": revision}


@router.get("/template_versions")
async def list_template_versions_route(
    caller: ProjectCaller,
) -> dict[str, Any]:
    """The HOT versions Warden reads, with their aliases."""
    return {"template_versions": template_versions()}


@router.get("/template_versions/{template_version}/functions")
async def list_template_functions_route(
    caller: ProjectCaller,
    template_version: Annotated[str, Path(max_length=100)],
    with_condition_func: Annotated[str | None, Query(max_length=8)] = None,
) -> dict[str, Any]:
    """The intrinsic functions of one version (404 for an unknown version); with
    `with_condition_func=true`, the functions of its conditions."""
    conditions = with_condition_func is not None and heat_bool(
        "with_condition_func", with_condition_func
    )
    return {"template_functions": template_functions(template_version, conditions=conditions)}


class ValidateBody(HeatInputs):
    """`POST …/validate`."""

    template: TemplateField | None = None
    show_nested: bool = False
    ignore_errors: str | None = None


@router.post("/validate")
async def validate_template_route(
    caller: ProjectCaller,
    body: ValidateBody,
    show_nested: Annotated[str | None, Query(max_length=8)] = None,
) -> dict[str, Any]:
    """Check a template (with its files and environment); 400 names the first problem.
    The answer is Heat's, field for field (`domain/hot/validation_view.py`)."""
    if body.template is None:
        raise InvalidRequest("Need more arguments: a template is required")
    env = heat_environment(body)
    raw = template_data(body.template)
    template = load_template(expand_template(raw, body.files, env))
    ensure_supported(template)
    given = {**(env.get("parameters") or {}), **body.parameters}
    # heatclient sends `show_nested` in the query, as Heat reads it; the body works too.
    nested = body.show_nested or (show_nested is not None and heat_bool("show_nested", show_nested))
    return validate_view(raw, body.files, env, given=given, show_nested=nested)


@router.get("/resource_types")
async def list_resource_types_route(
    caller: ProjectCaller,
    with_description: bool = False,
    name: Annotated[str | None, Query(max_length=255)] = None,
) -> dict[str, Any]:
    """The resource types Warden runs (`?with_description=true` adds each description)."""
    types = [t for n, t in sorted(RESOURCE_TYPES.items()) if name is None or name in n]
    if with_description:
        return {
            "resource_types": [
                {"resource_type": t.name, "description": t.description} for t in types
            ]
        }
    return {"resource_types": [t.name for t in types]}


@router.get("/resource_types/{type_name}")
async def show_resource_type_route(
    caller: ProjectCaller,
    type_name: Annotated[str, Path(max_length=255)],
    with_description: bool = False,
) -> dict[str, Any]:
    """A resource type's properties, attributes and support status (404 if unknown)."""
    return resource_schema(known_type(type_name))


@router.get("/resource_types/{type_name}/template")
async def resource_type_template_route(
    caller: ProjectCaller,
    type_name: Annotated[str, Path(max_length=255)],
    template_type: Annotated[str, Query(pattern="^(hot|cfn)$")] = "cfn",
) -> dict[str, Any]:
    """A template that uses the type with every property as a parameter (HOT only)."""
    if template_type != "hot":
        raise InvalidRequest("template_type: Warden generates HOT templates only (hot)")
    return generated_template(known_type(type_name))
