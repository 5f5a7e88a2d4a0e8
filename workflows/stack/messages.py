"""A stack's messages: the entity's input, its operations, what a nested stack reports.

A leaf the API and apps import (no activities, no store writers), kept apart from
the workflow modules so a stack operation can start and talk to a nested stack's
entity workflow without the two modules importing each other.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from domain.actions import ActionName
from domain.stack.requests import (
    LockStackRequest,
    MarkResourceRequest,
    ResourceSignalRequest,
    StackAccepted,
    StackOperationRequest,
    UnsetHookRequest,
)
from domain.stack.rules import (
    ensure_can_cancel_update,
    ensure_can_cancel_without_rollback,
    ensure_can_deliver,
    ensure_can_lock,
    ensure_can_mark,
    ensure_can_run,
    ensure_can_signal,
    ensure_can_unlock,
    ensure_can_unset_hook,
)
from domain.stack.state import StackAction, StackOperation, StackState
from workflows.operation import Operation

#: Workflow type of the stack entity (started by name from a parent's operation).
STACK_WORKFLOW = "StackWorkflow"
#: Workflow type of the custom-constraint lookups (`workflows/stack/cloud_checks.py`).
CLOUD_CHECKS_WORKFLOW = "CloudChecksWorkflow"
#: Signal a nested stack sends to the operation that asked it for something.
NESTED_FINISHED = "nested_finished"


class StackInput(BaseModel):
    """Start (and continue-as-new) input of StackWorkflow: everything it knows."""

    state: StackState
    pending: StackOperation | None = None
    recent_action_ids: list[str] = Field(default_factory=list)
    #: Continue-as-new after this many history events (tests); else when suggested.
    history_limit: int | None = None


class NestedOutcome(BaseModel):
    """How a nested stack's operation ended, sent to the parent's waiting operation."""

    model_config = ConfigDict(frozen=True)

    stack_id: str
    action_id: str
    ok: bool
    reason: str = ""
    stack_status: str = ""
    outputs: dict[str, Any] = Field(default_factory=dict)
    output_errors: dict[str, str] = Field(default_factory=dict)
    #: Members left FAILED (what a stack check found).
    failed: list[str] = Field(default_factory=list)
    #: Resources the nested stack has now, and their physical ids.
    size: int = 0
    refs: dict[str, str | None] = Field(default_factory=dict)
    #: What a group reads of each resource (`domain.stack.groups.member_view`), by name.
    members: dict[str, dict[str, Any]] = Field(default_factory=dict)


class StackOperations:
    """Every operation of a stack's entity workflow, declared once (docs/ARCHITECTURE.md).

    The workflow binds each to its handler (`workflows/stack/workflow.py`); the API sends them
    with `TemporalGateway.update(…, StackOperations.mark_unhealthy, request)`.
    """

    create: Final = Operation(
        "create", StackAction.CREATE, StackOperationRequest, StackAccepted,
        ensure_can_run(StackAction.CREATE), signal=False,
        doc="Create the stack's resources (sent with the workflow's start).",
    )  # fmt: skip
    update: Final = Operation(
        "update", StackAction.UPDATE, StackOperationRequest, StackAccepted,
        ensure_can_run(StackAction.UPDATE),
        doc="Move the stack to a new template and/or parameters (replaces failed resources).",
    )  # fmt: skip
    delete: Final = Operation(
        "delete", StackAction.DELETE, StackOperationRequest, StackAccepted,
        ensure_can_run(StackAction.DELETE),
        doc="Delete every resource, dependents first, then the stack.",
    )  # fmt: skip
    check: Final = Operation(
        "check", StackAction.CHECK, StackOperationRequest, StackAccepted,
        ensure_can_run(StackAction.CHECK),
        doc="Compare every resource with the cloud (servers must be ACTIVE).",
    )  # fmt: skip
    suspend: Final = Operation(
        "suspend", StackAction.SUSPEND, StackOperationRequest, StackAccepted,
        ensure_can_run(StackAction.SUSPEND),
        doc="Pause every server of the stack.",
    )  # fmt: skip
    resume: Final = Operation(
        "resume", StackAction.RESUME, StackOperationRequest, StackAccepted,
        ensure_can_run(StackAction.RESUME),
        doc="Unpause every server of a suspended stack.",
    )  # fmt: skip
    lock: Final = Operation(
        "lock", StackAction.LOCK, LockStackRequest, StackAccepted, ensure_can_lock,
        doc="Maintenance mode: everything but unlock (and lock, to change level) gets 409.",
    )  # fmt: skip
    unlock: Final = Operation(
        "unlock", StackAction.UNLOCK, StackOperationRequest, StackAccepted, ensure_can_unlock,
        doc="Leave maintenance mode (also from LOCK_FAILED and UNLOCK_FAILED).",
    )  # fmt: skip
    cancel_update: Final = Operation(
        "cancel_update", StackAction.UPDATE, StackOperationRequest, StackAccepted,
        ensure_can_cancel_update, signal=False, child=False,
        doc="Stop a running update (nothing new starts) and roll it back.",
    )  # fmt: skip
    cancel_without_rollback: Final = Operation(
        "cancel_without_rollback", StackAction.UPDATE, StackOperationRequest, StackAccepted,
        ensure_can_cancel_without_rollback, signal=False, child=False,
        doc="Stop a running create or update (nothing new starts); it fails, no rollback.",
    )  # fmt: skip
    signal: Final = Operation(
        "signal", StackAction.UPDATE, ResourceSignalRequest, StackAccepted, ensure_can_signal,
        doc="A scaling policy fired: resize its group (refused while busy or locked).",
    )  # fmt: skip
    unset_hook: Final = Operation(
        "unset_hook", StackAction.UPDATE, UnsetHookRequest, StackAccepted,
        ensure_can_unset_hook, signal=False, child=False,
        doc="Clear a breakpoint hook a running operation waits at (`{\"unset_hook\": …}`).",
    )  # fmt: skip
    deliver_signal: Final = Operation(
        "deliver_signal", StackAction.UPDATE, ResourceSignalRequest, StackAccepted,
        ensure_can_deliver, child=False,
        doc="A signal to a wait condition handle: a wait condition counting it goes on.",
    )  # fmt: skip
    mark_unhealthy: Final = Operation(
        "mark_unhealthy", ActionName.STACK_MARK_UNHEALTHY.value, MarkResourceRequest,
        StackAccepted, ensure_can_mark, child=False,
        doc="Mark a resource CHECK_FAILED (the next update replaces it) or clear the mark.",
    )  # fmt: skip

    @classmethod
    def all(cls) -> list[Operation[Any, Any, StackAccepted]]:
        """Every operation, in declaration order."""
        return [v for v in vars(cls).values() if isinstance(v, Operation)]
