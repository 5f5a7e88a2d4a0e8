"""StackOperationWorkflow: one stack operation (`stack-op:{stack_id}:{action_id}`).

It walks the template's dependency graph: a resource starts as soon as everything it
requires is done, so independent resources run in parallel; deletion walks the graph
backwards. Every resource transition is written to the database (batched while a
write is in flight) and becomes an event. After the first failure no new resource
starts; those already running finish. Old physical resources of replaced resources,
and resources gone from the template, are deleted at the end, dependents first.

What each resource type does is its handler (`workflows/stack/resources/registry.py`); the
bookkeeping and the graph walk are in `workflows/stack/walk.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import partial
from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.errors import InvalidRequest
    from domain.hot.parts import ResourceDef
    from domain.hot.template import (
        Template,
        conditioned,
        load_template,
        resolve,
        resolve_parameters,
        resolve_properties,
        static_properties,
        static_value,
    )
    from domain.projection import ChangeSet
    from domain.stack.hooks import hooks_of
    from domain.stack.plan import ChangeKind, CurrentResource, UpdatePlan, plan_update
    from domain.stack.requests import ResourceSignalRequest, UnsetHookRequest
    from domain.stack.resource_types import resource_type
    from domain.stack.state import ResourceState, StackAction, Status, pseudo_parameters
    from domain.stack.types.wait_condition import HANDLE, record_signal
    from workflows.search_attributes import WARDEN_STATUS
    from workflows.stack.messages import NESTED_FINISHED, NestedOutcome
    from workflows.stack.op_messages import (
        EMPTY_TEMPLATE,
        RESOURCE_SIGNAL,
        UNSET_HOOK,
        StackOpInput,
        StackOpResult,
    )
    from workflows.stack.records import new_id
    from workflows.stack.resources.base import ResourceFailed
    from workflows.stack.resources.registry import act_on_resource, handler_for
    from workflows.stack.walk import StackWalk

__all__ = ["EMPTY_TEMPLATE", "StackOpInput", "StackOpResult", "StackOperationWorkflow"]


@workflow.defn(name="StackOperationWorkflow")
class StackOperationWorkflow(StackWalk):
    """Carries out one stack operation along the dependency graph."""

    @workflow.signal(name=NESTED_FINISHED)
    def nested_finished(self, outcome: NestedOutcome) -> None:
        """A nested stack's answer to one of this operation's requests."""
        self.nested[outcome.action_id] = outcome

    @workflow.signal(name=UNSET_HOOK)
    def unset_hook(self, req: UnsetHookRequest) -> None:
        """`{"unset_hook": hook}`: a resource paused at that hook goes on."""
        self._paused.discard((req.resource_name, req.hook))

    @workflow.signal(name=RESOURCE_SIGNAL)
    def resource_signal(self, req: ResourceSignalRequest) -> None:
        """A wait condition handle's signal: kept in its metadata, where the wait
        conditions counting it look (a malformed or misdirected one is logged, not kept)."""
        if req.deployment:
            self.deployment_signals.setdefault(req.resource_name, []).append(req)
            return
        current = self.resources.get(req.resource_name)
        if current is None or current.type != HANDLE:
            workflow.logger.warning("signal to %s ignored: not a handle", req.resource_name)
            return
        try:
            changed, reason = record_signal(current, req.details, workflow.now())
        except InvalidRequest as err:
            workflow.logger.warning("signal to %s ignored: %s", req.resource_name, err.message)
            return
        self.resources[changed.name] = changed
        self.outbox.append(
            ChangeSet(
                resources=[self.snapshot(changed)],
                events=[self._event(changed, changed.action, changed.status, reason)],
            )
        )

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
            if handler_for(self.resources[name].type).pure:
                task.cancel()

    def __init__(self) -> None:
        super().__init__()
        #: Templates this run loaded, with the raw documents they came from.
        self._loaded: list[tuple[dict[str, Any], Template]] = []
        #: Resources whose definition in the stack's current template says
        #: `deletion_policy: Retain`: their physical side outlives their deletion.
        self._retained: frozenset[str] = frozenset()
        #: (resource, hook) where a step waits for `unset_hook` (Heat's breakpoints).
        self._paused: set[tuple[str, str]] = set()

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
        outputs, errors = self._outputs(inp) if inp.action != StackAction.DELETE else ({}, {})
        self.closing = True
        await flusher
        outcome = "FAILED" if self.error else "COMPLETE"
        workflow.upsert_search_attributes([WARDEN_STATUS.value_set(outcome)])
        return StackOpResult(
            resources=self.resources, outputs=outputs, output_errors=errors, error=self.error
        )

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
            self._retained = _retained(self._template(inp.old_template))
            await self._converge(inp)
        elif inp.action == StackAction.DELETE:
            old = self._template(inp.old_template)
            self._retained = _retained(old)
            await self._delete_all(old)
        else:
            await self._act_on_all(inp)

    # ---- create / update / rollback ----

    def _template(self, raw: dict[str, Any] | None) -> Template:
        """`raw` loaded once per run: a template of 1,000 resources takes a tenth of a
        second to load, and an update of an unchanged stack has the same one twice."""
        raw = raw or EMPTY_TEMPLATE
        for seen, loaded in self._loaded:
            if seen is raw or seen == raw:
                return loaded
        loaded = load_template(raw)
        self._loaded.append((raw, loaded))
        return loaded

    async def _converge(self, inp: StackOpInput) -> None:
        new = self._template(inp.template)
        params = resolve_parameters(new, inp.parameters, pseudo=pseudo_parameters(inp.spec))
        new = conditioned(new, params)
        old = self._template(inp.old_template)
        old_params = (
            resolve_parameters(old, inp.old_parameters, pseudo=pseudo_parameters(inp.spec))
            if inp.old_template
            else {}
        )
        old = conditioned(old, old_params)
        plan = plan_update(old, old_params, self._current(), new, params, workflow.patched)
        self.update_policies = {n: dict(r.update_policy) for n, r in new.resources.items()}
        self.required_by = new.required_by(workflow.patched)
        deps = new.dependencies(workflow.patched)

        async def step(name: str) -> bool:
            return await self._converge_one(new, params, plan, name, deps[name])

        await self._walk(
            new.creation_order(workflow.patched), {n: set(deps[n]) for n in deps}, step
        )
        gone = plan.of(ChangeKind.DELETE)
        if not self.error:
            await self._delete_named(old, gone)
        await self._clean_up_replaced()

    def _current(self) -> dict[str, CurrentResource]:
        """Resources as the planner sees them.

        A nested stack that a stack check found failed members in is shown as healthy
        and updated in place, so only its failed members are replaced; one marked
        unhealthy by a user is replaced whole (Heat's mark-unhealthy rules). So is one
        whose own update failed or was cancelled (a group's roll stopped midway): its
        nested stack is updated back, member by member, not rebuilt (Heat's
        `StackResource._needs_update`).
        """
        current = {}
        for r in self.resources.values():
            status = r.status.value
            nested = handler_for(r.type).nested
            if r.name in self._inp().group_sizes:
                self.force_update.add(r.name)
            if nested and r.physical_id and not (r.failed and r.marked):
                # Nested stacks are always visited: their own update replaces failed
                # members (a group keeps their names) and is a no-op otherwise.
                self.force_update.add(r.name)
            if nested and r.resource_status == "CHECK_FAILED" and not r.marked:
                self.force_update.add(r.name)
                status = Status.COMPLETE.value
            if _failed_nested_update(r) and workflow.patched("nested-update-failed-in-place"):
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

    def _forced_reason(self, name: str) -> str:
        size = self.group_size(name)
        return (
            f"scaling to {size} member(s)"
            if size is not None
            else "nested stack has failed members"
        )

    async def _converge_one(
        self,
        tpl: Template,
        params: dict[str, Any],
        plan: UpdatePlan,
        name: str,
        requires: frozenset[str],
    ) -> bool:
        definition = tpl.resources[name]
        current = self.resources.get(name)
        if definition.external_id is not None or (current and current.external_id):
            return await self._external(definition, current, params)
        hooks = hooks_of(self._inp().hooks, name)
        step = partial(self._converge_step, tpl, params, plan, name, requires)
        return await (self._between_hooks(definition, hooks, step) if hooks else step())

    async def _between_hooks(
        self, definition: ResourceDef, hooks: set[str], step: Callable[[], Awaitable[bool]]
    ) -> bool:
        """`step` between the resource's breakpoint hooks (Heat pauses at an update's
        pre-update hook even when the resource does not change)."""
        name = definition.name
        current = self.resources.get(name)
        creating = current is None or current.physical_id is None
        updating = not creating and self._inp().action == StackAction.UPDATE
        if creating and "pre-create" in hooks:
            waiting = current or self._fresh(name, definition.type, None, {}, {})
            self.resources[name] = waiting
            self._emit(waiting, "state changed")
            go_on = await self._pause(waiting, StackAction.CREATE, "pre-create")
            if current is None:
                del self.resources[name]
                if not go_on:  # never made: no row of it stays behind
                    self._emit(waiting, "Failure occurred while waiting.", deleted=True)
            if not go_on:
                return False
        if (
            updating
            and current is not None
            and "pre-update" in hooks
            and not await self._pause(current, StackAction.UPDATE, "pre-update")
        ):
            return False
        if not await step():
            return False
        after = self.resources.get(name)
        post = "post-create" if creating else "post-update" if updating else None
        if post in hooks and after is not None:
            return await self._pause(after, after.action, post)
        return True

    async def _pause(self, resource: ResourceState, action: StackAction, hook: str) -> bool:
        """Wait at `hook` until `unset_hook` clears it (False: the operation stopped)."""
        key = (resource.name, hook)
        self._paused.add(key)
        self._emit_event(
            resource,
            resource.action,
            resource.status,
            f"{action.value} paused until Hook {hook} is cleared",
        )
        self.progress(resource.name, f"paused until Hook {hook} is cleared")
        await workflow.wait_condition(lambda: key not in self._paused or bool(self.stopping()))
        self.progress(resource.name, "")
        shown = self.resources.get(resource.name, resource)
        if key in self._paused:
            self._paused.discard(key)
            self._emit_event(shown, shown.action, shown.status, "Failure occurred while waiting.")
            return False
        self._emit_event(shown, shown.action, shown.status, f"Hook {hook} is cleared")
        return True

    async def _converge_step(
        self,
        tpl: Template,
        params: dict[str, Any],
        plan: UpdatePlan,
        name: str,
        requires: frozenset[str],
    ) -> bool:
        """Create, update, replace or keep one resource, as the plan and its inputs say."""
        change = plan.changes[name]
        definition = tpl.resources[name]
        current = self.resources.get(name)
        kind, reason = change.kind, change.reason
        forced = name in self.force_update and kind == ChangeKind.KEEP
        if forced:
            kind, reason = ChangeKind.UPDATE, self._forced_reason(name)
        if kind == ChangeKind.KEEP:
            touched = sorted(requires & self.changed)
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
            rtype = resource_type(definition.type)
            if not rtype.updatable_in_place(current.resolved, props, workflow.patched):
                kind = ChangeKind.REPLACE
            elif rtype.replaced_on_inputs:
                try:
                    why = await handler_for(current.type).replaced_by(self, current, props)
                except ResourceFailed as err:
                    return self._set_failed(current, StackAction.UPDATE, err.reason)
                if why:
                    kind, reason = ChangeKind.REPLACE, why
        self.changed.add(name)
        if kind == ChangeKind.UPDATE and current is not None:
            return await self._update_in_place(current, props, applied_props, reason)
        return await self._create(name, definition.type, props, applied_props, reason)

    async def _external(
        self, definition: ResourceDef, current: ResourceState | None, params: dict[str, Any]
    ) -> bool:
        """A resource the template names by `external_id` (Heat's rules): adopted once
        (after a check that it exists), then never updated; adding, changing or removing
        the `external_id` of a resource that exists fails the update."""
        external = definition.external_id
        if isinstance(external, dict):  # a get_param of the id
            external = str(static_value(external, params))
        if current is not None and current.physical_id:
            if current.external_id != external:
                reason = (
                    f"NotSupported: resources.{definition.name}: Update to property "
                    f"external_id of {definition.name} ({definition.type}) is not supported."
                )
                return self._set_failed(current, StackAction.UPDATE, reason)
            return True
        assert external is not None
        fresh = self._fresh(definition.name, definition.type, current, {}, {})
        self._set(fresh, StackAction.CREATE, Status.IN_PROGRESS, "state changed")
        adopted = fresh.model_copy(
            update={"physical_id": external, "reference": external, "external_id": external}
        )
        try:
            await handler_for(definition.type).check(self, adopted)
        except ResourceFailed:
            reason = (
                f"Invalid external resource: Resource {external} ({definition.type}) "
                "can not be found."
            )
            return self._set_failed(fresh, StackAction.CREATE, reason)
        self._set(adopted, StackAction.CREATE, Status.COMPLETE, f"Adopted {external}")
        return True

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
        fresh = self._fresh(name, rtype, old, props, applied_props)
        progress = (
            f"Replacing {old.physical_id}: {reason}" if replacing and old else "state changed"
        )
        base = old if replacing and old else fresh
        self._set(base, action, Status.IN_PROGRESS, progress)
        try:
            if replacing and old is not None:
                await handler_for(old.type).prepare_for_replace(self, old)
            applied = await handler_for(rtype).create(self, name, props, fresh.resource_id)
        except ResourceFailed as err:
            if err.physical_id:
                self.cleanup.append(fresh.model_copy(update={"physical_id": err.physical_id}))
            return self._set_failed(base, action, err.reason)
        if replacing and old is not None:
            self.cleanup.append(old)
            self._emit_replaced(old, applied)
        done = self._applied(fresh, applied)
        if replacing and workflow.patched(REPLACEMENT_CREATED_PATCH):
            action = StackAction.CREATE  # the new resource, as Heat shows it
        self._set(
            done, action, Status.COMPLETE, f"Replaced: {reason}" if replacing else "state changed"
        )
        return True

    @staticmethod
    def _fresh(
        name: str,
        rtype: str,
        old: ResourceState | None,
        props: dict[str, Any],
        applied_props: dict[str, Any],
    ) -> ResourceState:
        """The state of a new resource (or of the replacement of `old`)."""
        now = workflow.now()
        return ResourceState(
            name=name,
            type=rtype,
            resource_id=new_id(),
            properties=applied_props,
            resolved=props,
            generation=(old.generation + 1) if old else 0,
            created_at=old.created_at if old else now,
            updated_at=now,
        )

    async def _update_in_place(
        self,
        current: ResourceState,
        props: dict[str, Any],
        applied_props: dict[str, Any],
        reason: str,
    ) -> bool:
        self._set(current, StackAction.UPDATE, Status.IN_PROGRESS, reason)
        try:
            applied = await handler_for(current.type).update(self, current, props)
        except ResourceFailed as err:
            return self._set_failed(current, StackAction.UPDATE, err.reason)
        done = self._applied(current, applied).model_copy(
            update={"properties": applied_props, "resolved": props}
        )
        self._set(done, StackAction.UPDATE, Status.COMPLETE, reason or "state changed")
        return True

    # ---- delete ----

    async def _delete_all(self, tpl: Template) -> None:
        names = list(self.resources)
        await self._delete_named(tpl, names)
        await self._clean_up_replaced()

    async def _delete_named(self, tpl: Template, names: list[str]) -> None:
        """Delete resources, each after everything that requires it."""
        wanted = set(names)
        required_by = tpl.required_by(workflow.patched)
        waits = {n: {d for d in required_by.get(n, []) if d in wanted} for n in names}
        order = [n for n in reversed(tpl.creation_order(workflow.patched)) if n in wanted]
        order += sorted(wanted - set(order))
        await self._walk(order, waits, self._delete_one)

    async def _delete_physical(self, resource: ResourceState) -> None:
        if resource.external_id is not None:
            return  # adopted, not the stack's to delete (Heat leaves it too)
        if resource.name in self._retained and workflow.patched(RETAIN_PATCH):
            self._emit_event(
                resource,
                StackAction.DELETE,
                Status.IN_PROGRESS,
                f"Retained {resource.physical_id} (deletion_policy: Retain)",
            )
            return
        await handler_for(resource.type).delete_resource(self, resource)

    async def _delete_one(self, name: str) -> bool:
        current = self.resources[name]
        hooks = hooks_of(self._inp().hooks, name)
        pre_delete = "pre-delete" in hooks
        if pre_delete and not await self._pause(current, StackAction.DELETE, "pre-delete"):
            return False
        self._set(current, StackAction.DELETE, Status.IN_PROGRESS, "state changed")
        try:
            await self._delete_physical(current)
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
        if "post-delete" in hooks:
            return await self._pause(gone, StackAction.DELETE, "post-delete")
        return True

    async def _clean_up_replaced(self) -> None:
        for old in reversed(self.cleanup):
            try:
                await self._delete_physical(old)
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
            touches_state = not locking or handler_for(current.type).has_lock_state(current)
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

    # ---- outputs ----

    def _outputs(self, inp: StackOpInput) -> tuple[dict[str, Any], dict[str, str]]:
        """Each output's value, and why each that could not be worked out has none
        (Heat's `output_error`: the stack is fine, the output is not)."""
        try:
            tpl = self._template(inp.template)
            params = resolve_parameters(tpl, inp.parameters, pseudo=pseudo_parameters(inp.spec))
            tpl = conditioned(tpl, params)
        except InvalidRequest:
            return {}, {}
        resolved = self._resolved()
        outputs: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for name, output in tpl.outputs.items():
            try:
                outputs[name] = resolve(output.value, params, resolved)
            except InvalidRequest as err:
                outputs[name] = None
                errors[name] = err.message
        return outputs, errors


#: Histories recorded before a replacement showed as CREATE_COMPLETE showed UPDATE_COMPLETE.
REPLACEMENT_CREATED_PATCH: Final = "replacement-shows-create-complete"
#: Histories recorded before `deletion_policy: Retain` was honoured deleted such resources.
RETAIN_PATCH: Final = "deletion-policy-retain"


def _retained(template: Template) -> frozenset[str]:
    """The resources whose physical side a deletion leaves (Heat's `Retain`); a nested
    stack is deleted all the same (Warden keeps no stack without its parent)."""
    return frozenset(
        name
        for name, res in template.resources.items()
        if res.deletion_policy == "Retain" and not handler_for(res.type).nested
    )


def _failed_nested_update(r: ResourceState) -> bool:
    """A nested stack left UPDATE_FAILED by its own update, not by a user's mark."""
    return (
        handler_for(r.type).nested
        and bool(r.physical_id)
        and r.resource_status == "UPDATE_FAILED"
        and not r.marked
    )
