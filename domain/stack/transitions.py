"""What a stack operation requires, and the stack it leaves: pure, no Temporal.

The rules refuse an operation (a `WardenError`: 409 Conflict, 400, 404); the
`StackWorkflow` applies each in its update's validator and again under its mutex.
The state functions compute Heat's stack after an operation is accepted, after it
ends, and after a resource is marked, so they are unit-tested without a server.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from domain.stack.requests import (
    LockStackRequest,
    MarkResourceRequest,
    ResourceSignalRequest,
    StackOperationRequest,
)
from domain.stack.rules import (
    ensure_can_cancel_update,
    ensure_can_lock,
    ensure_can_mark,
    ensure_can_start,
    ensure_can_unlock,
    scaling_target,
    target_of,
)
from domain.stack.state import (
    ResourceState,
    StackAction,
    StackLock,
    StackOperation,
    StackState,
    Status,
)

#: Operations that move the stack to a new template and parameters.
_RETARGETING = (StackAction.CREATE, StackAction.UPDATE)

#: The reason Heat records when nobody gives one.
DEFAULT_UNHEALTHY_REASON = "state changed by resource_mark_unhealthy api"


# ---- rules: what an operation requires (raise WardenError to refuse) ----


def may_start(action: StackAction) -> Callable[[StackState, StackOperationRequest], object]:
    """The rule of an operation a `stack-op` child carries out (create, update, …)."""

    def rule(state: StackState, req: StackOperationRequest) -> None:
        ensure_can_start(state, action)
        if action in _RETARGETING:
            target_of(state, req)

    return rule


def may_lock(state: StackState, req: LockStackRequest) -> None:
    """Lock (or change the lock's level)."""
    ensure_can_lock(state)


def may_unlock(state: StackState, req: StackOperationRequest) -> None:
    """Unlock; a parent's unlock may also clear a lock it did not set itself."""
    ensure_can_unlock(state, by_parent=req.notify is not None)


def may_cancel_update(state: StackState, req: StackOperationRequest) -> None:
    """Cancel the running update."""
    ensure_can_cancel_update(state)


def may_signal(state: StackState, req: ResourceSignalRequest) -> None:
    """A scaling policy's signal (whether it resizes is decided when it is handled)."""
    scaling_target(state, req)


def may_mark(state: StackState, req: MarkResourceRequest) -> None:
    """Mark a resource unhealthy, or clear the mark."""
    ensure_can_mark(state, req.resource_name)


# ---- the stack after an operation ----


def new_lock(req: LockStackRequest, state: StackState, now: datetime) -> StackLock:
    """The lock a lock request sets (a parent's lock remembers the parent)."""
    return StackLock(
        level=req.level,
        reason=req.reason,
        owner=req.owner,
        locked_at=now,
        parent_id=state.spec.parent_id if req.notify else None,
    )


def accepted(
    state: StackState, op: StackOperation, req: StackOperationRequest, reason: str, now: datetime
) -> StackState:
    """The stack once `op` is accepted: IN_PROGRESS and busy with it."""
    return state.model_copy(
        update={
            "action": op.action,
            "status": Status.IN_PROGRESS,
            "status_reason": reason,
            "busy": op,
            "created_at": state.created_at or now,
            "updated_at": now,
            "lock": op.lock or state.lock,
            "timeout_mins": req.timeout_mins or state.timeout_mins,
            "disable_rollback": state.disable_rollback
            if req.disable_rollback is None
            else req.disable_rollback,
        }
    )


def rolling_back(state: StackState) -> StackState:
    """The stack while a failed create/update is rolled back."""
    return state.model_copy(
        update={
            "action": StackAction.ROLLBACK,
            "status": Status.IN_PROGRESS,
            "status_reason": "Rolling back",
        }
    )


def finished(
    state: StackState,
    op: StackOperation,
    action: StackAction,
    ending: OperationEnding,
    *,
    final: bool,
    now: datetime,
) -> StackState:
    """Heat's stack after `action` (the operation itself or its rollback) ended.

    Heat keeps the new template even when a create or update failed: each resource
    remembers what was applied to it, so the next update redoes exactly what this
    one did not reach. Not `final` (a rollback follows): the stack stays busy.
    """
    ok = not ending.error
    update: dict[str, Any] = {
        "resources": ending.resources,
        "action": action,
        "status": Status.COMPLETE if ok else Status.FAILED,
        "status_reason": f"Stack {action.value} completed successfully" if ok else ending.error,
        "updated_at": now,
    }
    if action in _RETARGETING:
        update.update({"template": op.template, "parameters": op.parameters or {}})
    if action in (*_RETARGETING, StackAction.ROLLBACK):
        update["outputs"] = ending.outputs
    if action == StackAction.UNLOCK and ok:
        update["lock"] = None
    if ok and action in (StackAction.SUSPEND, StackAction.RESUME):
        update["suspended"] = action == StackAction.SUSPEND
    if final:
        update["busy"] = None
        update["deleted"] = ok and action == StackAction.DELETE
    return state.model_copy(update=update)


class OperationEnding:
    """How a stack operation's child ended: the resources it left and its error."""

    def __init__(
        self, resources: dict[str, ResourceState], outputs: dict[str, Any], error: str
    ) -> None:
        self.resources = resources
        self.outputs = outputs
        self.error = error


def mark_resource(
    resource: ResourceState, req: MarkResourceRequest, at: datetime
) -> ResourceState | None:
    """The resource after the mark, or None when the rules say nothing changes."""
    if resource.action == StackAction.DELETE:
        return None  # being (or already) deleted: marking it means nothing
    if req.mark_unhealthy:
        reason = req.resource_status_reason or DEFAULT_UNHEALTHY_REASON
        return resource.model_copy(
            update={
                "action": StackAction.CHECK,
                "status": Status.FAILED,
                "status_reason": reason,
                "marked": True,
                "updated_at": at,
            }
        )
    if resource.resource_status != "CHECK_FAILED":
        return None
    return resource.model_copy(
        update={
            "action": StackAction.CHECK,
            "status": Status.COMPLETE,
            "status_reason": req.resource_status_reason or DEFAULT_UNHEALTHY_REASON,
            "marked": False,
            "updated_at": at,
        }
    )


def with_resource(state: StackState, resource: ResourceState) -> StackState:
    """The stack with one resource replaced (e.g. just marked)."""
    return state.model_copy(update={"resources": {**state.resources, resource.name: resource}})
