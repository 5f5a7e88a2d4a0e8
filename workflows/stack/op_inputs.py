"""What a stack's entity workflow hands its `stack-op` child, and tells a parent after.

Pure functions of the stack's state and the operation: the same state gives the same
input on replay.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.groups import member_view
    from domain.stack.state import StackAction, StackOperation, StackState
    from workflows.stack.messages import NestedOutcome
    from workflows.stack.op_messages import StackOpInput


def operation_input(s: StackState, op: StackOperation) -> StackOpInput:
    """The child's input: from the stack as it is to what `op` asks for."""
    return StackOpInput(
        spec=s.spec,
        action_id=op.action_id,
        action=op.action,
        template=op.template if op.template is not None else s.template,
        parameters=op.parameters if op.parameters is not None else s.parameters,
        old_template=s.template,
        old_parameters=s.parameters,
        resources=s.resources,
        lock=op.lock or s.lock,
        group_sizes=op.group_sizes,
        timeout_s=s.timeout_mins * 60 if s.timeout_mins else None,
        hooks=s.hooks,
        event_sinks=s.event_sinks,
    )


def rollback_input(
    s: StackState, op: StackOperation, previous: tuple[dict[str, Any], dict[str, Any]]
) -> StackOpInput:
    """Back to the template before the operation (an empty one after a failed create)."""
    return StackOpInput(
        spec=s.spec,
        action_id=op.action_id,
        action=StackAction.ROLLBACK,
        template=previous[0],
        parameters=previous[1],
        old_template=op.template or {},
        old_parameters=op.parameters or {},
        resources=s.resources,
    )


def nested_outcome(s: StackState, op: StackOperation, ok: bool) -> NestedOutcome:
    """How this (nested) stack's operation ended, for the parent's waiting operation."""
    return NestedOutcome(
        stack_id=s.spec.stack_id,
        action_id=op.action_id,
        ok=ok,
        reason=s.status_reason,
        stack_status=s.stack_status,
        outputs=s.outputs,
        output_errors=s.output_errors,
        failed=sorted(r.name for r in s.resources.values() if r.failed),
        size=len(s.resources),
        refs={r.name: r.physical_id for r in s.resources.values()},
        members={r.name: member_view(r.attributes) for r in s.resources.values()},
    )
