"""StackWorkflow: the entity workflow of one stack (`stack:{stack_id}`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionStatus
    from domain.errors import WardenError
    from domain.projection import ChangeSet
    from domain.stacks import (
        LockStackRequest,
        MarkResourceRequest,
        ResourceSignalRequest,
        StackAccepted,
        StackAction,
        StackLock,
        StackOperation,
        StackOperationRequest,
        StackState,
        Status,
        ensure_can_cancel_update,
        ensure_can_lock,
        ensure_can_mark,
        ensure_can_start,
        ensure_can_unlock,
        mark_resource,
        plan_scaling_signal,
        target_of,
    )
    from domain.templates import load_template
    from workflows.entity import (
        RecentActions,
        continue_as_new_due,
        record,
        record_now,
        reject,
        run_child,
    )
    from workflows.nested_stacks import member_name
    from workflows.search_attributes import warden_attributes
    from workflows.stack_messages import NESTED_FINISHED, NestedOutcome, StackInput
    from workflows.stack_ops import (
        EMPTY_TEMPLATE,
        StackOperationWorkflow,
        StackOpInput,
        StackOpResult,
    )
    from workflows.stack_records import (
        ACTION_NAMES,
        resource_event,
        resource_snapshot,
        show,
        stack_action_change,
        stack_event,
        stack_snapshot,
    )

_SUMMARY = {
    StackAction.CREATE: "create stack {name}",
    StackAction.UPDATE: "update stack {name}",
    StackAction.DELETE: "delete stack {name}",
    StackAction.CHECK: "check stack {name}",
    StackAction.SUSPEND: "suspend stack {name}",
    StackAction.RESUME: "resume stack {name}",
    StackAction.LOCK: "lock stack {name}",
    StackAction.UNLOCK: "unlock stack {name}",
    StackAction.ROLLBACK: "roll back stack {name}",
}


@workflow.defn(name="StackWorkflow")
class StackWorkflow:
    """Owns a stack's state; serialises its operations; is its lock."""

    @workflow.init
    def __init__(self, inp: StackInput) -> None:
        self.state = inp.state
        self.pending = inp.pending
        self.recent = RecentActions(inp.recent_action_ids)
        self.history_limit = inp.history_limit
        self.mutex = asyncio.Lock()
        self.cancelled = ""

    @workflow.run
    async def run(self, inp: StackInput) -> StackState:
        show(self.state)
        while not self.state.deleted:
            await workflow.wait_condition(
                lambda: self.pending is not None or continue_as_new_due(self.history_limit)
            )
            if self.pending is not None:
                op = self.pending
                await self._execute(op)
                if self.pending is op:
                    self.pending = None
                continue
            await workflow.wait_condition(workflow.all_handlers_finished)
            if self.pending is None:
                workflow.continue_as_new(
                    StackInput(
                        state=self.state,
                        recent_action_ids=self.recent.to_list(),
                        history_limit=self.history_limit,
                    )
                )
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.state

    # ---- operations carried out by a `stack-op` child (update + signal twin each) ----

    @workflow.update(name="create")
    async def create(self, req: StackOperationRequest) -> StackAccepted:
        """Create the stack's resources (sent with the workflow's start)."""
        return await self._accept(StackAction.CREATE, req)

    @create.validator
    def validate_create(self, req: StackOperationRequest) -> None:
        self._validate(StackAction.CREATE, req)

    @workflow.update(name="update")
    async def update(self, req: StackOperationRequest) -> StackAccepted:
        """Move the stack to a new template and/or parameters (replaces failed resources)."""
        return await self._accept(StackAction.UPDATE, req)

    @update.validator
    def validate_update(self, req: StackOperationRequest) -> None:
        self._validate(StackAction.UPDATE, req)

    @workflow.signal(name="update")
    async def update_signal(self, req: StackOperationRequest) -> None:
        """Signal twin of `update` for apps that talk to Temporal directly."""
        await self._guard_signal("update", self._accept(StackAction.UPDATE, req), req)

    @workflow.update(name="delete")
    async def delete(self, req: StackOperationRequest) -> StackAccepted:
        """Delete every resource, dependents first, then the stack."""
        return await self._accept(StackAction.DELETE, req)

    @delete.validator
    def validate_delete(self, req: StackOperationRequest) -> None:
        self._validate(StackAction.DELETE, req)

    @workflow.signal(name="delete")
    async def delete_signal(self, req: StackOperationRequest) -> None:
        """Signal twin of `delete`."""
        await self._guard_signal("delete", self._accept(StackAction.DELETE, req), req)

    @workflow.update(name="check")
    async def check(self, req: StackOperationRequest) -> StackAccepted:
        """Compare every resource with the cloud (servers must be ACTIVE)."""
        return await self._accept(StackAction.CHECK, req)

    @check.validator
    def validate_check(self, req: StackOperationRequest) -> None:
        self._validate(StackAction.CHECK, req)

    @workflow.signal(name="check")
    async def check_signal(self, req: StackOperationRequest) -> None:
        """Signal twin of `check`."""
        await self._guard_signal("check", self._accept(StackAction.CHECK, req), req)

    @workflow.update(name="suspend")
    async def suspend(self, req: StackOperationRequest) -> StackAccepted:
        """Pause every server of the stack."""
        return await self._accept(StackAction.SUSPEND, req)

    @suspend.validator
    def validate_suspend(self, req: StackOperationRequest) -> None:
        self._validate(StackAction.SUSPEND, req)

    @workflow.signal(name="suspend")
    async def suspend_signal(self, req: StackOperationRequest) -> None:
        """Signal twin of `suspend`."""
        await self._guard_signal("suspend", self._accept(StackAction.SUSPEND, req), req)

    @workflow.update(name="resume")
    async def resume(self, req: StackOperationRequest) -> StackAccepted:
        """Unpause every server of a suspended stack."""
        return await self._accept(StackAction.RESUME, req)

    @resume.validator
    def validate_resume(self, req: StackOperationRequest) -> None:
        self._validate(StackAction.RESUME, req)

    @workflow.signal(name="resume")
    async def resume_signal(self, req: StackOperationRequest) -> None:
        """Signal twin of `resume`."""
        await self._guard_signal("resume", self._accept(StackAction.RESUME, req), req)

    @workflow.update(name="lock")
    async def lock(self, req: LockStackRequest) -> StackAccepted:
        """Maintenance mode: everything but unlock (and lock, to change level) gets 409."""
        return await self._accept(
            StackAction.LOCK, StackOperationRequest(action_id=req.action_id), req
        )

    @lock.validator
    def validate_lock(self, req: LockStackRequest) -> None:
        if req.action_id not in self.recent:
            self._checked(lambda: ensure_can_lock(self.state))

    @workflow.signal(name="lock")
    async def lock_signal(self, req: LockStackRequest) -> None:
        """Signal twin of `lock`."""
        op = StackOperationRequest(action_id=req.action_id, notify=req.notify)
        await self._guard_signal("lock", self._accept(StackAction.LOCK, op, req), req)

    @workflow.update(name="unlock")
    async def unlock(self, req: StackOperationRequest) -> StackAccepted:
        """Leave maintenance mode (also from LOCK_FAILED and UNLOCK_FAILED)."""
        return await self._accept(StackAction.UNLOCK, req)

    @unlock.validator
    def validate_unlock(self, req: StackOperationRequest) -> None:
        if req.action_id not in self.recent:
            self._checked(lambda: ensure_can_unlock(self.state, by_parent=req.notify is not None))

    @workflow.signal(name="unlock")
    async def unlock_signal(self, req: StackOperationRequest) -> None:
        """Signal twin of `unlock`."""
        await self._guard_signal("unlock", self._accept(StackAction.UNLOCK, req), req)

    @workflow.update(name="cancel_update")
    async def cancel_update(self, req: StackOperationRequest) -> StackAccepted:
        """Stop a running update (nothing new starts) and roll it back."""
        async with self.mutex:
            self._checked(lambda: ensure_can_cancel_update(self.state))
            assert self.state.busy is not None
            action_id = self.state.busy.action_id
            self.cancelled = "Stack UPDATE cancelled"
            handle = workflow.get_external_workflow_handle(
                f"stack-op:{self.state.spec.stack_id}:{action_id}"
            )
            event = stack_event(self.state, "cancel_update requested", action_id)
            await record(ChangeSet(events=[event]), summary="cancel_update requested")
            try:
                await handle.signal("cancel", self.cancelled)
            except FailureError as err:
                workflow.logger.info(
                    "cancel of stack %s not delivered: %s", self.state.spec.stack_id, err
                )
            return StackAccepted(action_id=action_id, stack_status=self.state.state)

    @cancel_update.validator
    def validate_cancel_update(self, req: StackOperationRequest) -> None:
        self._checked(lambda: ensure_can_cancel_update(self.state))

    # ---- scaling signals (`POST …/resources/{policy}/signal`) ----

    @workflow.update(name="signal")
    async def signal(self, req: ResourceSignalRequest) -> StackAccepted:
        """A scaling policy fired: resize its group (refused while busy or locked)."""
        return await self._signal_resource(req)

    @signal.validator
    def validate_signal(self, req: ResourceSignalRequest) -> None:
        if req.action_id not in self.recent:
            self._checked(lambda: plan_scaling_signal(self.state, req, workflow.now()))

    @workflow.signal(name="signal")
    async def signal_signal(self, req: ResourceSignalRequest) -> None:
        """Signal twin of `signal` (an alarm or app scaling the group directly)."""
        await self._guard_signal("signal", self._signal_resource(req))

    async def _signal_resource(self, req: ResourceSignalRequest) -> StackAccepted:
        async with self.mutex:
            action_id = req.action_id or str(workflow.uuid4())
            if action_id in self.recent:
                return StackAccepted(action_id=action_id, stack_status=self.state.state)
            now = workflow.now()
            plan = self._checked(lambda: plan_scaling_signal(self.state, req, now))
            self.recent.add(action_id)
            policy = self.state.resources[plan.policy]
            if plan.ignored:
                event = resource_event(
                    self.state.spec, policy, f"Signal ignored: {plan.ignored}", action_id
                )
                await record(ChangeSet(events=[event]), summary="scaling signal ignored")
                return StackAccepted(action_id=action_id, stack_status=self.state.state)
            stamped = policy.model_copy(
                update={"attributes": {**policy.attributes, "last_adjustment": now.isoformat()}}
            )
            self.state = self.state.model_copy(
                update={"resources": {**self.state.resources, stamped.name: stamped}}
            )
            op = StackOperation(
                action_id=action_id,
                action=StackAction.UPDATE,
                template=self.state.template,
                parameters=self.state.parameters,
                group_sizes={plan.group: plan.size},
            )
            reason = (
                f"Stack UPDATE started: signal to {plan.policy} resizes {plan.group} "
                f"from {plan.current} to {plan.size}"
            )
            return await self._start(op, StackOperationRequest(action_id=action_id), reason)

    # ---- mark unhealthy: inline, no child ----

    @workflow.update(name="mark_unhealthy")
    async def mark_unhealthy(self, req: MarkResourceRequest) -> StackAccepted:
        """Mark a resource CHECK_FAILED (the next update replaces it) or clear the mark."""
        return await self._mark_unhealthy(req)

    @mark_unhealthy.validator
    def validate_mark_unhealthy(self, req: MarkResourceRequest) -> None:
        if req.action_id not in self.recent:
            self._checked(lambda: ensure_can_mark(self.state, req.resource_name))

    @workflow.signal(name="mark_unhealthy")
    async def mark_unhealthy_signal(self, req: MarkResourceRequest) -> None:
        """Signal twin of `mark_unhealthy` (an app marking its own server)."""
        await self._guard_signal("mark_unhealthy", self._mark_unhealthy(req))

    async def _mark_unhealthy(self, req: MarkResourceRequest) -> StackAccepted:
        async with self.mutex:
            action_id = req.action_id or str(workflow.uuid4())
            if action_id in self.recent:
                return StackAccepted(action_id=action_id, stack_status=self.state.state)
            resource = self._checked(lambda: ensure_can_mark(self.state, req.resource_name))
            self.recent.add(action_id)
            marked = mark_resource(resource, req, workflow.now())
            if marked is None:
                return StackAccepted(action_id=action_id, stack_status=self.state.state)
            resources = {**self.state.resources, marked.name: marked}
            self.state = self.state.model_copy(update={"resources": resources})
            required_by = load_template(self.state.template or EMPTY_TEMPLATE).required_by()
            spec = self.state.spec
            changes = ChangeSet(
                resources=[resource_snapshot(spec, marked, required_by.get(marked.name, []))],
                events=[resource_event(spec, marked, marked.status_reason, action_id)],
            )
            write = record_now if workflow.patched("mark-local-record") else record
            await write(changes, summary=f"mark {marked.name} {marked.state}")
            show(self.state)
            return StackAccepted(action_id=action_id, stack_status=self.state.state)

    @workflow.query(name="describe")
    def describe(self) -> StackState:
        """The stack as this workflow knows it."""
        return self.state

    # ---- the spine: validate, accept, execute, project ----

    def _checked(self, rule: Callable[[], Any]) -> Any:
        """Run a domain rule; a WardenError becomes the ApplicationError the API maps."""
        try:
            return rule()
        except WardenError as err:
            reject(err)

    def _validate(self, action: StackAction, req: StackOperationRequest) -> None:
        if req.action_id is not None and req.action_id in self.recent:
            return  # a client retry of an accepted request: answer it again
        self._checked(lambda: ensure_can_start(self.state, action))
        if action in (StackAction.CREATE, StackAction.UPDATE):
            self._checked(lambda: target_of(self.state, req))

    async def _accept(
        self, action: StackAction, req: StackOperationRequest, lock: LockStackRequest | None = None
    ) -> StackAccepted:
        async with self.mutex:
            action_id = req.action_id or str(workflow.uuid4())
            if action_id in self.recent:
                return StackAccepted(action_id=action_id, stack_status=self.state.state)
            if action == StackAction.LOCK:
                self._checked(lambda: ensure_can_lock(self.state))
            elif action == StackAction.UNLOCK:
                self._checked(
                    lambda: ensure_can_unlock(self.state, by_parent=req.notify is not None)
                )
            else:
                self._validate(action, req)  # state may have moved since the validator ran
            self.recent.add(action_id)
            op = self._plan(action, action_id, req, lock)
            return await self._start(op, req, f"Stack {action.value} started")

    async def _start(
        self, op: StackOperation, req: StackOperationRequest, reason: str
    ) -> StackAccepted:
        """Mark the stack busy with `op`, write that down, and hand it to the main loop."""
        action, action_id, now = op.action, op.action_id, workflow.now()
        self.state = self.state.model_copy(
            update={
                "action": action,
                "status": Status.IN_PROGRESS,
                "status_reason": reason,
                "busy": op,
                "created_at": self.state.created_at or now,
                "updated_at": now,
                "lock": op.lock or self.state.lock,
                "timeout_mins": req.timeout_mins or self.state.timeout_mins,
                "disable_rollback": self.state.disable_rollback
                if req.disable_rollback is None
                else req.disable_rollback,
            }
        )
        inputs: dict[str, Any] = {"parameters": op.parameters} if op.parameters is not None else {}
        if op.group_sizes:
            inputs["group_sizes"] = op.group_sizes
        changes = ChangeSet(
            stacks=[stack_snapshot(self.state)],
            actions=[
                stack_action_change(
                    self.state, action_id, ACTION_NAMES[action], ActionStatus.READY, inputs=inputs
                )
            ],
            events=[stack_event(self.state, reason, action_id)],
        )
        write = record_now if workflow.patched("accept-local-record") else record
        await write(changes, summary=f"accept {action.value}")
        show(self.state)
        self.pending = op
        return StackAccepted(action_id=action_id, stack_status=self.state.state)

    def _plan(
        self,
        action: StackAction,
        action_id: str,
        req: StackOperationRequest,
        lock: LockStackRequest | None,
    ) -> StackOperation:
        template = parameters = None
        if action in (StackAction.CREATE, StackAction.UPDATE):
            template, parameters = target_of(self.state, req, member_name)
        stack_lock = None
        if lock is not None:
            stack_lock = StackLock(
                level=lock.level,
                reason=lock.reason,
                owner=lock.owner,
                locked_at=workflow.now(),
                parent_id=self.state.spec.parent_id if lock.notify else None,
            )
        return StackOperation(
            action_id=action_id,
            action=action,
            template=template,
            parameters=parameters,
            lock=stack_lock,
            notify=lock.notify if lock is not None else req.notify,
        )

    async def _guard_signal(
        self,
        what: str,
        handler: Awaitable[StackAccepted],
        request: StackOperationRequest | LockStackRequest | None = None,
    ) -> None:
        """Run a signal twin; a rejection is recorded as an event, never raised.

        A parent's operation waiting on this (nested) stack is told of the rejection.
        """
        try:
            await handler
        except ApplicationError as err:
            if request is not None and request.notify:
                await self._notify(
                    request.notify,
                    NestedOutcome(
                        stack_id=self.state.spec.stack_id,
                        action_id=request.action_id or "",
                        ok=False,
                        reason=err.message,
                        stack_status=self.state.state,
                    ),
                )
            workflow.logger.warning(
                "signal %s to stack %s rejected: %s", what, self.state.spec.stack_id, err.message
            )
            event = stack_event(self.state, f"Signal {what} rejected: {err.message}", None)
            await record(ChangeSet(events=[event]), summary=f"record rejected {what}")

    async def _execute(self, op: StackOperation) -> None:
        self.cancelled = ""
        await record(
            ChangeSet(
                stacks=[stack_snapshot(self.state)],
                actions=[
                    stack_action_change(
                        self.state, op.action_id, ACTION_NAMES[op.action], ActionStatus.RUNNING
                    )
                ],
            ),
            summary=f"start {op.action.value}",
        )
        result = await self._run_child(op, op.action, self._op_input(op))
        rolls_back = self.cancelled or not self.state.disable_rollback
        if result.error and op.action in (StackAction.CREATE, StackAction.UPDATE) and rolls_back:
            previous = (self.state.template, self.state.parameters)
            await self._finish(op, op.action, result, final=False)
            failed_because = self.state.status_reason
            rollback = self._rollback_input(op, previous)
            result = await self._run_child(op, StackAction.ROLLBACK, rollback)
            self.state = self.state.model_copy(
                update={"template": previous[0], "parameters": previous[1]}
            )
            await self._finish(
                op, StackAction.ROLLBACK, result, final=True, op_error=failed_because
            )
            return
        await self._finish(op, op.action, result, final=True)

    def _op_input(self, op: StackOperation) -> StackOpInput:
        s = self.state
        timeout_s = s.timeout_mins * 60 if s.timeout_mins else None
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
            timeout_s=timeout_s,
        )

    def _rollback_input(
        self, op: StackOperation, previous: tuple[dict[str, Any], dict[str, Any]]
    ) -> StackOpInput:
        """Back to the template before the operation (an empty one after a failed create)."""
        s = self.state
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

    async def _run_child(
        self, op: StackOperation, action: StackAction, inp: StackOpInput
    ) -> StackOpResult:
        spec = self.state.spec
        suffix = "" if action == op.action else f":{action.value.lower()}"
        if action == StackAction.ROLLBACK:
            self.state = self.state.model_copy(
                update={
                    "action": action,
                    "status": Status.IN_PROGRESS,
                    "status_reason": "Rolling back",
                }
            )
            await record(
                ChangeSet(
                    stacks=[stack_snapshot(self.state)],
                    events=[stack_event(self.state, "Stack ROLLBACK started", op.action_id)],
                ),
                summary="start rollback",
            )
            show(self.state)
        outcome = await run_child(
            StackOperationWorkflow.run,
            inp,
            workflow_id=f"stack-op:{spec.stack_id}:{op.action_id}{suffix}",
            summary=_SUMMARY[action].format(name=spec.name),
            attributes=warden_attributes(spec.project_id, "stack-op", spec.stack_id, "RUNNING"),
            details=f"Action `{op.action_id}` ({action.value}) of stack `{spec.stack_id}`",
        )
        if not outcome.succeeded:
            return StackOpResult(resources=self.state.resources, error=outcome.reason)
        result: StackOpResult = outcome.result
        return result

    async def _finish(
        self,
        op: StackOperation,
        action: StackAction,
        result: StackOpResult,
        *,
        final: bool,
        op_error: str = "",
    ) -> None:
        ok = not result.error
        error = self.cancelled if self.cancelled and action == op.action else result.error
        update: dict[str, Any] = {
            "resources": result.resources,
            "action": action,
            "status": Status.COMPLETE if ok else Status.FAILED,
            "status_reason": f"Stack {action.value} completed successfully" if ok else error,
            "updated_at": workflow.now(),
        }
        if action in (StackAction.CREATE, StackAction.UPDATE):
            # Heat keeps the new template even when the operation failed: each
            # resource remembers what was applied to it, so the next update redoes
            # exactly what this one did not reach.
            update.update({"template": op.template, "parameters": op.parameters or {}})
        if action in (StackAction.CREATE, StackAction.UPDATE, StackAction.ROLLBACK):
            update["outputs"] = result.outputs
        if action == StackAction.UNLOCK and ok:
            update["lock"] = None
        if ok and action in (StackAction.SUSPEND, StackAction.RESUME):
            update["suspended"] = action == StackAction.SUSPEND
        deleted = ok and action == StackAction.DELETE
        if final:
            update["busy"] = None
            update["deleted"] = deleted
        self.state = self.state.model_copy(update=update)
        if final:
            self.pending = None
        spec = self.state.spec
        await record(
            ChangeSet(
                # Before a rollback the row stays IN_PROGRESS: readers never see a
                # final-looking UPDATE_FAILED that is about to become ROLLBACK_*.
                stacks=[] if deleted or not final else [stack_snapshot(self.state)],
                deleted_stacks=[spec.stack_id] if deleted else [],
                actions=[
                    stack_action_change(
                        self.state,
                        op.action_id,
                        ACTION_NAMES[op.action],
                        ActionStatus.SUCCEEDED if ok and not op_error else ActionStatus.FAILED,
                        reason=f"{op_error} ({self.state.state})"
                        if op_error
                        else self.state.status_reason,
                    )
                ]
                if final
                else [],
                events=[stack_event(self.state, self.state.status_reason, op.action_id)],
            ),
            summary=f"finish {action.value}",
        )
        show(self.state)
        if final and op.notify:
            failed = sorted(r.name for r in self.state.resources.values() if r.failed)
            await self._notify(
                op.notify,
                NestedOutcome(
                    stack_id=spec.stack_id,
                    action_id=op.action_id,
                    ok=ok and not op_error,
                    reason=self.state.status_reason,
                    stack_status=self.state.state,
                    outputs=self.state.outputs,
                    failed=failed,
                    size=len(self.state.resources),
                    refs={r.name: r.physical_id for r in self.state.resources.values()},
                ),
            )

    async def _notify(self, target: str, outcome: NestedOutcome) -> None:
        """Tell a parent's waiting operation how this nested stack's operation ended."""
        try:
            await workflow.get_external_workflow_handle(target).signal(NESTED_FINISHED, outcome)
        except FailureError as err:
            workflow.logger.warning("could not tell %s about %s: %s", target, outcome, err)
