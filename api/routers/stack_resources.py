"""A stack's resources, events and outputs (`…/stacks/{stack_name}/{stack_id}/…`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Path, Query, Request, Response, status
from sqlmodel import Session

from api.deps import DbDep, TemporalDep
from api.paths import ProjectWriter, ResourceName, StackInPath
from api.schemas.common import ERROR_RESPONSES
from api.schemas.stack_parts import (
    MarkUnhealthyBody,
    OutputEnvelope,
    OutputList,
    OutputSummary,
    ResourceEnvelope,
    ResourceFilters,
    ResourceList,
    ResourcePublic,
    StackEventDetail,
    StackEventEnvelope,
    StackEventList,
    StackEventPublic,
)
from api.schemas.stacks import StackOutput, output_description
from api.stack_service import new_action_id, send_stack_update
from api.urls import api_base
from domain.errors import NotFound
from domain.stack.requests import MarkResourceRequest, ResourceSignalRequest, UnsetHookRequest
from domain.stack.resource_types import SERVER
from domain.stack.types.software_config import config_view
from domain.stack.types.software_deployment import SINGLE_TYPES
from domain.stack.types.wait_condition import HANDLE
from store.events import list_events
from store.software_deployments import server_configs
from store.stacks import StackRecord, StackResourceRecord, list_child_stacks, list_stack_resources
from workflows.stack.messages import StackOperations

router = APIRouter(
    prefix="/v1/{project_id}/stacks/{stack_name}/{stack_id}",
    tags=["stacks"],
    responses=ERROR_RESPONSES,
)
#: Heat's repeatable resource-list filters (`?type=OS::Nova::Server&status=FAILED`).
Filter = Annotated[list[str] | None, Query(max_length=50)]


def _resources(
    session: Session, root: StackRecord, nested_depth: int, base: str
) -> list[ResourcePublic]:
    stacks = {root.id: root}
    frontier = [root.id]
    for _ in range(nested_depth):
        children = list_child_stacks(session, frontier)
        stacks.update({c.id: c for c in children})
        frontier = [c.id for c in children]
    rows = list_stack_resources(session, list(stacks))
    return [ResourcePublic.of(r, stacks[r.stack_id], base) for r in rows]


@router.get("/resources", response_model=ResourceList)
async def list_resources_route(
    stack: StackInPath,
    db: DbDep,
    request: Request,
    nested_depth: Annotated[int, Query(ge=0, le=10)] = 0,
    type: Filter = None,
    name: Filter = None,
    status: Filter = None,
    action: Filter = None,
    id: Filter = None,
    physical_resource_id: Filter = None,
    with_detail: bool = False,
) -> ResourceList:
    """Resources of the stack (nested ones down to `nested_depth`), Heat's filters applied."""
    record = await stack.load()
    found: list[ResourcePublic] = await db.run(_resources, record, nested_depth, api_base(request))
    filters = ResourceFilters(
        type=type,
        name=name,
        status=status,
        action=action,
        id=id,
        physical_resource_id=physical_resource_id,
    )
    return ResourceList(resources=[r for r in found if filters.match(r)])


async def _resource(db: DbDep, request: Request, record: StackRecord, name: str) -> ResourcePublic:
    listing: list[ResourcePublic] = await db.run(_resources, record, 0, api_base(request))
    for resource in listing:
        if resource.resource_name == name:
            return resource
    raise NotFound(f"The Resource ({name}) could not be found in Stack {record.name}.")


@router.get("/resources/{resource_name}", response_model=ResourceEnvelope)
async def get_resource_route(
    stack: StackInPath,
    db: DbDep,
    request: Request,
    resource_name: ResourceName,
) -> ResourceEnvelope:
    """One resource by name, with its attributes."""
    record = await stack.load()
    found = await _resource(db, request, record, resource_name)
    return ResourceEnvelope(resource=found)


@router.patch("/resources/{resource_name}", status_code=status.HTTP_200_OK)
async def mark_resource_route(
    caller: ProjectWriter,
    stack: StackInPath,
    temporal: TemporalDep,
    resource_name: ResourceName,
    body: MarkUnhealthyBody,
) -> Response:
    """Mark a resource unhealthy (CHECK_FAILED; the next update replaces it) or clear it."""
    record = await stack.load()
    request = MarkResourceRequest(
        action_id=new_action_id(),
        resource_name=resource_name,
        mark_unhealthy=body.mark_unhealthy,
        resource_status_reason=body.resource_status_reason,
    )
    await send_stack_update(temporal, record, StackOperations.mark_unhealthy, request)
    return Response(status_code=status.HTTP_200_OK)


def _resource_type(session: Session, stack_id: str, name: str) -> str | None:
    found = session.get(StackResourceRecord, (stack_id, name))
    return None if found is None else found.type


def _resource_metadata(session: Session, stack: StackRecord, name: str) -> dict[str, Any] | None:
    found = session.get(StackResourceRecord, (stack.id, name))
    if found is None:
        return None
    if found.type == SERVER and found.physical_id:
        # Heat pushes each deployment's config into its server's metadata; Warden reads
        # them from the deployments when asked.
        configs = server_configs(session, stack.project_id, found.physical_id)
        return {**found.rsrc_metadata, "deployments": [config_view(c) for c in configs]}
    return found.rsrc_metadata


@router.get("/resources/{resource_name}/metadata")
async def resource_metadata_route(
    stack: StackInPath, db: DbDep, resource_name: ResourceName
) -> dict[str, Any]:
    """Heat's resource metadata: a wait condition handle's signals by id, a server's
    `deployments` (the configs deployed to it); `{}` for the other types."""
    record = await stack.load()
    found = await db.run(_resource_metadata, record, resource_name)
    if found is None:
        raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
    return {"metadata": found}


@router.post("/resources/{resource_name}/signal", status_code=status.HTTP_200_OK)
async def signal_resource_route(
    caller: ProjectWriter,
    stack: StackInPath,
    db: DbDep,
    temporal: TemporalDep,
    resource_name: ResourceName,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> Response:
    """Signal a scaling policy: its group resizes (400 for a resource that takes no signal,
    409 while the stack is busy or locked). `{"unset_hook": hook}` clears a breakpoint
    hook the running operation waits at."""
    record = await stack.load()
    rtype = await db.run(_resource_type, record.id, resource_name)
    if rtype == HANDLE or rtype in SINGLE_TYPES:
        delivered = ResourceSignalRequest(
            action_id=new_action_id(),
            resource_name=resource_name,
            details=body or {},
            deployment=rtype in SINGLE_TYPES,
        )
        await send_stack_update(temporal, record, StackOperations.deliver_signal, delivered)
        return Response(status_code=status.HTTP_200_OK)
    if body and "unset_hook" in body:
        clear = UnsetHookRequest(
            action_id=new_action_id(),
            resource_name=resource_name,
            hook=str(body["unset_hook"])[:32],
        )
        await send_stack_update(temporal, record, StackOperations.unset_hook, clear)
        return Response(status_code=status.HTTP_200_OK)
    request = ResourceSignalRequest(
        action_id=new_action_id(), resource_name=resource_name, details=body or {}
    )
    await send_stack_update(temporal, record, StackOperations.signal, request)
    return Response(status_code=status.HTTP_200_OK)


Limit = Annotated[int, Query(ge=1, le=1000)]
Marker = Annotated[str | None, Query(max_length=64)]
SortDir = Literal["asc", "desc"]


async def _events(
    db: DbDep,
    request: Request,
    record: StackRecord,
    resource_name: str | None,
    page: tuple[int, str | None, SortDir],
) -> StackEventList:
    limit, marker, sort_dir = page
    rows = await db.run(
        list_events,
        record.project_id,
        stack_id=record.id,
        obj_name=resource_name,
        limit=limit,
        marker=marker,
        descending=sort_dir == "desc",
    )
    base = api_base(request)
    return StackEventList(events=[StackEventPublic.of(r, record, base) for r in rows])


@router.get("/events", response_model=StackEventList)
async def list_stack_events_route(
    stack: StackInPath,
    db: DbDep,
    request: Request,
    limit: Limit = 1000,
    marker: Marker = None,
    sort_dir: SortDir = "asc",
) -> StackEventList:
    """Stack and resource transitions (oldest first; `sort_dir=desc` for newest first)."""
    record = await stack.load()
    page = (limit, marker, sort_dir)
    return await _events(db, request, record, None, page)


@router.get("/resources/{resource_name}/events", response_model=StackEventList)
async def list_resource_events_route(
    stack: StackInPath,
    db: DbDep,
    request: Request,
    resource_name: ResourceName,
    limit: Limit = 1000,
    marker: Marker = None,
    sort_dir: SortDir = "asc",
) -> StackEventList:
    """One resource's transitions."""
    record = await stack.load()
    page = (limit, marker, sort_dir)
    return await _events(db, request, record, resource_name, page)


@router.get("/resources/{resource_name}/events/{event_id}", response_model=StackEventEnvelope)
async def get_stack_event_route(
    stack: StackInPath,
    db: DbDep,
    request: Request,
    resource_name: ResourceName,
    event_id: Annotated[str, Path(max_length=64)],
) -> StackEventEnvelope:
    """One event of a resource."""
    record = await stack.load()
    rows = await db.run(
        list_events, record.project_id, stack_id=record.id, obj_name=resource_name, limit=1000
    )
    for row in rows:
        if row.id == event_id:
            return StackEventEnvelope(event=StackEventDetail.detail(row, record, api_base(request)))
    raise NotFound(f"The Event ({event_id}) could not be found.")


@router.get("/outputs", response_model=OutputList)
async def list_outputs_route(
    stack: StackInPath,
) -> OutputList:
    """The stack's outputs: key and description (values through `…/outputs/{output_key}`)."""
    record = await stack.load()
    declared = record.template.get("outputs") or {}
    return OutputList(
        outputs=[
            OutputSummary(output_key=key, description=output_description(spec))
            for key, spec in sorted(declared.items())
        ]
    )


@router.get("/outputs/{output_key}", response_model=OutputEnvelope)
async def get_output_route(
    stack: StackInPath,
    output_key: Annotated[str, Path(max_length=255)],
) -> OutputEnvelope:
    """One output with its value (404 for a key the template does not declare)."""
    record = await stack.load()
    declared = record.template.get("outputs") or {}
    if output_key not in declared:
        raise NotFound(f"Specified output key {output_key} not found.")
    return OutputEnvelope(
        output=StackOutput(
            output_key=output_key,
            output_value=record.outputs.get(output_key),
            description=output_description(declared[output_key]),
            output_error=(record.output_errors or {}).get(output_key),
        )
    )
