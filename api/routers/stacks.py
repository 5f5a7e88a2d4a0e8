"""`/v1/{project_id}/stacks` (Heat-compatible; reads from the projection, writes via workflows).

Resources, events and outputs are in `stack_resources`; name-only URLs that answer 302
are in `stack_lookup`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response, status
from fastapi.responses import JSONResponse

from api.deps import DbDep, RemoteHeatDep, SettingsDep, TemporalDep
from api.paths import ProjectCaller, ProjectWriter, StackInPath
from api.schemas.common import ERROR_RESPONSES
from api.schemas.stacks import (
    Link,
    StackCreate,
    StackCreated,
    StackEnvelope,
    StackList,
    StackPatch,
    StackPublic,
    StackUpdate,
    checked_tags,
    parse_stack_action,
    shown_parameters,
    stack_href,
)
from api.stack_service import (
    constraint_checks,
    create_stack,
    ensure_cloud_has,
    ensure_update_cloud_has,
    heat_environment,
    new_action_id,
    patched_template,
    prepared_template,
    send_stack_update,
)
from api.urls import api_base
from domain.errors import InvalidRequest
from domain.hot.environment import environment_breakpoints
from domain.stack.event_sinks import parse_event_sinks
from domain.stack.preview import NO_ID as PREVIEW_ID
from domain.stack.preview import preview_resources
from domain.stack.preview import pseudo as preview_pseudo
from domain.stack.requests import LockStackRequest, StackAccepted, StackOperationRequest
from domain.stack.state import StackState
from domain.stack.tags import TagFilter
from store.stacks import list_stacks
from workflows.operation import Operation
from workflows.stack.messages import StackOperations as Ops

router = APIRouter(prefix="/v1/{project_id}/stacks", tags=["stacks"], responses=ERROR_RESPONSES)

#: Heat's stack action keys that take no arguments, and their operation.
_STACK_ACTIONS: dict[str, Operation[StackState, StackOperationRequest, StackAccepted]] = {
    "unlock": Ops.unlock,
    "check": Ops.check,
    "suspend": Ops.suspend,
    "resume": Ops.resume,
    "cancel_update": Ops.cancel_update,
    "cancel_without_rollback": Ops.cancel_without_rollback,
}


@router.post("", status_code=status.HTTP_201_CREATED, response_model=StackCreated)
async def create_stack_route(
    caller: ProjectWriter,
    db: DbDep,
    temporal: TemporalDep,
    remote_heat: RemoteHeatDep,
    body: StackCreate,
    request: Request,
    response: Response,
) -> StackCreated:
    """Create a stack from a template (400 for an invalid one, 409 for a taken name)."""
    stack_id, _accepted = await create_stack(db, temporal, caller, body, remote_heat)
    href = stack_href(api_base(request), caller.project_id, body.stack_name, stack_id)
    response.headers["Location"] = href
    return StackCreated(stack=StackCreated.Inner(id=stack_id, links=[Link(href=href)]))


#: A comma-separated tag filter (Heat's tags are at most 80 characters each).
TagQuery = Annotated[str | None, Query(max_length=255)]


def _tags_param(value: str | None) -> list[str]:
    return checked_tags(value.split(","), in_list=False) if value else []


@router.get("", response_model=StackList)
async def list_stacks_route(
    caller: ProjectCaller,
    db: DbDep,
    settings: SettingsDep,
    request: Request,
    show_nested: bool = False,
    show_hidden: bool = False,
    tags: TagQuery = None,
    tags_any: TagQuery = None,
    not_tags: TagQuery = None,
    not_tags_any: TagQuery = None,
) -> StackList:
    """Stacks of the project (nested ones with `?show_nested=true`), filtered by tags as
    Heat filters them (`tags` all, `tags_any`, `not_tags`, `not_tags_any`, comma-separated);
    stacks with a hidden tag only with `show_hidden=true`."""
    wanted = TagFilter(
        all_of=_tags_param(tags),
        any_of=_tags_param(tags_any),
        not_all_of=_tags_param(not_tags),
        not_any_of=_tags_param(not_tags_any),
        hidden=() if show_hidden else tuple(settings.hidden_stack_tags),
    )
    records = await db.run(list_stacks, caller.project_id, show_nested=show_nested)
    base = api_base(request)
    return StackList(stacks=[StackPublic.of(r, base) for r in records if wanted.shows(r.tags)])


@router.get("/{stack_name}/{stack_id}", response_model=StackEnvelope)
async def get_stack_route(
    stack: StackInPath,
    request: Request,
) -> StackEnvelope:
    """One stack."""
    record = await stack.load()
    return StackEnvelope(stack=StackPublic.of(record, api_base(request)))


@router.put("/{stack_name}/{stack_id}", status_code=status.HTTP_202_ACCEPTED)
async def update_stack_route(
    caller: ProjectWriter,
    stack: StackInPath,
    temporal: TemporalDep,
    remote_heat: RemoteHeatDep,
    body: StackUpdate,
) -> Response:
    """Update to a new template (409 while busy or locked)."""
    record = await stack.load()
    if body.template is None:
        raise InvalidRequest("Need more arguments: a template is required")
    env = heat_environment(body)
    template, parameters = prepared_template(body.template, body, env, body.parameters)
    await ensure_update_cloud_has(temporal, record, template, parameters)
    await remote_heat.check(caller, template, parameters)
    request = StackOperationRequest(
        action_id=new_action_id(),
        template=template,
        parameters=parameters,
        timeout_mins=body.timeout_mins,
        disable_rollback=body.disable_rollback,
        tags=body.tag_list(),
        hooks=environment_breakpoints(env),
        event_sinks=parse_event_sinks(env.get("event_sinks")),
    )
    await send_stack_update(temporal, record, Ops.update, request)
    return Response(status_code=status.HTTP_202_ACCEPTED)


@router.patch("/{stack_name}/{stack_id}", status_code=status.HTTP_202_ACCEPTED)
async def patch_stack_route(
    caller: ProjectWriter,
    stack: StackInPath,
    temporal: TemporalDep,
    body: StackPatch,
) -> Response:
    """Update with the existing template (`{}` is enough to replace CHECK_FAILED resources)."""
    record = await stack.load()
    env = heat_environment(body)
    # The workflow merges these onto the stack's current parameters.
    changed = {**(env.get("parameters") or {}), **body.parameters}
    template = None
    if body.template is not None:
        template = patched_template(body.template, body, env)
    request = StackOperationRequest(
        action_id=new_action_id(),
        template=template,
        parameters=changed,
        timeout_mins=body.timeout_mins,
        disable_rollback=body.disable_rollback,
        tags=body.tag_list(),
        existing=True,
        hooks=environment_breakpoints(env) or None,
        event_sinks=parse_event_sinks(env["event_sinks"]) if "event_sinks" in env else None,
    )
    await send_stack_update(temporal, record, Ops.update, request)
    return Response(status_code=status.HTTP_202_ACCEPTED)


@router.delete("/{stack_name}/{stack_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_stack_route(
    caller: ProjectWriter,
    stack: StackInPath,
    temporal: TemporalDep,
) -> Response:
    """Delete the stack (its resources first; 409 while busy or locked)."""
    record = await stack.load()
    await send_stack_update(
        temporal, record, Ops.delete, StackOperationRequest(action_id=new_action_id())
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{stack_name}/{stack_id}/actions", status_code=status.HTTP_200_OK)
async def stack_action_route(
    caller: ProjectWriter,
    stack: StackInPath,
    temporal: TemporalDep,
    body: Annotated[dict[str, Any], Body()],
) -> Response:
    """lock / unlock / check / suspend / resume / cancel_update / cancel_without_rollback:
    exactly one key."""
    name, lock = parse_stack_action(body)
    record = await stack.load()
    if lock is not None:
        request = LockStackRequest(
            action_id=new_action_id(), level=lock.level, reason=lock.reason, owner=lock.owner
        )
        await send_stack_update(temporal, record, Ops.lock, request)
    else:
        action = StackOperationRequest(action_id=new_action_id())
        await send_stack_update(temporal, record, _STACK_ACTIONS[name], action)
    return Response(status_code=status.HTTP_200_OK)


@router.post("/preview")
async def preview_stack_route(
    caller: ProjectCaller,
    request: Request,
    temporal: TemporalDep,
    body: StackCreate,
) -> JSONResponse:
    """What a create would make, without making anything (400 for an invalid template),
    as Heat's preview shows it: nested stacks as lists of their resources."""
    if body.template is None:
        raise InvalidRequest("Need more arguments: a template is required")
    template, parameters = prepared_template(
        body.template, body, heat_environment(body), body.parameters
    )
    name, project = body.stack_name, caller.project_id
    checks = constraint_checks(template, parameters, preview_pseudo(project, name))
    await ensure_cloud_has(temporal, checks)
    resources = preview_resources(template, parameters, project_id=project, stack_name=name)
    description = str(template.get("description") or "") or "No description"
    shown = {**shown_parameters(template, parameters), **preview_pseudo(project, name)}
    stack = {
        "id": PREVIEW_ID,
        "stack_name": name,
        "description": description,
        "template_description": description,
        # Heat's preview shows every parameter as a string (`parameters.map(str)`).
        "parameters": {k: v if isinstance(v, str) else json.dumps(v) for k, v in shown.items()},
        "parent": None,
        "disable_rollback": body.disable_rollback,
        "timeout_mins": body.timeout_mins,
        "tags": body.tag_list(),
        "capabilities": [],
        "notification_topics": [],
        "stack_owner": None,
        "creation_time": None,
        "updated_time": None,
        "deletion_time": None,
        "links": [
            {"href": stack_href(api_base(request), project, name, PREVIEW_ID), "rel": "self"}
        ],
        "resources": resources,
    }
    return JSONResponse({"stack": stack})


@router.get("/{stack_name}/{stack_id}/template")
async def stack_template_route(
    stack: StackInPath,
) -> dict[str, Any]:
    """The stack's template, with files and environment already applied by Warden."""
    record = await stack.load()
    return record.template


@router.get("/{stack_name}/{stack_id}/environment")
async def stack_environment_route(
    stack: StackInPath,
) -> dict[str, Any]:
    """The stack's effective environment: its parameters (registry and defaults are applied
    to the template when it arrives, so nothing else remains)."""
    record = await stack.load()
    return {
        "parameters": shown_parameters(record.template, record.parameters),
        "parameter_defaults": {},
        "resource_registry": {"resources": {}},
        "encrypted_param_names": [],
        "event_sinks": [],
        "parameter_merge_strategies": {},
    }


@router.get("/{stack_name}/{stack_id}/files")
async def stack_files_route(stack: StackInPath) -> dict[str, str]:
    """Always empty: Warden inlines the files a template names when the stack is made."""
    await stack.load()
    return {}
