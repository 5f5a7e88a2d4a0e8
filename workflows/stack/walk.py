"""The bookkeeping under a stack operation: resource transitions, events, the graph walk.

`StackWalk` holds the resources as the operation changes them. Every transition is
queued as a ChangeSet (row + event) and written by one flusher, batched while a write is
in flight. `_walk` runs a step on every resource once everything it waits for is done.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.events import Event
    from domain.hot.functions import ResolvedResources
    from domain.projection import ChangeSet, ResourceKey, ResourceSnapshot, split_by_size
    from domain.stack.hooks import nested_breakpoints
    from domain.stack.requests import ResourceSignalRequest
    from domain.stack.state import ResourceState, StackAction, StackSpec, Status
    from workflows.entity import record
    from workflows.stack.event_sinks import post_events
    from workflows.stack.messages import NestedOutcome
    from workflows.stack.op_messages import StackOpInput
    from workflows.stack.records import new_id, resource_event, resource_snapshot
    from workflows.stack.resources.base import Applied

#: Resources worked on at once (keeps pending activities far below Temporal's 2,000).
CONCURRENCY = 100
#: JSON bytes of queued changes written by one `record_changes`: a 1,000-resource stack
#: once queued 1.7 MB into one activity input, near Temporal's 2 MB payload limit.
BATCH_BYTES = 256 * 1024


class StackWalk:
    """State and bookkeeping of one stack operation (the workflow adds the operations)."""

    def __init__(self) -> None:
        self.inp: StackOpInput | None = None
        self.resources: dict[str, ResourceState] = {}
        self.error = ""
        self.outbox: list[ChangeSet] = []
        self.closing = False
        self.cleanup: list[ResourceState] = []
        self.limit = asyncio.Semaphore(CONCURRENCY)
        self.required_by: dict[str, list[str]] = {}
        #: Resources created, replaced or updated by this run (their dependents re-resolve).
        self.changed: set[str] = set()
        #: Nested stacks a check found failed members in: updated in place, not replaced.
        self.force_update: set[str] = set()
        self.nested: dict[str, NestedOutcome] = {}
        #: Each resource's `update_policy` in the template being applied (group rolls).
        self.update_policies: dict[str, dict[str, Any]] = {}
        #: Steps running now, by resource name (cancel stops the pure waits among them).
        self.waiting: dict[str, asyncio.Task[bool]] = {}
        #: Steps ended in the current graph walk (for the current details).
        self.finished = 0
        #: Steps in the current graph walk (for the current details).
        self.total = 0
        #: What a long step is doing now (a group's batch or pause), by resource name.
        self.notes: dict[str, str] = {}
        #: Signals to software deployments not yet taken by their step, by resource name.
        self.deployment_signals: dict[str, list[ResourceSignalRequest]] = {}

    # ---- what nested-stack requests need (workflows.stack.nested.NestedContext) ----

    async def wait_nested(self, action_id: str) -> NestedOutcome:
        """The answer to the nested-stack request with this action id."""
        await workflow.wait_condition(lambda: action_id in self.nested)
        return self.nested.pop(action_id)

    def parent(self) -> StackSpec:
        """The stack this operation works on."""
        return self._spec()

    def group_size(self, name: str) -> int | None:
        """The size a scaling signal asked for this group, if any."""
        return self._inp().group_sizes.get(name)

    def update_policy(self, name: str) -> dict[str, Any]:
        """The `update_policy` of resource `name` in the template being applied."""
        return self.update_policies.get(name, {})

    def stopping(self) -> str:
        """Why the operation is stopping (cancel_update, a failure), or "" if it is not."""
        return self.error

    def progress(self, name: str, note: str) -> None:
        """Show what resource `name`'s step is doing now (a roll's batch) in the UI (also
        from a step's `finally`, which an evicted run closes outside the workflow)."""
        self.notes[name] = note
        self._show_if_running(self.total)

    def breakpoints(self, name: str) -> dict[str, Any]:
        """The breakpoint hooks the nested stack of resource `name` inherits."""
        return nested_breakpoints(self._inp().hooks, name)

    def event_sinks(self) -> list[dict[str, Any]]:
        """The stack's event sinks (its nested stacks post to them too, as in Heat)."""
        return list(self._inp().event_sinks)

    def timeout_mins(self) -> int | None:
        """The operation's timeout, in minutes (None: none)."""
        seconds = self._inp().timeout_s
        return None if not seconds else max(1, -(-seconds // 60))

    async def next_signal(self, name: str) -> ResourceSignalRequest:
        """The next signal to deployment `name` (waits for one)."""
        await workflow.wait_condition(lambda: bool(self.deployment_signals.get(name)))
        return self.deployment_signals[name].pop(0)

    def resource_by_reference(self, rtype: str, reference: str) -> ResourceState | None:
        """The resource of type `rtype` whose reference (`get_resource`) is `reference`,
        as it is now (a wait condition reads its handle's signals so)."""
        for resource in self.resources.values():
            if resource.type == rtype and reference in (resource.reference, resource.name):
                return resource
        return None

    def _inp(self) -> StackOpInput:
        assert self.inp is not None
        return self.inp

    def _spec(self) -> StackSpec:
        return self._inp().spec

    # ---- the graph walk ----

    async def _walk(
        self,
        order: list[str],
        waits: dict[str, set[str]],
        step: Callable[[str], Coroutine[Any, Any, bool]],
    ) -> None:
        """Run `step` on every name once everything it waits for has succeeded."""
        loop = asyncio.get_running_loop()
        done: dict[str, asyncio.Future[bool]] = {n: loop.create_future() for n in order}
        self.finished = 0

        async def one(name: str) -> None:
            ok = True
            for dep in sorted(waits.get(name, set())):
                if dep in done:
                    ok = await done[dep] and ok
            if not ok or self.error:
                done[name].set_result(False)
                return
            async with self.limit:
                done[name].set_result(await self._run_step(name, step, len(order)))

        await asyncio.gather(*(one(n) for n in order))

    async def _run_step(
        self, name: str, step: Callable[[str], Coroutine[Any, Any, bool]], total: int
    ) -> bool:
        """One step, visible in `waiting` while it runs; a cancelled step fails its resource."""
        task: asyncio.Task[bool] = asyncio.create_task(step(name))
        self.waiting[name] = task
        self._show(total)
        try:
            return await task
        except asyncio.CancelledError:
            current = self.resources[name]
            return self._set_failed(current, current.action, f"{self.error}: step stopped")
        finally:
            self.waiting.pop(name, None)
            self.notes.pop(name, None)
            self.finished += 1
            self._show_if_running(total)

    def _show_if_running(self, total: int) -> None:
        """`_show` from a `finally`: a run evicted from the worker's cache is closed by the
        garbage collector outside any workflow, or while the instance is read-only, and
        has nothing to show then (the details are not a command: replays are unaffected)."""
        if workflow.in_workflow():
            with contextlib.suppress(workflow.ReadOnlyContextError):
                self._show(total)

    def _show(self, total: int) -> None:
        """Current details for the UI (not a command, so replays are unaffected)."""
        inp, busy = self._inp(), sorted(self.waiting)
        self.total = total
        now = ", ".join(f"`{n}`" for n in busy[:8]) + (" …" if len(busy) > 8 else "")
        notes = [f"\n- `{n}`: {self.notes[n]}" for n in busy if n in self.notes]
        workflow.set_current_details(
            f"{inp.action.value} of stack **{inp.spec.name}**: "
            f"{self.finished}/{total} resource step(s) done"
            + (f"; working on {now}" if busy else "")
            + "".join(notes)
        )

    # ---- resource transitions ----

    def _fail(self, reason: str) -> None:
        if not self.error:
            self.error = reason

    def _set_failed(self, resource: ResourceState, action: StackAction, reason: str) -> bool:
        self._set(resource, action, Status.FAILED, reason)
        self._fail(f"Resource {action.value} failed: {resource.name}: {reason}")
        return False

    def _failed_before_start(self, name: str, rtype: str, reason: str) -> bool:
        current = self.resources.get(name)
        now = workflow.now()
        base = current or ResourceState(
            name=name, type=rtype, resource_id=new_id(), created_at=now, updated_at=now
        )
        action = StackAction.UPDATE if current else StackAction.CREATE
        return self._set_failed(base, action, reason)

    def _set(
        self, resource: ResourceState, action: StackAction, status: Status, reason: str
    ) -> None:
        updated = resource.model_copy(
            update={
                "action": action,
                "status": status,
                "status_reason": reason,
                "marked": resource.marked and status != Status.COMPLETE,
                "updated_at": workflow.now(),
            }
        )
        self.resources[resource.name] = updated
        self._emit(updated, reason)

    @staticmethod
    def _applied(resource: ResourceState, applied: Applied) -> ResourceState:
        return resource.model_copy(
            update={
                "physical_id": applied.physical_id,
                "reference": applied.reference,
                "attributes": applied.attributes,
            }
        )

    def _resolved(self) -> ResolvedResources:
        return ResolvedResources(self.resources)

    # ---- rows and events ----

    def _emit(self, resource: ResourceState, reason: str, *, deleted: bool = False) -> None:
        spec = self._spec()
        event = self._event(resource, resource.action, resource.status, reason)
        if deleted:
            key = ResourceKey(stack_id=spec.stack_id, name=resource.name)
            self.outbox.append(ChangeSet(deleted_resources=[key], events=[event]))
            return
        self.outbox.append(ChangeSet(resources=[self.snapshot(resource)], events=[event]))

    def _emit_event(
        self, resource: ResourceState, action: StackAction, status: Status, reason: str
    ) -> None:
        self.outbox.append(ChangeSet(events=[self._event(resource, action, status, reason)]))

    def _emit_replaced(self, old: ResourceState, applied: Applied) -> None:
        reason = f"Replaced by {applied.physical_id}; deleting {old.physical_id} at the end"
        self._emit_event(old, StackAction.UPDATE, Status.IN_PROGRESS, reason)

    def snapshot(self, resource: ResourceState) -> ResourceSnapshot:
        """The database row of a resource."""
        return resource_snapshot(self._spec(), resource, self.required_by.get(resource.name, []))

    def _event(
        self, resource: ResourceState, action: StackAction, status: Status, reason: str
    ) -> Event:
        shown = resource.model_copy(update={"action": action, "status": status})
        return resource_event(self._spec(), shown, reason, self.inp.action_id if self.inp else None)

    async def _flush_forever(self) -> None:
        """Write queued changes; whatever queues during a write goes in the next one."""
        while True:
            await workflow.wait_condition(lambda: bool(self.outbox) or self.closing)
            if not self.outbox:
                return
            batch, self.outbox = self.outbox, []
            runs = split_by_size(batch, BATCH_BYTES)
            # Histories from before the cut wrote any batch in one activity.
            if len(runs) > 1 and not workflow.patched("projection-batch-bytes"):
                runs = [batch]
            for run in runs:
                merged = _merge(run)
                await record(merged, summary=f"record {len(run)} resource change(s)")
                await post_events(self._inp().event_sinks, merged.events)


def _merge(batch: list[ChangeSet]) -> ChangeSet:
    return ChangeSet(
        resources=[r for c in batch for r in c.resources],
        deleted_resources=[k for c in batch for k in c.deleted_resources],
        events=[e for c in batch for e in c.events],
    )
