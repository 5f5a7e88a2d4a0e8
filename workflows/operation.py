"""An entity operation, declared once: its name, messages, domain rule and shape.

An `Operation` is the contract between the API (or an app talking to Temporal) and an
entity workflow. The workflow derives from it the Temporal update, the update's
validator and the signal twin (`workflows/spine.py`); the API calls the update through
it (`api/temporal.py`), so a renamed or retyped operation fails mypy on both sides
instead of a string drifting apart.

This module is a leaf: it imports nothing of Warden's, so the API and apps can import
the operation tables without pulling in activities or store writers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

StateT = TypeVar("StateT")
AnswerT = TypeVar("AnswerT")


class ActionRequest(Protocol):
    """What every operation request carries: the action id (also the update id)."""

    @property
    def action_id(self) -> str | None: ...


RequestT = TypeVar("RequestT", bound=ActionRequest)


@dataclass(frozen=True)
class Operation(Generic[StateT, RequestT, AnswerT]):
    """One operation of an entity workflow."""

    #: Temporal update name; the signal twin (if any) has the same name.
    name: str
    #: The upstream action name recorded for it (`StackAction` / `ActionName` value).
    action: str
    request: type[RequestT]
    answer: type[AnswerT]
    #: The domain rule that refuses it (raises a `WardenError`); the update's validator
    #: and the handler both apply it, so a request is judged on the state it meets.
    rule: Callable[[StateT, RequestT], object]
    #: Whether apps may also send it as a signal (fire-and-forget; a refusal is
    #: recorded as an event instead of answered).
    signal: bool = True
    #: Carried out by a child workflow (the answer means "accepted"), else inside the
    #: handler (the answer means "done").
    child: bool = True
    doc: str = ""
