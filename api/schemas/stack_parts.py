"""Views of a stack's parts: resources, events and outputs, and their filters (Heat's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final
from urllib.parse import quote

from pydantic import BaseModel, Field, field_validator

from api.schemas.common import StrictModel
from api.schemas.stacks import Link, StackOutput, stack_href
from domain.stack.resource_types import STACK as STACK_TYPE
from domain.stack.types.nested_stack import nested_stack_name
from domain.stack.types.resource_group import NAME as RESOURCE_GROUP
from domain.stack.types.scaling_group import NAME as AUTO_SCALING_GROUP
from store.events import EventRecord
from store.stacks import StackRecord, StackResourceRecord


class ResourcePublic(BaseModel):
    """A resource as the API shows it; `stack_*` name its own (maybe nested) stack."""

    resource_name: str
    logical_resource_id: str
    resource_type: str
    physical_resource_id: str
    resource_status: str
    resource_status_reason: str
    required_by: list[str]
    attributes: dict[str, Any]
    creation_time: datetime
    updated_time: datetime
    stack_name: str
    stack_id: str
    parent_resource: str | None = None
    description: str = ""
    links: list[Link] = Field(default_factory=list)

    @classmethod
    def of(cls, record: StackResourceRecord, stack: StackRecord, base: str) -> ResourcePublic:
        """The public view of a resource row, with Heat's `self` and `stack` links."""
        stack_url = stack_href(base, stack.project_id, stack.name, stack.id)
        return cls(
            resource_name=record.name,
            logical_resource_id=record.name,
            resource_type=record.type,
            physical_resource_id=record.physical_id or _nested_id(record, stack) or "",
            resource_status=f"{record.action}_{record.status}",
            resource_status_reason=record.status_reason,
            required_by=record.required_by,
            attributes=record.attributes,
            creation_time=record.created_at,
            updated_time=record.updated_at,
            stack_name=stack.name,
            stack_id=stack.id,
            parent_resource=stack.parent_resource,
            links=[
                Link(href=f"{stack_url}/resources/{quote(record.name, safe='')}"),
                Link(href=stack_url, rel="stack"),
                *_nested_link(record, stack, base),
            ],
        )


#: Types whose resource is a nested stack of its own (its id is the resource's id).
_NESTED_TYPES: Final = frozenset({STACK_TYPE, RESOURCE_GROUP, AUTO_SCALING_GROUP})


def _is_nested(record: StackResourceRecord, stack: StackRecord) -> bool:
    """Whether the resource is a nested stack of this Warden's (a remote stack, one with
    a `context`, is a stack of its own, which Heat does not link as nested)."""
    if record.type not in _NESTED_TYPES:
        return False
    declared = (stack.template.get("resources") or {}).get(record.name)
    props = declared.get("properties") if isinstance(declared, dict) else None
    return not (isinstance(props, dict) and "context" in props)


def _nested_id(record: StackResourceRecord, stack: StackRecord) -> str | None:
    """The id of the resource's nested stack once it has been started (its id is the
    resource's): Heat shows it as the physical id from then on, before it completes."""
    if record.action == "INIT" or not record.resource_id or not _is_nested(record, stack):
        return None
    return record.resource_id


def _nested_link(record: StackResourceRecord, stack: StackRecord, base: str) -> list[Link]:
    """Heat's `nested` link, once the resource's nested stack has been started."""
    nested_id = record.physical_id or _nested_id(record, stack)
    if not nested_id or not _is_nested(record, stack):
        return []
    name = nested_stack_name(stack.name, record.name, nested_id)
    return [Link(href=stack_href(base, stack.project_id, name, nested_id), rel="nested")]


class ResourceEnvelope(BaseModel):
    """`{"resource": {...}}`."""

    resource: ResourcePublic


class ResourceList(BaseModel):
    """`{"resources": [...]}`."""

    resources: list[ResourcePublic]


class StackEventPublic(BaseModel):
    """One event: a stack or resource status transition."""

    id: str
    resource_name: str
    logical_resource_id: str
    physical_resource_id: str
    resource_status: str
    resource_status_reason: str
    event_time: datetime
    links: list[Link] = Field(default_factory=list)

    @classmethod
    def of(cls, record: EventRecord, stack: StackRecord, base: str) -> StackEventPublic:
        """The public view of an event row, with Heat's `self`, `resource`, `stack` links."""
        physical = (
            record.meta.get("physical_id") if record.obj_type == "resource" else record.obj_id
        )
        stack_url = stack_href(base, stack.project_id, stack.name, stack.id)
        resource_url = f"{stack_url}/resources/{quote(record.obj_name, safe='')}"
        return cls(
            id=record.id,
            resource_name=record.obj_name,
            logical_resource_id=record.obj_name,
            physical_resource_id=str(physical or ""),
            resource_status=f"{record.action}_{record.status}",
            resource_status_reason=record.status_reason,
            event_time=record.timestamp,
            links=[
                Link(href=f"{resource_url}/events/{record.id}"),
                Link(href=resource_url, rel="resource"),
                Link(href=stack_url, rel="stack"),
            ],
        )


class StackEventList(BaseModel):
    """`{"events": [...]}`, newest last."""

    events: list[StackEventPublic]


class MarkUnhealthyBody(StrictModel):
    """`PATCH …/resources/{resource_name}`: exactly Heat's two keys."""

    mark_unhealthy: bool
    resource_status_reason: str = Field("", max_length=255)

    @field_validator("mark_unhealthy", mode="before")
    @classmethod
    def true_or_false(cls, value: object) -> bool:
        """Heat's extract_bool: a boolean, or "true"/"false" in any case; nothing else."""
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(f"Unrecognized value '{value}', acceptable values are: true, false")


class OutputSummary(BaseModel):
    """An output in `…/outputs`: Heat lists keys and descriptions, not values."""

    output_key: str
    description: str = ""


class OutputList(BaseModel):
    """`{"outputs": [...]}`."""

    outputs: list[OutputSummary]


class OutputEnvelope(BaseModel):
    """`{"output": {...}}`."""

    output: StackOutput


class StackEventDetail(StackEventPublic):
    """One event as `GET …/events/{event_id}` shows it: with the resource's type (a
    stack's own events are `OS::Heat::Stack`'s, as in Heat)."""

    resource_type: str

    @classmethod
    def detail(cls, record: EventRecord, stack: StackRecord, base: str) -> StackEventDetail:
        """The detailed view of an event row."""
        summary = StackEventPublic.of(record, stack, base)
        kind = record.meta.get("type") if record.obj_type == "resource" else STACK_TYPE
        return cls(**summary.model_dump(), resource_type=str(kind or ""))


class StackEventEnvelope(BaseModel):
    """`{"event": {...}}`."""

    event: StackEventDetail


class ResourceFilters(BaseModel):
    """Heat's resource-list filters; each holds the values any of which may match."""

    type: list[str] | None = None
    name: list[str] | None = None
    status: list[str] | None = None
    action: list[str] | None = None
    id: list[str] | None = None
    physical_resource_id: list[str] | None = None

    def match(self, resource: ResourcePublic) -> bool:
        """Whether `resource` passes every filter that is set."""
        action, _, state = resource.resource_status.partition("_")
        fields = {
            "type": resource.resource_type,
            "name": resource.resource_name,
            "status": state,
            "action": action,
            "id": resource.physical_resource_id,
            "physical_resource_id": resource.physical_resource_id,
        }
        return all(
            wanted is None or fields[key] in wanted for key, wanted in self.model_dump().items()
        )
