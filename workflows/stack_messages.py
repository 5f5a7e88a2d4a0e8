"""Messages between stack workflows: the entity's input and what a nested stack reports.

Kept apart from the workflow modules so a stack operation can start and talk to a
nested stack's entity workflow without the two modules importing each other.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.stacks import StackOperation, StackState

#: Workflow type of the stack entity (started by name from a parent's operation).
STACK_WORKFLOW = "StackWorkflow"
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
    #: Members left FAILED (what a stack check found).
    failed: list[str] = Field(default_factory=list)
    #: Resources the nested stack has now, and their physical ids.
    size: int = 0
    refs: dict[str, str | None] = Field(default_factory=dict)
