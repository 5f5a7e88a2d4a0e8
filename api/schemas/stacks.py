"""Request and response bodies of `/v1/{project_id}/stacks` (Heat's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

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


class HeatInputs(StrictModel):
    """What every Heat client may send beside a template (create, update, preview)."""

    parameters: dict[str, Any] = Field(default_factory=dict)
    #: Every file the template or environment names, by that name (heatclient fills it).
    files: dict[str, str] = Field(default_factory=dict, max_length=1_000)
    environment: dict[str, Any] | str | None = None
    #: Names in `files` of environments applied in order, before `environment`.
    environment_files: list[str] = Field(default_factory=list, max_length=100)
    template_url: str | None = Field(None, max_length=2048)
    tags: str | list[str] | None = None
    timeout_mins: int | None = Field(None, ge=1, le=10_080)

    def refuse_unsupported(self) -> None:
        """400 for inputs Heat takes that Warden does not (rather than ignoring them)."""
        if self.template_url:
            raise InvalidRequest(
                "template_url is not supported: send the template itself in `template` "
                "(heatclient and `openstack stack create -t` do)"
            )
        if self.tags:
            raise InvalidRequest("tags are not supported by Warden yet")


class StackCreate(HeatInputs):
    """`POST /v1/{project_id}/stacks` (and `…/stacks/preview`)."""

    stack_name: str = Field(pattern=STACK_NAME)
    template: TemplateField | None = None
    disable_rollback: bool = True


class StackUpdate(HeatInputs):
    """`PUT …/stacks/{stack_name}/{stack_id}`: a new template."""

    template: TemplateField | None = None
    disable_rollback: bool | None = None
    #: heatclient repeats the name on update; it must be the stack's own.
    stack_name: str | None = Field(None, max_length=255)


class StackPatch(HeatInputs):
    """`PATCH …/stacks/{stack_name}/{stack_id}`: the existing template, maybe new parameters."""

    template: TemplateField | None = None
    disable_rollback: bool | None = None
    stack_name: str | None = Field(None, max_length=255)


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


def stack_href(base: str, project_id: str, name: str, stack_id: str) -> str:
    """Where a stack lives: an absolute URL under `base`, as Heat's clients follow it."""
    return f"{base}/v1/{project_id}/stacks/{name}/{stack_id}"


class StackOutput(BaseModel):
    """One output, as Heat lists them."""

    output_key: str
    output_value: Any = None
    description: str = ""


class StackPublic(BaseModel):
    """A stack as the API shows it (Heat's fields; the ones Warden has no use for are empty)."""

    id: str
    stack_name: str
    stack_status: str
    stack_status_reason: str
    parent: str | None
    description: str
    template_description: str
    outputs: list[StackOutput]
    parameters: dict[str, Any]
    lock: dict[str, Any] | None
    disable_rollback: bool
    timeout_mins: int | None
    creation_time: datetime
    updated_time: datetime
    deletion_time: datetime | None = None
    stack_owner: str | None = None
    stack_user_project_id: str | None = None
    tags: list[str] | None = None
    capabilities: list[Any] = Field(default_factory=list)
    notification_topics: list[str] = Field(default_factory=list)
    links: list[Link]

    @classmethod
    def of(cls, record: StackRecord, base: str) -> StackPublic:
        """The public view of a stack row; links are absolute URLs under `base`."""
        outputs = record.template.get("outputs") or {}
        description = str(record.template.get("description") or "")
        return cls(
            id=record.id,
            stack_name=record.name,
            stack_status=f"{record.action}_{record.status}",
            stack_status_reason=record.status_reason,
            parent=record.parent_id,
            description=description,
            template_description=description,
            outputs=[
                StackOutput(
                    output_key=key,
                    output_value=value,
                    description=str((outputs.get(key) or {}).get("description", "")),
                )
                for key, value in sorted(record.outputs.items())
            ],
            parameters={
                **shown_parameters(record.template, record.parameters),
                "OS::stack_id": record.id,
                "OS::stack_name": record.name,
                "OS::project_id": record.project_id,
            },
            lock=record.lock,
            disable_rollback=record.disable_rollback,
            timeout_mins=record.timeout_mins,
            creation_time=record.created_at,
            updated_time=record.updated_at,
            links=[Link(href=stack_href(base, record.project_id, record.name, record.id))],
        )


def shown_parameters(template: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """Every parameter's value as Heat shows it: defaults filled in, hidden ones masked."""
    try:
        loaded = load_template(template or {"heat_template_version": "2021-04-16"})
        values = resolve_parameters(loaded, given)
    except InvalidRequest:  # a template this Warden no longer reads: show nothing secret
        return dict.fromkeys(given, "******")
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
            links=[
                Link(href=f"{stack_url}/resources/{quote(record.name, safe='')}"),
                Link(href=stack_url, rel="stack"),
            ],
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


class StackEventEnvelope(BaseModel):
    """`{"event": {...}}`."""

    event: StackEventPublic


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


class PreviewResource(BaseModel):
    """A resource a preview would create."""

    resource_name: str
    logical_resource_id: str
    resource_type: str
    resource_action: str = "INIT"
    resource_status: str = "COMPLETE"
    resource_status_reason: str = ""
    physical_resource_id: str = ""
    required_by: list[str]
    properties: dict[str, Any]
    stack_name: str
    description: str = ""


class StackPreview(BaseModel):
    """`POST …/stacks/preview`: the stack a create would make, nothing made."""

    id: str = "None"
    stack_name: str
    description: str
    template_description: str
    parameters: dict[str, Any]
    disable_rollback: bool = True
    timeout_mins: int | None = None
    capabilities: list[Any] = Field(default_factory=list)
    notification_topics: list[str] = Field(default_factory=list)
    links: list[Link]
    resources: list[PreviewResource]

    @classmethod
    def of(
        cls,
        base: str,
        project_id: str,
        name: str,
        template: dict[str, Any],
        parameters: dict[str, Any],
    ) -> StackPreview:
        """The preview of `template` (already validated) with `parameters`."""
        loaded = load_template(template)
        required_by = loaded.required_by()
        description = loaded.description
        return cls(
            stack_name=name,
            description=description,
            template_description=description,
            parameters=shown_parameters(template, parameters),
            links=[Link(href=stack_href(base, project_id, name, "None"))],
            resources=[
                PreviewResource(
                    resource_name=res.name,
                    logical_resource_id=res.name,
                    resource_type=res.type,
                    required_by=required_by[res.name],
                    properties=res.properties,
                    stack_name=name,
                )
                for res in loaded.resources.values()
            ],
        )


class StackPreviewEnvelope(BaseModel):
    """`{"stack": {...}}`."""

    stack: StackPreview
