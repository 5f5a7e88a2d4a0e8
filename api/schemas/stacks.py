"""Request and response bodies of `/v1/{project_id}/stacks` (Heat's shapes)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from api.schemas.common import StrictModel
from domain.errors import InvalidRequest
from domain.hot.template import load_template, resolve_parameters
from domain.stack.state import LockLevel
from store.stacks import StackRecord

STACK_NAME = r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$"
#: A template may arrive as an object or as YAML/JSON text (the API body limit bounds it).
TemplateField = dict[str, Any] | str


class HeatInputs(StrictModel):
    """What every Heat client may send beside a template (create, update, preview)."""

    parameters: dict[str, Any] = Field(default_factory=dict)
    #: Every file the template or environment names, by that name (heatclient fills it).
    files: dict[str, str] = Field(default_factory=dict, max_length=1_000)
    environment: dict[str, Any] | str | None = None
    #: Names in `files` of environments applied in order, before `environment`. Null is
    #: none, as Heat takes it (heat-tempest-plugin's `stack_create` sends null).
    environment_files: list[str] | None = Field(None, max_length=100)
    template_url: str | None = Field(None, max_length=2048)
    tags: str | list[str] | None = Field(None, max_length=10_000)
    timeout_mins: int | None = Field(None, ge=1, le=10_080)

    def refuse_unsupported(self) -> None:
        """400 for inputs Heat takes that Warden does not (rather than ignoring them),
        and for tags Heat would refuse."""
        self.tag_list()
        if self.template_url:
            raise InvalidRequest(
                "template_url is not supported: send the template itself in `template` "
                "(heatclient and `openstack stack create -t` do)"
            )

    def tag_list(self) -> list[str] | None:
        """The tags as Heat takes them: a comma-separated string or a list of strings,
        each at most 80 characters and without a comma (None: none given)."""
        if self.tags is None:
            return None
        if isinstance(self.tags, str):
            tags = self.tags.split(",") if self.tags else []  # "" clears them
        else:
            tags = self.tags
        return checked_tags(tags, in_list=not isinstance(self.tags, str))


def checked_tags(tags: list[str], *, in_list: bool = True) -> list[str]:
    """Heat's checks of stack tags (`heat/engine/api.py`, `param_utils.extract_tags`)."""
    for tag in tags:
        if len(tag) > 80:
            raise InvalidRequest(f'Invalid tag, "{tag}" is longer than 80 characters')
        if in_list and "," in tag:
            raise InvalidRequest(f'Invalid tag, "{tag}" contains a comma')
    return tags


class StackCreate(HeatInputs):
    """`POST /v1/{project_id}/stacks` (and `…/stacks/preview`)."""

    stack_name: str = Field(pattern=STACK_NAME)
    template: TemplateField | None = None
    disable_rollback: bool = True


class StackUpdate(HeatInputs):
    """`PUT …/stacks/{stack_name}/{stack_id}`: a new template."""

    template: TemplateField | None = None
    disable_rollback: bool | None = None
    #: heatclient repeats the name on update; Heat ignores it (a stack is never renamed).
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


def output_description(spec: Any) -> str:
    """An output's description as Heat shows it ("No description given" when it has none)."""
    given = spec.get("description") if isinstance(spec, dict) else None
    return str(given) if given else "No description given"


def stack_href(base: str, project_id: str, name: str, stack_id: str) -> str:
    """Where a stack lives: an absolute URL under `base`, as Heat's clients follow it."""
    return f"{base}/v1/{project_id}/stacks/{name}/{stack_id}"


class StackOutput(BaseModel):
    """One output, as Heat lists them; `output_error` only on one without a value."""

    output_key: str
    output_value: Any = None
    description: str = ""
    output_error: str | None = None

    @model_serializer(mode="wrap")
    def _heat_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        shown: dict[str, Any] = handler(self)
        if shown.get("output_error") is None:
            shown.pop("output_error", None)
        return shown


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
                    description=output_description(outputs.get(key)),
                    output_error=(record.output_errors or {}).get(key),
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
            tags=record.tags,
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
        name: "******"
        if name in loaded.parameters and loaded.parameters[name].hidden
        else _heat_text(loaded.parameters[name].type if name in loaded.parameters else "", value)
        for name, value in values.items()
    }


def _heat_text(kind: str, value: Any) -> Any:
    """A parameter's value as Heat shows it on a stack: text (`str()` of the value, a
    list joined with commas, JSON as JSON)."""
    if value is None or isinstance(value, str):
        return value
    if kind == "comma_delimited_list" and isinstance(value, list):
        return ",".join(str(item) for item in value)
    if kind == "json" or isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


class StackEnvelope(BaseModel):
    """`{"stack": {...}}`."""

    stack: StackPublic


class StackList(BaseModel):
    """`{"stacks": [...]}`."""

    stacks: list[StackPublic]


class LockBody(StrictModel):
    """`{"lock": {"level"?, "reason"?, "owner"?}}`."""

    level: LockLevel = LockLevel.ALL
    reason: str = Field("", max_length=255)
    owner: str = Field("", max_length=255)


#: The stack actions, and whether each takes a body.
STACK_ACTIONS = (
    "lock",
    "unlock",
    "check",
    "suspend",
    "resume",
    "cancel_update",
    "cancel_without_rollback",
)


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
