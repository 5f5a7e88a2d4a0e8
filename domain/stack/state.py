"""Stack state as its entity workflow knows it (Heat's stack, resources and lock).

The requests and answers of stack operations live in `domain.stack.requests`, the rules
that refuse them in `domain.stack.rules`, and the state after each in
`domain.stack.transitions`.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class StackAction(StrEnum):
    """The ACTION half of Heat's `ACTION_STATUS`."""

    INIT = "INIT"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CHECK = "CHECK"
    SUSPEND = "SUSPEND"
    RESUME = "RESUME"
    LOCK = "LOCK"
    UNLOCK = "UNLOCK"
    ROLLBACK = "ROLLBACK"


class Status(StrEnum):
    """The STATUS half of Heat's `ACTION_STATUS`."""

    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class LockLevel(StrEnum):
    """`stacks` locks the stack tree; `all` also locks every resource that can be."""

    STACKS = "stacks"
    ALL = "all"


#: Operations that move the stack to a new template and parameters.
RETARGETING = (StackAction.CREATE, StackAction.UPDATE)


class StackLock(BaseModel):
    """Who locked the stack, at which level, and why."""

    model_config = ConfigDict(frozen=True)

    level: LockLevel = LockLevel.ALL
    reason: str = ""
    owner: str = ""
    locked_at: datetime
    #: Set on a nested stack locked with its parent: only the parent may unlock it.
    parent_id: str | None = None

    def describe(self) -> str:
        """Heat-style words for refusals: ` (level all by ops: db maintenance)`."""
        who = f" by {self.owner}" if self.owner else ""
        why = f": {self.reason}" if self.reason else ""
        return f" (level {self.level.value}{who}{why})"

    def server_reason(self, stack_name: str) -> str:
        """The `locked_reason` a locked stack's servers carry in Nova (at most 255)."""
        return f"Stack {stack_name} is locked{self.describe()}"[:255]


class ResourceState(BaseModel):
    """One resource of a stack as its workflow knows it."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str
    #: Stable id of the current physical generation (new on every replacement).
    resource_id: str
    physical_id: str | None = None
    #: What `get_resource` returns (the physical id, or a RandomString's value).
    reference: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    #: The static properties last applied (parameters resolved, references as written).
    properties: dict[str, Any] = Field(default_factory=dict)
    #: The fully resolved properties last applied (what the cloud was asked for).
    resolved: dict[str, Any] = Field(default_factory=dict)
    action: StackAction = StackAction.INIT
    status: Status = Status.COMPLETE
    status_reason: str = ""
    #: How many physical generations this resource has had (request ids use it).
    generation: int = 0
    #: Whether level `all` locked its physical resource.
    locked: bool = False
    #: Marked unhealthy by a user or app (a nested stack marked so is replaced whole).
    marked: bool = False
    #: Adopted from the template's `external_id`: not updated, not deleted by the stack.
    external_id: str | None = None
    #: Heat's resource metadata (`GET …/resources/{name}/metadata`): a wait condition
    #: handle's signals by id.
    rsrc_metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime

    @property
    def resource_status(self) -> str:
        """`ACTION_STATUS`, as the API shows it."""
        return f"{self.action.value}_{self.status.value}"

    @property
    def failed(self) -> bool:
        """Whether the next update replaces it (any FAILED state, CHECK_FAILED included)."""
        return self.status == Status.FAILED


class StackSpec(BaseModel):
    """What does not change over a stack's life."""

    model_config = ConfigDict(frozen=True)

    stack_id: str
    project_id: str
    name: str
    parent_id: str | None = None
    parent_resource: str | None = None


class StackOperation(BaseModel):
    """The operation a stack is busy with."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    action: StackAction
    #: The template and parameters this operation moves the stack to (create/update).
    template: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None
    lock: StackLock | None = None
    #: Workflow id of a parent's operation waiting for this one (nested stacks).
    notify: str | None = None
    #: Scaling groups of this stack to resize to these sizes (a scaling signal).
    group_sizes: dict[str, int] = Field(default_factory=dict)


class StackState(BaseModel):
    """The stack as its entity workflow knows it (the source of truth)."""

    spec: StackSpec
    template: dict[str, Any] = Field(default_factory=dict)
    #: Parameter values the user gave (defaults are applied at resolve time).
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_mins: int | None = None
    disable_rollback: bool = True
    #: Heat's stack tags (None: none given).
    tags: list[str] | None = None
    #: The environment's breakpoint hooks (`domain.stack.hooks.Breakpoints`).
    hooks: dict[str, Any] = Field(default_factory=dict)
    #: The environment's event sinks (`domain.stack.event_sinks.EventSink`, as maps).
    event_sinks: list[dict[str, Any]] = Field(default_factory=list)
    action: StackAction = StackAction.INIT
    status: Status = Status.COMPLETE
    status_reason: str = "Stack is initializing"
    resources: dict[str, ResourceState] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    #: Why an output has no value, by key (Heat's `output_error`).
    output_errors: dict[str, str] = Field(default_factory=dict)
    lock: StackLock | None = None
    busy: StackOperation | None = None
    #: Suspended (servers paused) until a resume completes, whatever ran in between.
    suspended: bool = False
    deleted: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def stack_status(self) -> str:
        """`ACTION_STATUS`, as the API shows it."""
        return f"{self.action.value}_{self.status.value}"

    @property
    def locked(self) -> bool:
        """Whether maintenance mode refuses other operations (LOCK in progress or done)."""
        return self.action == StackAction.LOCK and self.status != Status.FAILED


def pseudo_parameters(spec: StackSpec) -> dict[str, Any]:
    """Heat's pseudo parameters (`get_param: OS::stack_name`, …)."""
    return {
        "OS::stack_name": spec.name,
        "OS::stack_id": spec.stack_id,
        "OS::project_id": spec.project_id,
    }
