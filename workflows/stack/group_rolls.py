"""A group's rolling update: members take a new definition batch by batch (Heat's rules).

Each batch is one update of the group's nested stack: at most `max_batch_size` members
take the new definition, failed ones first, keeping their names, while at least
`min_in_service` stay in service. Between batches the pause is a durable timer that
cancel_update cuts short: the roll then stops before the next batch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.groups import GroupSpec, RollingUpdate, rolling_batches
    from domain.stack.requests import StackOperationRequest
    from domain.stack.state import ResourceState
    from workflows.stack.messages import NestedOutcome
    from workflows.stack.nested import NestedContext, NestedFailed, ask_nested


def wants_roll(policy: RollingUpdate | None, before: object, after: object) -> bool:
    """Whether an update rolls: the group has a policy and its member definition changed.

    Templates without a rolling policy never reach `workflow.patched`, so their
    histories keep today's commands.
    """
    return policy is not None and before != after and workflow.patched("group-rolling-update")


def wants_batch_create(policy: RollingUpdate | None, size: int) -> bool:
    """Whether a create goes in batches: ResourceGroup's `batch_create` and members to make.

    Templates without the policy never reach `workflow.patched`.
    """
    return policy is not None and size > 0 and workflow.patched("group-batch-create")


async def roll_group(
    ctx: NestedContext, current: ResourceState, spec: GroupSpec, policy: RollingUpdate
) -> NestedOutcome:
    """Move the group's nested stack to `spec` in batches; raises NestedFailed."""
    stack_id = current.physical_id or ""
    size_now = int(current.attributes.get("current_size") or 0)
    batches = rolling_batches(spec.size, size_now, policy.max_batch_size, policy.min_in_service)
    roll = _Batches(current.name, "rolling update", len(batches), policy.pause_time)
    outcome = await roll.run(ctx, stack_id, spec, list(enumerate(batches, start=1)))
    if outcome is None:
        outcome = await ask_nested(
            ctx, stack_id, "update", StackOperationRequest(existing=True, group=spec)
        )
    return outcome


async def create_in_batches(
    ctx: NestedContext,
    name: str,
    spec: GroupSpec,
    policy: RollingUpdate,
    start: Callable[[GroupSpec], Awaitable[NestedOutcome]],
) -> NestedOutcome:
    """Create the group's members `max_batch_size` at a time (Heat's `batch_create`).

    The first batch creates the nested stack (`start`); each later one, after the
    pause, grows it. Raises NestedFailed.
    """
    batches = rolling_batches(spec.size, 0, policy.max_batch_size, 0)
    create = _Batches(name, "batch create", len(batches), policy.pause_time)
    first = batches[0][0]
    create.show(ctx, 1, first, first, "new nested stack")
    outcome = await start(spec.model_copy(update={"size": first}))
    if not outcome.ok:
        raise NestedFailed(outcome)
    rest = list(enumerate(batches, start=1))[1:]
    return await create.run(ctx, outcome.stack_id, spec, rest) or outcome


@dataclass(frozen=True)
class _Batches:
    """One group's batches: `total` nested updates, `pause` seconds apart."""

    name: str
    kind: str
    total: int
    pause: float

    async def run(
        self,
        ctx: NestedContext,
        stack_id: str,
        spec: GroupSpec,
        batches: list[tuple[int, tuple[int, int]]],
    ) -> NestedOutcome | None:
        """Each numbered batch (group size, members changed) in turn, pausing before."""
        outcome: NestedOutcome | None = None
        for number, (size, updates) in batches:
            if number > 1:
                await _pause(
                    ctx, self.name, stack_id, self.pause, (self.kind, number - 1, self.total)
                )
            self.show(ctx, number, size, updates, f"nested stack `{stack_id}`")
            batch = spec.model_copy(update={"size": size, "max_updates": updates})
            request = StackOperationRequest(existing=True, group=batch)
            outcome = await ask_nested(ctx, stack_id, "update", request)
            if not outcome.ok:
                raise NestedFailed(outcome)
        return outcome

    def show(self, ctx: NestedContext, number: int, size: int, updates: int, where: str) -> None:
        """The batch in the UI and the worker log."""
        ctx.progress(
            self.name,
            f"{self.kind} batch {number}/{self.total}: {updates} member(s) taking the "
            f"new definition, {size} in the group (members in {where})",
        )
        workflow.logger.info(
            "group %s: %s batch %d/%d, %d member(s), %d updated",
            self.name, self.kind, number, self.total, size, updates,
        )  # fmt: skip


async def _pause(
    ctx: NestedContext, name: str, stack_id: str, seconds: float, of: tuple[str, int, int]
) -> None:
    """The pause after batch `done` of `total`: a durable timer, ended early by cancel_update."""
    kind, done, total = of
    if seconds > 0:
        ctx.progress(
            name,
            f"{kind} paused {seconds:g} s after batch {done}/{total} "
            "(cancel_update stops it here and rolls it back)",
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
                reason=f"{kind} stopped after batch {done}: {reason}",
            )
        )
