"""StackOperationWorkflow: one stack operation (`stack-op:{stack_id}:{action_id}`).

It walks the template's dependency graph: a resource starts as soon as everything it
requires is done, so independent resources run in parallel; deletion walks the graph
backwards. Every resource transition is written to the database (batched while a
write is in flight) and becomes an event. After the first failure no new resource
starts; those already running finish. Old physical resources of replaced resources,
and resources gone from the template, are deleted at the end, dependents first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.errors import InvalidRequest
    from domain.events import Event
    from domain.projection import ChangeSet, ResourceKey, ResourceSnapshot
    from domain.resource_types import resource_type
    from domain.stack_plan import ChangeKind, CurrentResource, UpdatePlan, plan_update
    from domain.stacks import (
        ResourceState,
        StackAction,
        StackLock,
        StackSpec,
        Status,
        pseudo_parameters,
    )
    from domain.templates import (
        ResolvedResource,
        Template,
        load_template,
        resolve,
        resolve_parameters,
        resolve_properties,
        static_properties,
    )
    from workflows.entity import record
    from workflows.search_attributes import WARDEN_STATUS
    from workflows.stack_messages import NESTED_FINISHED, NestedOutcome
    from workflows.stack_records import resource_event, resource_snapshot
    from workflows.stack_resources import (
        NESTED_TYPES,
        PURE_TYPES,
        Applied,
        ResourceFailed,
        act_on_resource,
        create_resource,
        delete_physical,
        has_lock_state,
        update_resource,
    )

#: Resources worked on at once (keeps pending activities far below Temporal's 2,000).
CONCURRENCY = 100
EMPTY_TEMPLATE: dict[str, Any] = {"heat_template_version": "2021-04-16"}


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


class StackOpResult(BaseModel):
    """The resources as the operation left them, the outputs, and the first error."""

    resources: dict[str, ResourceState]
    outputs: dict[str, Any] = Field(default_factory=dict)
    error: str = ""


@workflow.defn(name="StackOperationWorkflow")
class StackOperationWorkflow:
    """Carries out one stack operation along the dependency graph."""

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
        #: Steps running now, by resource name (cancel stops the pure waits among them).
        self.waiting: dict[str, asyncio.Task[bool]] = {}
        #: Steps ended in the current graph walk (for the current details).
        self.finished = 0

    @workflow.signal(name=NESTED_FINISHED)
    def nested_finished(self, outcome: NestedOutcome) -> None:
        """A nested stack's answer to one of this operation's requests."""
        self.nested[outcome.action_id] = outcome

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

    def _forced_reason(self, name: str) -> str:
        size = self.group_size(name)
        return (
            f"scaling to {size} member(s)"
            if size is not None
            else "nested stack has failed members"
        )

    def _inp(self) -> StackOpInput:
        assert self.inp is not None
        return self.inp

    @workflow.signal(name="cancel")
    def cancel(self, reason: str) -> None:
        """cancel_update: start nothing new and stop the steps that only wait."""
        self._stop(reason or "Stack UPDATE cancelled")

    def _stop(self, reason: str) -> None:
        """Fail the operation now: nothing new starts; pure waits are cancelled.

        Steps with a cloud side (a server being created) finish, so Warden always
        knows the physical resource they made and nothing is orphaned.
        """
        self._fail(reason)
        for name, task in list(self.waiting.items()):
            if self.resources[name].type in PURE_TYPES:
                task.cancel()

    @workflow.run
    async def run(self, inp: StackOpInput) -> StackOpResult:
        self.inp = inp
        self.resources = dict(inp.resources)
        flusher = asyncio.create_task(self._flush_forever())
        work = asyncio.create_task(self._dispatch(inp))
        if inp.timeout_s:
            timed_out = not await self._wait(work, inp.timeout_s)
            if timed_out:
                self._stop(f"Stack {inp.action.value} timed out after {inp.timeout_s} s")
        await work
        outputs = self._outputs(inp) if inp.action != StackAction.DELETE else {}
        self.closing = True
        await flusher
        outcome = "FAILED" if self.error else "COMPLETE"
        workflow.upsert_search_attributes([WARDEN_STATUS.value_set(outcome)])
        return StackOpResult(resources=self.resources, outputs=outputs, error=self.error)

    async def _wait(self, work: asyncio.Task[None], timeout_s: int) -> bool:
        try:
            await workflow.wait_condition(work.done, timeout=timedelta(seconds=timeout_s))
        except TimeoutError:
            return False
        return True

    async def _dispatch(self, inp: StackOpInput) -> None:
        try:
            await self._dispatch_checked(inp)
        except InvalidRequest as err:
            # e.g. a nested stack's template rejecting the parameters it was given:
            # the operation fails with the reason instead of retrying a workflow task.
            self._fail(err.message)

    async def _dispatch_checked(self, inp: StackOpInput) -> None:
        if inp.action in (StackAction.CREATE, StackAction.UPDATE, StackAction.ROLLBACK):
            await self._converge(inp)
        elif inp.action == StackAction.DELETE:
            old = load_template(inp.old_template or EMPTY_TEMPLATE)
            await self._delete_all(old)
        else:
            await self._act_on_all(inp)

    # ---- create / update / rollback ----

    async def _converge(self, inp: StackOpInput) -> None:
        new = load_template(inp.template or EMPTY_TEMPLATE)
        params = resolve_parameters(new, inp.parameters, pseudo=pseudo_parameters(inp.spec))
        old = load_template(inp.old_template or EMPTY_TEMPLATE)
        old_params = (
            resolve_parameters(old, inp.old_parameters, pseudo=pseudo_parameters(inp.spec))
            if inp.old_template
            else {}
        )
        plan = plan_update(old, old_params, self._current(), new, params)
        self.required_by = new.required_by()
        deps = new.dependencies()

        async def step(name: str) -> bool:
            return await self._converge_one(new, params, plan, name)

        await self._walk(new.creation_order(), {n: set(deps[n]) for n in deps}, step)
        gone = plan.of(ChangeKind.DELETE)
        if not self.error:
            await self._delete_named(old, gone)
        await self._clean_up_replaced()

    def _current(self) -> dict[str, CurrentResource]:
        """Resources as the planner sees them.

        A nested stack that a stack check found failed members in is shown as healthy
        and updated in place, so only its failed members are replaced; one marked
        unhealthy by a user is replaced whole (Heat's mark-unhealthy rules).
        """
        current = {}
        for r in self.resources.values():
            status = r.status.value
            if r.name in self._inp().group_sizes:
                self.force_update.add(r.name)
            if r.type in NESTED_TYPES and r.physical_id and not (r.failed and r.marked):
                # Nested stacks are always visited: their own update replaces failed
                # members (a group keeps their names) and is a no-op otherwise.
                self.force_update.add(r.name)
            if r.type in NESTED_TYPES and r.state == "CHECK_FAILED" and not r.marked:
                self.force_update.add(r.name)
                status = Status.COMPLETE.value
            current[r.name] = CurrentResource(
                name=r.name,
                type=r.type,
                action=r.action.value,
                status=status,
                physical_id=r.physical_id,
                applied=r.properties if r.physical_id else None,
            )
        return current

    async def _converge_one(
        self, tpl: Template, params: dict[str, Any], plan: UpdatePlan, name: str
    ) -> bool:
        change = plan.changes[name]
        definition = tpl.resources[name]
        current = self.resources.get(name)
        kind, reason = change.kind, change.reason
        forced = name in self.force_update and kind == ChangeKind.KEEP
        if forced:
            kind, reason = ChangeKind.UPDATE, self._forced_reason(name)
        if kind == ChangeKind.KEEP:
            touched = sorted(tpl.dependencies()[name] & self.changed)
            if not touched or current is None:
                return True
            kind, reason = ChangeKind.UPDATE, f"depends on changed {', '.join(touched)}"
        try:
            props = resolve_properties(definition, params, self._resolved())
        except InvalidRequest as err:
            return self._failed_before_start(name, definition.type, err.message)
        applied_props = static_properties(definition, params)
        if kind == ChangeKind.UPDATE and current is not None:
            if change.kind == ChangeKind.KEEP and not forced and props == current.resolved:
                return True  # what it reads changed, but not what it was configured with
            if not self._updatable(definition.type, current.resolved, props):
                kind = ChangeKind.REPLACE
        self.changed.add(name)
        if kind == ChangeKind.UPDATE and current is not None:
            return await self._update_in_place(current, props, applied_props, reason)
        return await self._create(name, definition.type, props, applied_props, reason)

    @staticmethod
    def _updatable(rtype: str, before: dict[str, Any], after: dict[str, Any]) -> bool:
        """Whether every resolved change can be applied in place."""
        schema = resource_type(rtype)
        if after.get("update_replace") is True:
            return False
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        return all(schema.updatable(k) for k in changed)

    def _resolved(self) -> dict[str, ResolvedResource]:
        return {
            r.name: ResolvedResource(reference=r.reference, attributes=r.attributes)
            for r in self.resources.values()
        }

    async def _create(
        self,
        name: str,
        rtype: str,
        props: dict[str, Any],
        applied_props: dict[str, Any],
        reason: str,
    ) -> bool:
        """Create a resource, or its replacement (the old one is deleted at the end)."""
        old = self.resources.get(name)
        replacing = old is not None and old.physical_id is not None
        action = StackAction.UPDATE if replacing else StackAction.CREATE
        now = workflow.now()
        fresh = ResourceState(
            name=name,
            type=rtype,
            resource_id=str(workflow.uuid4()),
            properties=applied_props,
            resolved=props,
            generation=(old.generation + 1) if old else 0,
            created_at=old.created_at if old else now,
            updated_at=now,
        )
        progress = (
            f"Replacing {old.physical_id}: {reason}" if replacing and old else "state changed"
        )
        base = old if replacing and old else fresh
        self._set(base, action, Status.IN_PROGRESS, progress)
        try:
            applied = await create_resource(self, name, rtype, props, fresh.resource_id)
        except ResourceFailed as err:
            if err.physical_id:
                self.cleanup.append(fresh.model_copy(update={"physical_id": err.physical_id}))
            return self._set_failed(base, action, err.reason)
        if replacing and old is not None:
            self.cleanup.append(old)
            self._emit_replaced(old, applied)
        done = self._applied(fresh, applied)
        self._set(
            done, action, Status.COMPLETE, f"Replaced: {reason}" if replacing else "state changed"
        )
        return True

    async def _update_in_place(
        self,
        current: ResourceState,
        props: dict[str, Any],
        applied_props: dict[str, Any],
        reason: str,
    ) -> bool:
        self._set(current, StackAction.UPDATE, Status.IN_PROGRESS, reason)
        try:
            applied = await update_resource(self, current, props)
        except ResourceFailed as err:
            return self._set_failed(current, StackAction.UPDATE, err.reason)
        done = self._applied(current, applied).model_copy(
            update={"properties": applied_props, "resolved": props}
        )
        self._set(done, StackAction.UPDATE, Status.COMPLETE, reason or "state changed")
        return True

    def _applied(self, resource: ResourceState, applied: Applied) -> ResourceState:
        return resource.model_copy(
            update={
                "physical_id": applied.physical_id,
                "reference": applied.reference,
                "attributes": applied.attributes,
            }
        )

    def _failed_before_start(self, name: str, rtype: str, reason: str) -> bool:
        current = self.resources.get(name)
        now = workflow.now()
        base = current or ResourceState(
            name=name, type=rtype, resource_id=str(workflow.uuid4()), created_at=now, updated_at=now
        )
        action = StackAction.UPDATE if current else StackAction.CREATE
        return self._set_failed(base, action, reason)

    # ---- delete ----

    async def _delete_all(self, tpl: Template) -> None:
        names = list(self.resources)
        await self._delete_named(tpl, names)
        await self._clean_up_replaced()

    async def _delete_named(self, tpl: Template, names: list[str]) -> None:
        """Delete resources, each after everything that requires it."""
        wanted = set(names)
        required_by = tpl.required_by()
        waits = {n: {d for d in required_by.get(n, []) if d in wanted} for n in names}
        order = [n for n in reversed(tpl.creation_order()) if n in wanted]
        order += sorted(wanted - set(order))
        await self._walk(order, waits, self._delete_one)

    async def _delete_one(self, name: str) -> bool:
        current = self.resources[name]
        self._set(current, StackAction.DELETE, Status.IN_PROGRESS, "state changed")
        try:
            await delete_physical(self, current.type, current.physical_id, current.resolved)
        except ResourceFailed as err:
            return self._set_failed(current, StackAction.DELETE, err.reason)
        gone = current.model_copy(
            update={
                "action": StackAction.DELETE,
                "status": Status.COMPLETE,
                "updated_at": workflow.now(),
            }
        )
        del self.resources[name]
        self._emit(gone, "state changed", deleted=True)
        return True

    async def _clean_up_replaced(self) -> None:
        for old in reversed(self.cleanup):
            try:
                await delete_physical(self, old.type, old.physical_id, old.resolved)
            except ResourceFailed as err:
                self._fail(f"Deleting replaced {old.name} ({old.physical_id}) failed: {err.reason}")
                continue
            self._emit_event(
                old, StackAction.DELETE, Status.COMPLETE, f"Deleted replaced {old.physical_id}"
            )

    # ---- check / suspend / resume / lock / unlock ----

    async def _act_on_all(self, inp: StackOpInput) -> None:
        action = inp.action
        locking = action in (StackAction.LOCK, StackAction.UNLOCK)

        async def step(name: str) -> bool:
            current = self.resources[name]
            touches_state = not locking or has_lock_state(current)
            if touches_state:
                self._set(current, action, Status.IN_PROGRESS, "state changed")
            try:
                await act_on_resource(self, current, action, inp.lock)
            except ResourceFailed as err:
                return self._set_failed(current, action, err.reason) if touches_state else False
            if touches_state:
                locked = action == StackAction.LOCK
                done = current.model_copy(update={"locked": locked})
                self._set(done, action, Status.COMPLETE, "state changed")
            return True

        await self._walk(sorted(self.resources), {n: set() for n in self.resources}, step)

    # ---- the graph walk and the bookkeeping ----

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
                task: asyncio.Task[bool] = asyncio.create_task(step(name))
                self.waiting[name] = task
                self._show(len(order))
                try:
                    done[name].set_result(await task)
                except asyncio.CancelledError:
                    current = self.resources[name]
                    done[name].set_result(
                        self._set_failed(current, current.action, f"{self.error}: step stopped")
                    )
                finally:
                    self.waiting.pop(name, None)
                    self.finished += 1
                    self._show(len(order))

        await asyncio.gather(*(one(n) for n in order))

    def _show(self, total: int) -> None:
        """Current details for the UI (not a command, so replays are unaffected)."""
        inp, busy = self._inp(), sorted(self.waiting)
        now = ", ".join(f"`{n}`" for n in busy[:8]) + (" …" if len(busy) > 8 else "")
        workflow.set_current_details(
            f"{inp.action.value} of stack **{inp.spec.name}**: "
            f"{self.finished}/{total} resource step(s) done"
            + (f"; working on {now}" if busy else "")
        )

    def _fail(self, reason: str) -> None:
        if not self.error:
            self.error = reason

    def _set_failed(self, resource: ResourceState, action: StackAction, reason: str) -> bool:
        self._set(resource, action, Status.FAILED, reason)
        self._fail(f"Resource {action.value} failed: {resource.name}: {reason}")
        return False

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
            await record(_merge(batch), summary=f"record {len(batch)} resource change(s)")

    def _outputs(self, inp: StackOpInput) -> dict[str, Any]:
        try:
            tpl = load_template(inp.template or EMPTY_TEMPLATE)
            params = resolve_parameters(tpl, inp.parameters, pseudo=pseudo_parameters(inp.spec))
        except InvalidRequest:
            return {}
        resolved = self._resolved()
        outputs: dict[str, Any] = {}
        for name, output in tpl.outputs.items():
            try:
                outputs[name] = resolve(output.value, params, resolved)
            except InvalidRequest as err:
                outputs[name] = None
                workflow.logger.info("output %s of stack %s: %s", name, self._spec().stack_id, err)
        return outputs

    def _spec(self) -> StackSpec:
        return self._inp().spec


def _merge(batch: list[ChangeSet]) -> ChangeSet:
    return ChangeSet(
        resources=[r for c in batch for r in c.resources],
        deleted_resources=[k for c in batch for k in c.deleted_resources],
        events=[e for c in batch for e in c.events],
    )
