"""A group's rolling update: members take a new definition batch by batch (Heat's rules).

Each batch is one update of the group's nested stack: at most `max_batch_size` members
take the new definition, failed ones first, keeping their names, while at least
`min_in_service` stay in service. Between batches the pause is a durable timer that
cancel_update cuts short: the roll then stops before the next batch.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.groups import GroupSpec, RollingUpdate, rolling_batches
    from domain.stack_requests import StackOperationRequest
    from domain.stacks import ResourceState
    from workflows.nested_stacks import NestedContext, NestedFailed, ask_nested
    from workflows.stack_messages import NestedOutcome


def wants_roll(policy: RollingUpdate | None, before: object, after: object) -> bool:
    """Whether an update rolls: the group has a policy and its member definition changed.

    Templates without a rolling policy never reach `workflow.patched`, so their
    histories keep today's commands.
    """
    return policy is not None and before != after and workflow.patched("group-rolling-update")


async def roll_group(
    ctx: NestedContext, current: ResourceState, spec: GroupSpec, policy: RollingUpdate
) -> NestedOutcome:
    """Move the group's nested stack to `spec` in batches; raises NestedFailed."""
    stack_id = current.physical_id or ""
    size_now = int(current.attributes.get("current_size") or 0)
    batches = rolling_batches(spec.size, size_now, policy.max_batch_size, policy.min_in_service)
    outcome: NestedOutcome | None = None
    for number, (size, updates) in enumerate(batches, start=1):
        if number > 1:
            await _pause(ctx, current.name, stack_id, policy.pause_time, (number - 1, len(batches)))
        ctx.progress(
            current.name,
            f"rolling update batch {number}/{len(batches)}: {updates} member(s) taking the "
            f"new definition, {size} in the group (members in nested stack `{stack_id}`)",
        )
        workflow.logger.info(
            "group %s: batch %d/%d, %d member(s), %d updated",
            current.name, number, len(batches), size, updates,
        )  # fmt: skip
        batch = spec.model_copy(update={"size": size, "max_updates": updates})
        request = StackOperationRequest(existing=True, group=batch)
        outcome = await ask_nested(ctx, stack_id, "update", request)
        if not outcome.ok:
            raise NestedFailed(outcome)
    if outcome is None:
        outcome = await ask_nested(
            ctx, stack_id, "update", StackOperationRequest(existing=True, group=spec)
        )
    return outcome


async def _pause(
    ctx: NestedContext, name: str, stack_id: str, seconds: float, of: tuple[int, int]
) -> None:
    """The pause after batch `done` of `total`: a durable timer, ended early by cancel_update."""
    done, total = of
    if seconds > 0:
        ctx.progress(
            name,
            f"rolling update paused {seconds:g} s after batch {done}/{total} "
            "(cancel_update stops the roll here and rolls it back)",
        )
        with contextlib.suppress(TimeoutError):  # the pause ran its course
            await workflow.wait_condition(
                lambda: bool(ctx.stopping()),
                timeout=timedelta(seconds=seconds),
                timeout_summary=f"{name}: pause after batch {done}",
            )
    if reason := ctx.stopping():
        raise NestedFailed(
            NestedOutcome(
                stack_id=stack_id,
                action_id="",
                ok=False,
                reason=f"rolling update stopped after batch {done}: {reason}",
            )
        )
