"""Request and response bodies of `/v1/{project_id}/stacks` (Heat's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from api.schemas.common import StrictModel
from domain.errors import InvalidRequest
from domain.stacks import LockLevel
from domain.templates import load_template, resolve_parameters
from store.events import EventRecord
from store.stacks import StackRecord, StackResourceRecord

STACK_NAME = r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$"
#: A template may arrive as an object or as YAML/JSON text (the API body limit bounds it).
TemplateField = dict[str, Any] | str


class StackCreate(StrictModel):
    """`POST /v1/{project_id}/stacks`."""

    stack_name: str = Field(pattern=STACK_NAME)
    template: TemplateField
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_mins: int | None = Field(None, ge=1, le=10_080)
    disable_rollback: bool = True


class StackUpdate(StrictModel):
    """`PUT …/stacks/{stack_name}/{stack_id}`: a new template."""

    template: TemplateField
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_mins: int | None = Field(None, ge=1, le=10_080)
    disable_rollback: bool | None = None


class StackPatch(StrictModel):
    """`PATCH …/stacks/{stack_name}/{stack_id}`: the existing template, maybe new parameters."""

    template: TemplateField | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_mins: int | None = Field(None, ge=1, le=10_080)
    disable_rollback: bool | None = None


class Link(BaseModel):
    """A Heat-style link."""

    href: str
    rel: str = "self"


class StackCreated(BaseModel):
    """`{"stack": {"id", "links"}}`."""

    class Inner(BaseModel):
        id: str
        links: list[Link]

    stack: Inner


def stack_href(project_id: str, name: str, stack_id: str) -> str:
    """Where a stack lives."""
    return f"/v1/{project_id}/stacks/{name}/{stack_id}"


class StackOutput(BaseModel):
    """One output, as Heat lists them."""

    output_key: str
    output_value: Any
    description: str = ""


class StackPublic(BaseModel):
    """A stack as the API shows it."""

    id: str
    stack_name: str
    stack_status: str
    stack_status_reason: str
    parent: str | None
    outputs: list[StackOutput]
    parameters: dict[str, Any]
    lock: dict[str, Any] | None
    disable_rollback: bool
    timeout_mins: int | None
    creation_time: datetime
    updated_time: datetime
    links: list[Link]

    @classmethod
    def of(cls, record: StackRecord) -> StackPublic:
        """The public view of a stack row."""
        outputs = record.template.get("outputs") or {}
        return cls(
            id=record.id,
            stack_name=record.name,
            stack_status=f"{record.action}_{record.status}",
            stack_status_reason=record.status_reason,
            parent=record.parent_id,
            outputs=[
                StackOutput(
                    output_key=key,
                    output_value=value,
                    description=str((outputs.get(key) or {}).get("description", "")),
                )
                for key, value in sorted(record.outputs.items())
            ],
            parameters=shown_parameters(record.template, record.parameters),
            lock=record.lock,
            disable_rollback=record.disable_rollback,
            timeout_mins=record.timeout_mins,
            creation_time=record.created_at,
            updated_time=record.updated_at,
            links=[Link(href=stack_href(record.project_id, record.name, record.id))],
        )


def shown_parameters(template: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """Every parameter's value as Heat shows it: defaults filled in, hidden ones masked."""
    try:
        loaded = load_template(template or {"heat_template_version": "2021-04-16"})
        values = resolve_parameters(loaded, given)
    except InvalidRequest:
        return dict(given)
    return {
        name: "******" if name in loaded.parameters and loaded.parameters[name].hidden else value
        for name, value in values.items()
    }


class StackEnvelope(BaseModel):
    """`{"stack": {...}}`."""

    stack: StackPublic


class StackList(BaseModel):
    """`{"stacks": [...]}`."""

    stacks: list[StackPublic]


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

    @classmethod
    def of(cls, record: StackResourceRecord, stack: StackRecord) -> ResourcePublic:
        """The public view of a resource row."""
        return cls(
            resource_name=record.name,
            logical_resource_id=record.name,
            resource_type=record.type,
            physical_resource_id=record.physical_id or "",
            resource_status=f"{record.action}_{record.status}",
            resource_status_reason=record.status_reason,
            required_by=record.required_by,
            attributes=record.attributes,
            creation_time=record.created_at,
            updated_time=record.updated_at,
            stack_name=stack.name,
            stack_id=stack.id,
            parent_resource=stack.parent_resource,
        )


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

    @classmethod
    def of(cls, record: EventRecord) -> StackEventPublic:
        """The public view of an event row."""
        physical = (
            record.meta.get("physical_id") if record.obj_type == "resource" else record.obj_id
        )
        return cls(
            id=record.id,
            resource_name=record.obj_name,
            logical_resource_id=record.obj_name,
            physical_resource_id=str(physical or ""),
            resource_status=f"{record.action}_{record.status}",
            resource_status_reason=record.status_reason,
            event_time=record.timestamp,
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


class LockBody(StrictModel):
    """`{"lock": {"level"?, "reason"?, "owner"?}}`."""

    level: LockLevel = LockLevel.ALL
    reason: str = Field("", max_length=255)
    owner: str = Field("", max_length=255)


#: The stack actions, and whether each takes a body.
STACK_ACTIONS = ("lock", "unlock", "check", "suspend", "resume", "cancel_update")


def parse_stack_action(body: object) -> tuple[str, LockBody | None]:
    """Heat's action body rules: exactly one known key (400 with its wording otherwise)."""
    if not isinstance(body, dict) or not body:
        raise InvalidRequest("No action specified")
    if len(body) > 1:
        raise InvalidRequest("Multiple actions specified")
    ((name, args),) = body.items()
    if name not in STACK_ACTIONS:
        raise InvalidRequest(f"Invalid action {name} specified")
    if name == "lock":
        if args is not None and not isinstance(args, dict):
            raise InvalidRequest("lock: the body must be an object or null")
        try:
            return name, LockBody.model_validate(args or {})
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidRequest(f"lock.{where}: {first['msg']}") from err
    if args not in (None, {}):
        raise InvalidRequest(f"{name}: takes no arguments (send null)")
    return name, None
