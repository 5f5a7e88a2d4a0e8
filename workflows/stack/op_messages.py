"""The input and result of a stack operation child (`stack-op:{stack_id}:{action_id}`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.state import ResourceState, StackAction, StackLock, StackSpec

EMPTY_TEMPLATE: dict[str, Any] = {"heat_template_version": "2021-04-16"}
#: The signal that clears a breakpoint hook a step of the operation waits at.
UNSET_HOOK = "unset_hook"
#: The signal that passes a wait condition handle's signal to the running operation.
RESOURCE_SIGNAL = "resource_signal"


class StackOpInput(BaseModel):
    """Everything one operation needs: no database reads inside workflows."""

    spec: StackSpec
    action_id: str
    action: StackAction
    #: The template and parameter values the stack moves to (create/update/rollback).
    template: dict[str, Any] = Field(default_factory=dict)
    parameters: dict[str, Any] = Field(default_factory=dict)
    #: The template the stack had (update/rollback: what KEEP is judged against).
    old_template: dict[str, Any] = Field(default_factory=dict)
    old_parameters: dict[str, Any] = Field(default_factory=dict)
    resources: dict[str, ResourceState] = Field(default_factory=dict)
    #: The lock being applied (LOCK) — nested stacks get the same one.
    lock: StackLock | None = None
    #: Scaling groups to resize (a scaling signal), by resource name.
    group_sizes: dict[str, int] = Field(default_factory=dict)
    timeout_s: int | None = None
    #: The stack's breakpoint hooks (`domain.stack.hooks`): where the operation pauses.
    hooks: dict[str, Any] = Field(default_factory=dict)
    #: The stack's event sinks: where its events are posted too.
    event_sinks: list[dict[str, Any]] = Field(default_factory=list)


class StackOpResult(BaseModel):
    """The resources as the operation left them, the outputs, and the first error."""

    resources: dict[str, ResourceState]
    outputs: dict[str, Any] = Field(default_factory=dict)
    #: Why an output has no value, by key (Heat's `output_error`).
    output_errors: dict[str, str] = Field(default_factory=dict)
    error: str = ""
