"""How a stack's entity workflow carries out its operations (the handlers' bodies).

`StackWorkflow` (`workflows/stack/workflow.py`) binds each operation of `StackOperations` to
one of the bodies here. Operations carried out by a `stack-op` child are accepted
(the stack turns IN_PROGRESS, busy with it) and then run by the main loop, with a
rollback after a failed create or update; marks and cancels are done in the handler.
What the stack looks like after each step is decided in `domain/stack/transitions.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from domain.actions import ActionStatus
    from domain.hot.template import load_template, masked_parameters
    from domain.projection import ChangeSet
    from domain.stack import transitions
    from domain.stack.requests import (
        LockStackRequest,
        MarkResourceRequest,
        ResourceSignalRequest,
        StackAccepted,
        StackOperationRequest,
        UnsetHookRequest,
    )
    from domain.stack.rules import ensure_can_mark, find_resource, plan_scaling_signal, target_of
    from domain.stack.state import StackAction, StackOperation, StackState
    from domain.stack.types.wait_condition import record_signal
    from workflows import ids
    from workflows.entity import record, record_now, run_child
    from workflows.operation import Operation
    from workflows.search_attributes import warden_attributes
    from workflows.spine import EntityWorkflow
    from workflows.stack.event_sinks import post_events
    from workflows.stack.messages import NESTED_FINISHED, NestedOutcome, StackInput
    from workflows.stack.nested import member_name
    from workflows.stack.op_inputs import nested_outcome, operation_input, rollback_input
    from workflows.stack.op_messages import RESOURCE_SIGNAL, UNSET_HOOK
    from workflows.stack.operation import (
        EMPTY_TEMPLATE,
        StackOperationWorkflow,
        StackOpInput,
        StackOpResult,
    )
    from workflows.stack.records import (
        ACTION_NAMES,
        resource_event,
        resource_snapshot,
        show,
        stack_action_change,
        stack_event,
        stack_snapshot,
    )

StackOp = Operation[StackState, Any, StackAccepted]

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


class StackSpine(EntityWorkflow[StackState, StackOperation, StackAccepted]):
    """A stack's state and the bodies of its operations' handlers."""

    def _setup(self, inp: StackInput) -> None:
        self._begin(inp.state, inp.pending, inp.recent_action_ids, inp.history_limit)
        #: Why the running update was cancelled ("" when it was not).
        self.cancelled = ""
        #: Whether the cancel asked for (`cancel_update`) rolls the operation back.
        self.cancel_rolls_back = True
        #: The action whose accept already wrote it RUNNING (its start needs no write).
        self.written_running = ""
        #: (template, who requires each resource in it): parsed once per template, not
        #: per mark (a 1,000-resource template takes tens of ms to parse).
        self._required_by_memo: tuple[object, dict[str, list[str]]] | None = None
        #: Posts to the event sinks still running (kept so they are not collected).
        self._sinking: set[asyncio.Task[None]] = set()

    # ---- handler bodies (bound to operations in workflows/stack/workflow.py) ----

    async def accept(self, op: StackOp, req: StackOperationRequest) -> StackAccepted:
        """Accept an operation a `stack-op` child carries out; the main loop runs it."""
        action = StackAction(op.action)

        async def start(action_id: str) -> StackAccepted:
            return await self._start(self._planned(action, action_id, req), req)

        return await self._perform(op, req, start)

    async def accept_lock(self, op: StackOp, req: LockStackRequest) -> StackAccepted:
        """Accept a lock: a `stack-op` child locks nested stacks first."""

        async def start(action_id: str) -> StackAccepted:
            planned = StackOperation(
                action_id=action_id,
                action=StackAction.LOCK,
                lock=transitions.new_lock(req, self.state, workflow.now()),
                notify=req.notify,
            )
            return await self._start(planned, StackOperationRequest(action_id=action_id))

        return await self._perform(op, req, start)

    async def cancel_running(self, op: StackOp, req: StackOperationRequest) -> StackAccepted:
        """Tell the running operation's child to stop; the main loop then rolls it back
        (`cancel_update`) or lets it fail (`cancel_without_rollback`)."""
        async with self.mutex:
            self._checked(lambda: op.rule(self.state, req))
            assert self.state.busy is not None
            action_id = self.state.busy.action_id
            self.cancelled = f"Stack {self.state.busy.action.value} cancelled"
            self.cancel_rolls_back = op.name == "cancel_update"
            event = stack_event(self.state, f"{op.name} requested", action_id)
            await record(ChangeSet(events=[event]), summary=f"{op.name} requested")
            handle = workflow.get_external_workflow_handle(
                ids.stack_operation(self.state.spec.stack_id, action_id)
            )
            try:
                await handle.signal("cancel", self.cancelled)
            except FailureError as err:
                workflow.logger.info(
                    "cancel of stack %s not delivered: %s", self.state.spec.stack_id, err
                )
            return StackAccepted(action_id=action_id, stack_status=self.state.stack_status)

    async def clear_hook(self, op: StackOp, req: UnsetHookRequest) -> StackAccepted:
        """Pass `unset_hook` to the running operation (Heat's breakpoint signal)."""
        async with self.mutex:
            self._checked(lambda: op.rule(self.state, req))
            assert self.state.busy is not None
            action_id = self.state.busy.action_id
            handle = workflow.get_external_workflow_handle(
                ids.stack_operation(self.state.spec.stack_id, action_id)
            )
            try:
                await handle.signal(UNSET_HOOK, req)
            except FailureError as err:
                workflow.logger.info(
                    "unset_hook of stack %s not delivered: %s", self.state.spec.stack_id, err
                )
            return StackAccepted(action_id=action_id, stack_status=self.state.stack_status)

    async def deliver(self, op: StackOp, req: ResourceSignalRequest) -> StackAccepted:
        """A wait condition handle's signal: passed to the running operation (whose
        resources are newer than the stack's), else kept in the handle's metadata."""

        async def delivered(action_id: str) -> StackAccepted:
            busy = self.state.busy
            if busy is not None:
                handle = workflow.get_external_workflow_handle(
                    ids.stack_operation(self.state.spec.stack_id, busy.action_id)
                )
                try:
                    await handle.signal(RESOURCE_SIGNAL, req)
                except FailureError as err:
                    workflow.logger.info(
                        "signal of stack %s not delivered: %s", self.state.spec.stack_id, err
                    )
                return StackAccepted(action_id=busy.action_id, stack_status=self.state.stack_status)
            if req.deployment:
                return self._answer_again(op, action_id)  # no step waits for it
            current = find_resource(self.state, req.resource_name)
            changed, reason = record_signal(current, req.details, workflow.now())
            self.state = transitions.with_resource(self.state, changed)
            spec = self.state.spec
            changes = ChangeSet(
                resources=[resource_snapshot(spec, changed, self._required_by(changed.name))],
                events=[resource_event(spec, changed, reason, action_id)],
            )
            await record_now(changes, summary=f"signal {changed.name}")
            self._sink(changes)
            return self._answer_again(op, action_id)

        return await self._perform(op, req, delivered)

    async def scale(self, op: StackOp, req: ResourceSignalRequest) -> StackAccepted:
        """A scaling policy's signal: resize its group by an update, or record why not."""

        async def start(action_id: str) -> StackAccepted:
            now = workflow.now()
            plan = plan_scaling_signal(self.state, req, now)
            policy = self.state.resources[plan.policy]
            if plan.ignored:
                event = resource_event(
                    self.state.spec, policy, f"Signal ignored: {plan.ignored}", action_id
                )
                await record(ChangeSet(events=[event]), summary="scaling signal ignored")
                return self._answer_again(op, action_id)
            stamped = policy.model_copy(
                update={"attributes": {**policy.attributes, "last_adjustment": now.isoformat()}}
            )
            self.state = transitions.with_resource(self.state, stamped)
            planned = StackOperation(
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
            # `existing`: the stack's template, tags and hooks stay (a PATCH, not a PUT).
            keep = StackOperationRequest(action_id=action_id, existing=True)
            return await self._start(planned, keep, reason)

        return await self._perform(op, req, start)

    async def mark(self, op: StackOp, req: MarkResourceRequest) -> StackAccepted:
        """Mark a resource CHECK_FAILED, or clear the mark (inline: no child)."""

        async def marked(action_id: str) -> StackAccepted:
            resource = ensure_can_mark(self.state, req)
            changed = transitions.mark_resource(resource, req, workflow.now())
            if changed is None:
                return self._answer_again(op, action_id)
            self.state = transitions.with_resource(self.state, changed)
            spec = self.state.spec
            changes = ChangeSet(
                resources=[resource_snapshot(spec, changed, self._required_by(changed.name))],
                events=[resource_event(spec, changed, changed.status_reason, action_id)],
            )
            write = record_now if workflow.patched("mark-local-record") else record
            await write(changes, summary=f"mark {changed.name} {changed.resource_status}")
            self._sink(changes)
            show(self.state)
            return self._answer_again(op, action_id)

        return await self._perform(op, req, marked)

    def _required_by(self, name: str) -> list[str]:
        """The resources of the current template that require `name`."""
        template = self.state.template or EMPTY_TEMPLATE
        memo = self._required_by_memo
        if memo is None or memo[0] is not template:
            memo = self._required_by_memo = (
                template,
                load_template(template).required_by(workflow.patched),
            )
        return memo[1].get(name, [])

    # ---- acceptance ----

    def _planned(
        self, action: StackAction, action_id: str, req: StackOperationRequest
    ) -> StackOperation:
        template = parameters = None
        if action in (StackAction.CREATE, StackAction.UPDATE):
            template, parameters = target_of(self.state, req, member_name)
        return StackOperation(
            action_id=action_id,
            action=action,
            template=template,
            parameters=parameters,
            notify=req.notify,
        )

    async def _start(
        self, op: StackOperation, req: StackOperationRequest, reason: str = ""
    ) -> StackAccepted:
        """Mark the stack busy with `op`, write that down, and hand it to the main loop."""
        reason = reason or f"Stack {op.action.value} started"
        self.state = transitions.accepted(self.state, op, req, reason, workflow.now())
        inputs: dict[str, Any] = {}
        if op.parameters is not None:
            template = op.template if op.template is not None else self.state.template
            inputs["parameters"] = masked_parameters(template, op.parameters)
        if op.group_sizes:
            inputs["group_sizes"] = op.group_sizes
        # The main loop is idle (the rules refuse a busy stack) and starts `op` in this
        # same task: the accept writes the action RUNNING, and the start writes nothing.
        # Before this patch READY was written here and RUNNING by an activity of its own.
        running = workflow.patched("accept-writes-running")
        self.written_running = op.action_id if running else ""
        changes = ChangeSet(
            stacks=[stack_snapshot(self.state)],
            actions=[
                stack_action_change(
                    self.state,
                    op.action_id,
                    ACTION_NAMES[op.action],
                    ActionStatus.RUNNING if running else ActionStatus.READY,
                    inputs=inputs,
                )
            ],
            events=[stack_event(self.state, reason, op.action_id)],
        )
        write = record_now if workflow.patched("accept-local-record") else record
        await write(changes, summary=f"accept {op.action.value}")
        self._sink(changes)
        show(self.state)
        self.pending = op
        return StackAccepted(action_id=op.action_id, stack_status=self.state.stack_status)

    # ---- execution (the main loop) ----

    async def _execute(self, op: StackOperation) -> None:
        self.cancelled, self.cancel_rolls_back = "", True
        if self.written_running != op.action_id:  # carried over, or accepted before the patch
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
        result = await self._run_child(op, op.action, operation_input(self.state, op))
        # A cancel decides (cancel_update rolls back, cancel_without_rollback does not);
        # a failure rolls back unless the stack disables it.
        rolls_back = self.cancel_rolls_back if self.cancelled else not self.state.disable_rollback
        if result.error and op.action in (StackAction.CREATE, StackAction.UPDATE) and rolls_back:
            previous = (self.state.template, self.state.parameters)
            await self._finish(op, op.action, result, final=False)
            failed_because = self.state.status_reason
            rollback = rollback_input(self.state, op, previous)
            result = await self._run_child(op, StackAction.ROLLBACK, rollback)
            self.state = self.state.model_copy(
                update={"template": previous[0], "parameters": previous[1]}
            )
            await self._finish(
                op, StackAction.ROLLBACK, result, final=True, op_error=failed_because
            )
            return
        await self._finish(op, op.action, result, final=True)

    async def _run_child(
        self, op: StackOperation, action: StackAction, inp: StackOpInput
    ) -> StackOpResult:
        spec = self.state.spec
        if action == StackAction.ROLLBACK:
            self.state = transitions.rolling_back(self.state)
            started = ChangeSet(
                stacks=[stack_snapshot(self.state)],
                events=[stack_event(self.state, "Stack ROLLBACK started", op.action_id)],
            )
            await record(started, summary="start rollback")
            await post_events(self.state.event_sinks, started.events)
            show(self.state)
        phase = "" if action == op.action else action.value.lower()
        outcome = await run_child(
            StackOperationWorkflow.run,
            inp,
            workflow_id=ids.stack_operation(spec.stack_id, op.action_id, phase),
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
        failure = ""
        if result.error:  # a cancelled update fails with the cancel as its reason
            failure = self.cancelled if self.cancelled and action == op.action else result.error
        ending = transitions.OperationEnding(
            result.resources, result.outputs, failure, result.output_errors
        )
        self.state = transitions.finished(
            self.state, op, action, ending, final=final, now=workflow.now()
        )
        if final:
            self.pending = None
        ok = not failure
        finished = self._finish_changes(op, ok, final, op_error)
        await record(finished, summary=f"finish {action.value}")
        await post_events(self.state.event_sinks, finished.events)
        show(self.state)
        if final and op.notify:
            await self._notify(op.notify, nested_outcome(self.state, op, ok and not op_error))

    def _finish_changes(
        self, op: StackOperation, ok: bool, final: bool, op_error: str
    ) -> ChangeSet:
        """What an operation's end writes. Before a rollback the row stays IN_PROGRESS:
        readers never see a final-looking UPDATE_FAILED about to become ROLLBACK_*."""
        state, deleted = self.state, self.state.deleted
        action = stack_action_change(
            state,
            op.action_id,
            ACTION_NAMES[op.action],
            ActionStatus.SUCCEEDED if ok and not op_error else ActionStatus.FAILED,
            reason=f"{op_error} ({state.stack_status})" if op_error else state.status_reason,
        )
        return ChangeSet(
            stacks=[] if deleted or not final else [stack_snapshot(state)],
            deleted_stacks=[state.spec.stack_id] if deleted else [],
            actions=[action] if final else [],
            events=[stack_event(state, state.status_reason, op.action_id)],
        )

    async def _notify(self, target: str, outcome: NestedOutcome) -> None:
        """Tell a parent's waiting operation how this nested stack's operation ended."""
        try:
            await workflow.get_external_workflow_handle(target).signal(NESTED_FINISHED, outcome)
        except FailureError as err:
            workflow.logger.warning("could not tell %s about %s: %s", target, outcome, err)

    # ---- what the spine asks of an entity ----

    def _deleted(self) -> bool:
        return self.state.deleted

    def _carry_over(self) -> StackInput:
        return StackInput(
            state=self.state,
            recent_action_ids=self.recent.to_list(),
            history_limit=self.history_limit,
        )

    def _sink(self, changes: ChangeSet) -> None:
        """Post the events just recorded to the stack's event sinks, without holding up
        the update being answered (the workflow goes on running the post)."""
        if self.state.event_sinks and changes.events:
            task = asyncio.create_task(post_events(self.state.event_sinks, changes.events))
            self._sinking.add(task)
            task.add_done_callback(self._sinking.discard)

    def _show(self) -> None:
        show(self.state)

    def _answer_again(
        self, op: Operation[Any, Any, StackAccepted], action_id: str
    ) -> StackAccepted:
        return StackAccepted(action_id=action_id, stack_status=self.state.stack_status)

    async def _signal_refused(self, op: Operation[Any, Any, Any], req: Any, reason: str) -> None:
        """Record the refusal; a parent's operation waiting on this stack is told too."""
        notify = req.notify if isinstance(req, (StackOperationRequest, LockStackRequest)) else None
        if notify:
            refused = NestedOutcome(
                stack_id=self.state.spec.stack_id,
                action_id=req.action_id or "",
                ok=False,
                reason=reason,
                stack_status=self.state.stack_status,
            )
            await self._notify(notify, refused)
        workflow.logger.warning(
            "signal %s to stack %s rejected: %s", op.name, self.state.spec.stack_id, reason
        )
        event = stack_event(self.state, f"Signal {op.name} rejected: {reason}", None)
        await record(ChangeSet(events=[event]), summary=f"record rejected {op.name}")
