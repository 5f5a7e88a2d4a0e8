"""The stack an operation or a mark leaves: pure, no Temporal.

What an operation requires is in `domain.stack.rules`. These functions compute Heat's
stack after an operation is accepted, after it ends, and after a resource is marked,
so they are unit-tested without a server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.stack.requests import LockStackRequest, MarkResourceRequest, StackOperationRequest
from domain.stack.state import (
    RETARGETING,
    ResourceState,
    StackAction,
    StackLock,
    StackOperation,
    StackState,
    Status,
)

#: The reason Heat records when nobody gives one.
DEFAULT_UNHEALTHY_REASON = "state changed by resource_mark_unhealthy api"


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
            "tags": tags_after(state, op, req),
            "hooks": state.hooks if req.hooks is None else req.hooks,
            "event_sinks": state.event_sinks if req.event_sinks is None else req.event_sinks,
        }
    )


def tags_after(
    state: StackState, op: StackOperation, req: StackOperationRequest
) -> list[str] | None:
    """Heat's tags once `op` is accepted: an update's replace them (a PATCH without
    tags keeps them, a PUT without tags clears them); other operations keep them."""
    if op.action != StackAction.UPDATE or (req.existing and req.tags is None):
        return state.tags
    return req.tags


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
    if action in RETARGETING:
        update.update({"template": op.template, "parameters": op.parameters or {}})
    if action in (*RETARGETING, StackAction.ROLLBACK):
        update["outputs"] = ending.outputs
        update["output_errors"] = ending.output_errors
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
        self,
        resources: dict[str, ResourceState],
        outputs: dict[str, Any],
        error: str,
        output_errors: dict[str, str] | None = None,
    ) -> None:
        self.resources = resources
        self.outputs = outputs
        self.error = error
        self.output_errors = output_errors or {}


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
