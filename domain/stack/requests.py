"""What the API and parent stacks send a stack workflow, and what it answers.

Leaf messages: the API imports them without pulling templates, rules or workflows.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.stack.groups import GroupSpec
from domain.stack.state import LockLevel


class StackOperationRequest(BaseModel):
    """An operation on a stack: create/update carry a template, the rest nothing."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    template: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None
    timeout_mins: int | None = None
    disable_rollback: bool | None = None
    #: An update's tags: a PUT without them clears them, a PATCH keeps them.
    tags: list[str] | None = None
    #: PATCH: keep the current template unless one is given, merge parameters.
    existing: bool = False
    #: Workflow id of a parent's operation waiting for the outcome (nested stacks).
    notify: str | None = None
    #: A scaling group's nested stack: resize to this (it picks the victims itself).
    group: GroupSpec | None = None
    #: The environment's breakpoint hooks (`domain.stack.hooks`); None keeps the stack's.
    hooks: dict[str, Any] | None = None
    #: The environment's event sinks (`domain.stack.event_sinks`); None keeps the stack's.
    event_sinks: list[dict[str, Any]] | None = None


class LockStackRequest(BaseModel):
    """`{"lock": {"level", "reason", "owner"}}`."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    level: LockLevel = LockLevel.ALL
    reason: str = ""
    owner: str = ""
    notify: str | None = None


class StackAccepted(BaseModel):
    """What a stack operation answers: its action id and the stack's state."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    stack_status: str


class MarkResourceRequest(BaseModel):
    """`PATCH …/resources/{resource_name}` as the stack workflow receives it."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    #: A resource name, or a physical id unique in the stack.
    resource_name: str
    mark_unhealthy: bool
    resource_status_reason: str = ""


class UnsetHookRequest(BaseModel):
    """`{"unset_hook": hook}` signalled to a resource paused at that hook."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    resource_name: str
    hook: str


class ResourceSignalRequest(BaseModel):
    """`POST …/resources/{resource_name}/signal` as the stack workflow receives it."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    resource_name: str
    details: dict[str, Any] = Field(default_factory=dict)
    #: For a software deployment: the agent's outputs (any keys), not a handle's signal.
    deployment: bool = False
    #: The deployment's record was changed through the deployments API: read it again.
    refresh: bool = False


class ScalingPlan(BaseModel):
    """What a scaling signal does: resize `group` from `current` to `size`, or nothing."""

    model_config = ConfigDict(frozen=True)

    policy: str
    group: str
    current: int
    size: int
    #: Why nothing happens (cooldown, already at a bound); empty when the group resizes.
    ignored: str = ""
