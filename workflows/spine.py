"""The entity-workflow spine shared by stacks and clusters (docs/ARCHITECTURE.md).

An entity workflow owns one object's state and is its lock. Its operations are
declared once, as `Operation`s (`workflows/stack/messages.py`,
`workflows/cluster/messages.py`); from each, `update_handler` and `update_and_signal`
derive the Temporal update, the update's validator (the operation's domain rule, unless
the request is a retry of an accepted action) and the signal twin (the same handler; a
refusal is recorded as an event instead of raised, which would fail the workflow).

`EntityWorkflow` holds what both entities share: the main loop that runs one
accepted operation at a time and continues as new when due, the mutex handlers take,
the memory of recent action ids that makes client retries harmless, and `_perform`,
the admission step every handler goes through.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar, cast

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from domain.errors import WardenError
    from workflows.entity import RecentActions, continue_as_new_due, reject
    from workflows.operation import ActionRequest, Operation

StateT = TypeVar("StateT")
PendingT = TypeVar("PendingT")
AnswerT = TypeVar("AnswerT")
RequestT = TypeVar("RequestT", bound=ActionRequest)
W = TypeVar("W", bound="EntityWorkflow[Any, Any, Any]")

#: A handler body: the workflow, the operation it was reached by, the request.
Run = Callable[[W, Operation[Any, RequestT, AnswerT], RequestT], Awaitable[AnswerT]]


class EntityWorkflow(ABC, Generic[StateT, PendingT, AnswerT]):
    """What stack and cluster entity workflows share (subclasses hold the specifics)."""

    state: StateT
    #: The accepted operation the main loop runs next (at most one at a time).
    pending: PendingT | None

    def _begin(
        self,
        state: StateT,
        pending: PendingT | None,
        recent_action_ids: list[str],
        history_limit: int | None,
    ) -> None:
        self.state = state
        self.pending = pending
        self.recent = RecentActions(recent_action_ids)
        #: Continue-as-new after this many history events (tests); else when suggested.
        self.history_limit = history_limit
        self.mutex = asyncio.Lock()

    # ---- what each entity provides ----

    @abstractmethod
    def _deleted(self) -> bool:
        """Whether the entity is gone (the main loop ends)."""

    @abstractmethod
    async def _execute(self, op: PendingT) -> None:
        """Carry out an accepted operation (a child workflow) and record how it ended."""

    @abstractmethod
    def _carry_over(self) -> Any:
        """The input of the next run (continue-as-new)."""

    @abstractmethod
    def _show(self) -> None:
        """Keep the Temporal UI's current details and search attributes true."""

    @abstractmethod
    def _answer_again(self, op: Operation[Any, Any, AnswerT], action_id: str) -> AnswerT:
        """The answer to a retry of an action this entity already accepted."""

    @abstractmethod
    async def _signal_refused(self, op: Operation[Any, Any, Any], req: Any, reason: str) -> None:
        """Record (and report) a signal twin's refusal: signals cannot answer."""

    # ---- the spine ----

    async def _serve(self) -> None:
        """The main loop: run accepted operations one at a time until deleted."""
        self._show()
        while not self._deleted():
            await workflow.wait_condition(
                lambda: (
                    self.pending is not None
                    or self._deleted()
                    or continue_as_new_due(self.history_limit)
                )
            )
            if self.pending is not None:
                op = self.pending
                await self._execute(op)
                if self.pending is op:
                    self.pending = None
                continue
            if self._deleted():  # ended by a handler (a standalone node joining a cluster)
                break
            # Never hand over mid-handler or with an operation waiting.
            await workflow.wait_condition(workflow.all_handlers_finished)
            if self.pending is None:
                workflow.continue_as_new(self._carry_over())
        await workflow.wait_condition(workflow.all_handlers_finished)

    def _judged(self) -> StateT:
        """The state a rule judges (an entity may add what its rules need, e.g. the time)."""
        return self.state

    def _checked(self, rule: Callable[[], Any]) -> Any:
        """Run a domain rule; a WardenError becomes the ApplicationError the API maps."""
        try:
            return rule()
        except WardenError as err:
            reject(err)

    def _validate(self, op: Operation[StateT, RequestT, Any], req: RequestT) -> None:
        """An update's validator: the operation's rule, unless this is a client retry."""
        if req.action_id is not None and req.action_id in self.recent:
            return  # a retry of an accepted request: the handler answers it again
        self._checked(lambda: op.rule(self._judged(), req))

    async def _perform(
        self,
        op: Operation[StateT, RequestT, AnswerT],
        req: RequestT,
        body: Callable[[str], Awaitable[AnswerT]],
        *,
        id_first: bool = True,
    ) -> AnswerT:
        """Admit a request under the mutex, then run `body(action_id)`.

        A retry of an accepted action is answered again; otherwise the rule is applied
        to the state the request meets now (it may have moved since the validator ran)
        and the action id is remembered. A request without an id gets a fresh one:
        `id_first=False` draws it after the rule, the order recorded histories of
        clusters' inline operations hold (`workflow.uuid4` calls are replayed in order).
        """
        async with self.mutex:
            action_id = req.action_id or (str(workflow.uuid4()) if id_first else None)
            if action_id is not None and action_id in self.recent:
                return self._answer_again(op, action_id)
            self._checked(lambda: op.rule(self._judged(), req))
            action_id = action_id or str(workflow.uuid4())
            self.recent.add(action_id)
            return await body(action_id)

    async def _signalled(
        self, op: Operation[Any, RequestT, Any], req: RequestT, handled: Awaitable[Any]
    ) -> None:
        """Run a signal twin's handler; a refusal is recorded, never raised."""
        try:
            await handled
        except ApplicationError as err:
            await self._signal_refused(op, req, err.message)


def update_handler(
    op: Operation[Any, RequestT, AnswerT], run: Run[W, RequestT, AnswerT]
) -> Callable[[W, RequestT], Awaitable[AnswerT]]:
    """The Temporal update of `op` (named `op.name`), validated by `op.rule`."""

    async def handler(self: W, req: RequestT) -> AnswerT:
        return await run(self, op, req)

    def validator(self: W, req: RequestT) -> None:
        self._validate(op, req)

    _describe(handler, op, f"{op.name}", op.answer)
    _describe(validator, op, f"validate_{op.name}", None)
    method = workflow.update(name=op.name)(handler)
    method.validator(validator)
    return cast(Callable[[W, RequestT], Awaitable[AnswerT]], method)


def signal_twin(
    op: Operation[Any, RequestT, AnswerT], run: Run[W, RequestT, AnswerT]
) -> Callable[[W, RequestT], Awaitable[None]]:
    """The signal twin of `op`: the same handler, for apps that talk to Temporal."""
    if not op.signal:
        raise ValueError(f"operation {op.name} declares no signal twin")

    async def handler(self: W, req: RequestT) -> None:
        await self._signalled(op, req, run(self, op, req))

    _describe(handler, op, f"{op.name}_signal", None)
    return workflow.signal(name=op.name)(handler)


def update_and_signal(
    op: Operation[Any, RequestT, AnswerT], run: Run[W, RequestT, AnswerT]
) -> tuple[Callable[[W, RequestT], Awaitable[AnswerT]], Callable[[W, RequestT], Awaitable[None]]]:
    """Both handlers of an operation that apps may also signal."""
    return update_handler(op, run), signal_twin(op, run)


def _describe(fn: Callable[..., Any], op: Operation[Any, Any, Any], name: str, answer: Any) -> None:
    """Give a derived handler the name, doc and type hints Temporal reads."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = op.doc
    fn.__annotations__ = {"req": op.request, "return": answer}
