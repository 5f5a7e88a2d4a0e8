"""Actions: the durable record of every operation (Senlin's word)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ActionStatus(StrEnum):
    """Life of an action, as Senlin names it."""

    READY = "READY"
    RUNNING = "RUNNING"
    WAITING = "WAITING"
    WAITING_LIFECYCLE_COMPLETION = "WAITING_LIFECYCLE_COMPLETION"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def is_final(self) -> bool:
        """Whether the action has ended and will not change again."""
        return self in FINAL_STATUSES


FINAL_STATUSES = frozenset({ActionStatus.SUCCEEDED, ActionStatus.FAILED, ActionStatus.CANCELLED})


class ActionName(StrEnum):
    """Operation names, upstream spelling so operators can grep for them."""

    CLUSTER_CREATE = "CLUSTER_CREATE"
    CLUSTER_DELETE = "CLUSTER_DELETE"
    CLUSTER_UPDATE = "CLUSTER_UPDATE"
    CLUSTER_CHECK = "CLUSTER_CHECK"
    CLUSTER_LOCK = "CLUSTER_LOCK"
    CLUSTER_UNLOCK = "CLUSTER_UNLOCK"
    CLUSTER_SCALE_OUT = "CLUSTER_SCALE_OUT"
    CLUSTER_SCALE_IN = "CLUSTER_SCALE_IN"
    CLUSTER_RESIZE = "CLUSTER_RESIZE"
    CLUSTER_DEL_NODES = "CLUSTER_DEL_NODES"
    CLUSTER_RECOVER = "CLUSTER_RECOVER"
    CLUSTER_ATTACH_POLICY = "CLUSTER_ATTACH_POLICY"
    CLUSTER_DETACH_POLICY = "CLUSTER_DETACH_POLICY"
    CLUSTER_UPDATE_POLICY = "CLUSTER_UPDATE_POLICY"
    NODE_CREATE = "NODE_CREATE"
    NODE_DELETE = "NODE_DELETE"
    NODE_CHECK = "NODE_CHECK"
    NODE_RECOVER = "NODE_RECOVER"
    NODE_UPDATE = "NODE_UPDATE"
    NODE_OPERATION = "NODE_OPERATION"
    CLUSTER_OPERATION = "CLUSTER_OPERATION"
    NODE_JOIN = "NODE_JOIN"
    CLUSTER_ADD_NODES = "CLUSTER_ADD_NODES"
    CLUSTER_REPLACE_NODES = "CLUSTER_REPLACE_NODES"
    STACK_CREATE = "STACK_CREATE"
    STACK_UPDATE = "STACK_UPDATE"
    STACK_DELETE = "STACK_DELETE"
    STACK_CHECK = "STACK_CHECK"
    STACK_SUSPEND = "STACK_SUSPEND"
    STACK_RESUME = "STACK_RESUME"
    STACK_LOCK = "STACK_LOCK"
    STACK_UNLOCK = "STACK_UNLOCK"
    STACK_ROLLBACK = "STACK_ROLLBACK"
    STACK_MARK_UNHEALTHY = "STACK_MARK_UNHEALTHY"


class ActionChange(BaseModel):
    """One write of an action record: created on first sight, updated afterwards.

    Fields left `None` keep what the record already holds, so activities can send
    only what changed and a retried write is harmless.
    """

    model_config = ConfigDict(frozen=True)

    action_id: str
    project_id: str
    name: ActionName
    target: str
    status: ActionStatus
    status_reason: str = ""
    inputs: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    depends_on: list[str] | None = None
    depended_by: list[str] | None = None
    workflow_id: str | None = None
    at: datetime = Field(description="When this change happened (workflow time)")
