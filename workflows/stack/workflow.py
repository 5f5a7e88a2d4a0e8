"""StackWorkflow: the entity workflow of one stack (`stack:{stack_id}`).

Its operations are declared in `StackOperations` (`workflows/stack/messages.py`); each
line below binds one to the body that carries it out (`workflows/stack/spine.py`),
deriving the Temporal update, its validator and, where declared, the signal twin.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.stack.state import StackState
    from workflows.spine import update_and_signal, update_handler
    from workflows.stack.messages import StackInput
    from workflows.stack.messages import StackOperations as Ops
    from workflows.stack.spine import StackSpine


@workflow.defn(name="StackWorkflow")
class StackWorkflow(StackSpine):
    """Owns a stack's state; serialises its operations; is its lock."""

    # ---- operations: one line each (how to add one: docs/ARCHITECTURE.md) ----
    create = update_handler(Ops.create, StackSpine.accept)
    update, update_signal = update_and_signal(Ops.update, StackSpine.accept)
    delete, delete_signal = update_and_signal(Ops.delete, StackSpine.accept)
    check, check_signal = update_and_signal(Ops.check, StackSpine.accept)
    suspend, suspend_signal = update_and_signal(Ops.suspend, StackSpine.accept)
    resume, resume_signal = update_and_signal(Ops.resume, StackSpine.accept)
    lock, lock_signal = update_and_signal(Ops.lock, StackSpine.accept_lock)
    unlock, unlock_signal = update_and_signal(Ops.unlock, StackSpine.accept)
    cancel_update = update_handler(Ops.cancel_update, StackSpine.cancel_running)
    cancel_without_rollback = update_handler(Ops.cancel_without_rollback, StackSpine.cancel_running)
    signal, signal_twin = update_and_signal(Ops.signal, StackSpine.scale)
    unset_hook = update_handler(Ops.unset_hook, StackSpine.clear_hook)
    deliver_signal, deliver_signal_twin = update_and_signal(Ops.deliver_signal, StackSpine.deliver)
    mark_unhealthy, mark_unhealthy_signal = update_and_signal(Ops.mark_unhealthy, StackSpine.mark)

    @workflow.init
    def __init__(self, inp: StackInput) -> None:
        self._setup(inp)

    @workflow.run
    async def run(self, inp: StackInput) -> StackState:
        await self._serve()
        return self.state

    @workflow.query(name="describe")
    def describe(self) -> StackState:
        """The stack as this workflow knows it."""
        return self.state
