"""`/v1/{project_id}/stacks` (Heat-compatible; reads from the projection, writes via workflows)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Response, status
from fastapi.responses import RedirectResponse
from sqlmodel import Session

from api.auth import CallerDep, WriterDep, same_project
from api.deps import DbDep, TemporalDep
from api.schemas.common import ERROR_RESPONSES
from api.schemas.stacks import (
    Link,
    MarkUnhealthyBody,
    ResourceEnvelope,
    ResourceList,
    ResourcePublic,
    StackCreate,
    StackCreated,
    StackEnvelope,
    StackEventList,
    StackEventPublic,
    StackList,
    StackPatch,
    StackPublic,
    StackUpdate,
    parse_stack_action,
    stack_href,
)
from api.stacks import (
    create_stack,
    find_stack,
    find_stack_by_identity,
    new_action_id,
    send_stack_update,
    validated_template,
)
from domain.errors import NotFound
from domain.stacks import (
    LockStackRequest,
    MarkResourceRequest,
    ResourceSignalRequest,
    StackOperationRequest,
)
from store.events import list_events
from store.stacks import (
    StackRecord,
    list_child_stacks,
    list_stack_resources,
    list_stacks,
)

router = APIRouter(prefix="/v1/{project_id}/stacks", tags=["stacks"], responses=ERROR_RESPONSES)
ProjectId = Annotated[str, Path(max_length=64)]
StackName = Annotated[str, Path(max_length=255)]
StackId = Annotated[str, Path(max_length=64)]
ResourceName = Annotated[str, Path(max_length=255)]


@router.post("", status_code=status.HTTP_201_CREATED, response_model=StackCreated)
async def create_stack_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    body: StackCreate,
    response: Response,
) -> StackCreated:
    """Create a stack from a template (400 for an invalid one, 409 for a taken name)."""
    same_project(caller, project_id)
    stack_id, _accepted = await create_stack(db, temporal, caller, body)
    href = stack_href(project_id, body.stack_name, stack_id)
    response.headers["Location"] = href
    return StackCreated(stack=StackCreated.Inner(id=stack_id, links=[Link(href=href)]))


@router.get("", response_model=StackList)
async def list_stacks_route(
    project_id: ProjectId, caller: CallerDep, db: DbDep, show_nested: bool = False
) -> StackList:
    """Stacks of the project (nested ones with `?show_nested=true`)."""
    same_project(caller, project_id)
    records = await db.run(list_stacks, caller.project_id, show_nested=show_nested)
    return StackList(stacks=[StackPublic.of(r) for r in records])


@router.get(
    "/{stack_name}",
    status_code=status.HTTP_302_FOUND,
    response_class=RedirectResponse,
    responses={302: {"description": "Where the stack lives"}},
)
async def find_stack_route(
    project_id: ProjectId, caller: CallerDep, db: DbDep, stack_name: StackName
) -> RedirectResponse:
    """Redirect `…/stacks/{stack_name}` to `…/stacks/{stack_name}/{stack_id}`."""
    same_project(caller, project_id)
    record = await find_stack_by_identity(db, caller, stack_name)
    return RedirectResponse(
        stack_href(project_id, record.name, record.id), status_code=status.HTTP_302_FOUND
    )


@router.get("/{stack_name}/{stack_id}", response_model=StackEnvelope)
async def get_stack_route(
    project_id: ProjectId, caller: CallerDep, db: DbDep, stack_name: StackName, stack_id: StackId
) -> StackEnvelope:
    """One stack."""
    same_project(caller, project_id)
    return StackEnvelope(stack=StackPublic.of(await find_stack(db, caller, stack_name, stack_id)))


@router.put("/{stack_name}/{stack_id}", status_code=status.HTTP_202_ACCEPTED)
async def update_stack_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    stack_name: StackName,
    stack_id: StackId,
    body: StackUpdate,
) -> Response:
    """Update to a new template (409 while busy or locked)."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    request = StackOperationRequest(
        action_id=new_action_id(),
        template=validated_template(body.template, body.parameters),
        parameters=body.parameters,
        timeout_mins=body.timeout_mins,
        disable_rollback=body.disable_rollback,
    )
    await send_stack_update(temporal, record, "update", request)
    return Response(status_code=status.HTTP_202_ACCEPTED)


@router.patch("/{stack_name}/{stack_id}", status_code=status.HTTP_202_ACCEPTED)
async def patch_stack_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    stack_name: StackName,
    stack_id: StackId,
    body: StackPatch,
) -> Response:
    """Update with the existing template (`{}` is enough to replace CHECK_FAILED resources)."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    template = None
    if body.template is not None:
        template = validated_template(body.template, {**record.parameters, **body.parameters})
    request = StackOperationRequest(
        action_id=new_action_id(),
        template=template,
        parameters=body.parameters,
        timeout_mins=body.timeout_mins,
        disable_rollback=body.disable_rollback,
        existing=True,
    )
    await send_stack_update(temporal, record, "update", request)
    return Response(status_code=status.HTTP_202_ACCEPTED)


@router.delete("/{stack_name}/{stack_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_stack_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    stack_name: StackName,
    stack_id: StackId,
) -> Response:
    """Delete the stack (its resources first; 409 while busy or locked)."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    await send_stack_update(
        temporal, record, "delete", StackOperationRequest(action_id=new_action_id())
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{stack_name}/{stack_id}/actions", status_code=status.HTTP_200_OK)
async def stack_action_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    stack_name: StackName,
    stack_id: StackId,
    body: Annotated[dict[str, Any], Body()],
) -> Response:
    """lock / unlock / check / suspend / resume / cancel_update: exactly one key."""
    same_project(caller, project_id)
    name, lock = parse_stack_action(body)
    record = await find_stack(db, caller, stack_name, stack_id)
    request: StackOperationRequest | LockStackRequest
    if lock is not None:
        request = LockStackRequest(
            action_id=new_action_id(), level=lock.level, reason=lock.reason, owner=lock.owner
        )
    else:
        request = StackOperationRequest(action_id=new_action_id())
    await send_stack_update(temporal, record, name, request)
    return Response(status_code=status.HTTP_200_OK)


def _resources(session: Session, root: StackRecord, nested_depth: int) -> ResourceList:
    stacks = {root.id: root}
    frontier = [root.id]
    for _ in range(nested_depth):
        children = list_child_stacks(session, frontier)
        stacks.update({c.id: c for c in children})
        frontier = [c.id for c in children]
    rows = list_stack_resources(session, list(stacks))
    return ResourceList(resources=[ResourcePublic.of(r, stacks[r.stack_id]) for r in rows])


@router.get("/{stack_name}/{stack_id}/resources", response_model=ResourceList)
async def list_resources_route(
    project_id: ProjectId,
    caller: CallerDep,
    db: DbDep,
    stack_name: StackName,
    stack_id: StackId,
    nested_depth: Annotated[int, Query(ge=0, le=10)] = 0,
) -> ResourceList:
    """Resources of the stack (and of nested stacks down to `nested_depth`)."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    result: ResourceList = await db.run(_resources, record, nested_depth)
    return result


@router.get("/{stack_name}/{stack_id}/resources/{resource_name}", response_model=ResourceEnvelope)
async def get_resource_route(
    project_id: ProjectId,
    caller: CallerDep,
    db: DbDep,
    stack_name: StackName,
    stack_id: StackId,
    resource_name: ResourceName,
) -> ResourceEnvelope:
    """One resource by name."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    listing: ResourceList = await db.run(_resources, record, 0)
    for resource in listing.resources:
        if resource.resource_name == resource_name:
            return ResourceEnvelope(resource=resource)
    raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")


@router.patch("/{stack_name}/{stack_id}/resources/{resource_name}", status_code=status.HTTP_200_OK)
async def mark_resource_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    stack_name: StackName,
    stack_id: StackId,
    resource_name: ResourceName,
    body: MarkUnhealthyBody,
) -> Response:
    """Mark a resource unhealthy (CHECK_FAILED; the next update replaces it) or clear it."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    request = MarkResourceRequest(
        action_id=new_action_id(),
        resource_name=resource_name,
        mark_unhealthy=body.mark_unhealthy,
        resource_status_reason=body.resource_status_reason,
    )
    await send_stack_update(temporal, record, "mark_unhealthy", request)
    return Response(status_code=status.HTTP_200_OK)


@router.post(
    "/{stack_name}/{stack_id}/resources/{resource_name}/signal", status_code=status.HTTP_200_OK
)
async def signal_resource_route(
    project_id: ProjectId,
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    stack_name: StackName,
    stack_id: StackId,
    resource_name: ResourceName,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> Response:
    """Signal a scaling policy: its group resizes (409 while the stack is busy or locked)."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    request = ResourceSignalRequest(
        action_id=new_action_id(), resource_name=resource_name, details=body or {}
    )
    await send_stack_update(temporal, record, "signal", request)
    return Response(status_code=status.HTTP_200_OK)


@router.get("/{stack_name}/{stack_id}/events", response_model=StackEventList)
async def list_stack_events_route(
    project_id: ProjectId,
    caller: CallerDep,
    db: DbDep,
    stack_name: StackName,
    stack_id: StackId,
    limit: Annotated[int, Query(ge=1, le=1000)] = 1000,
    marker: Annotated[str | None, Query(max_length=64)] = None,
) -> StackEventList:
    """Stack and resource transitions, newest last."""
    same_project(caller, project_id)
    record = await find_stack(db, caller, stack_name, stack_id)
    rows = await db.run(
        list_events, caller.project_id, stack_id=record.id, limit=limit, marker=marker
    )
    return StackEventList(events=[StackEventPublic.of(r) for r in rows])
