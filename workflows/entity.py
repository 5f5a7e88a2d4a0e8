"""Activities and children as every entity workflow calls them (docs/ARCHITECTURE.md).

The model: docs/api-contract.md §Orchestration.

An entity workflow owns one object's state and is its lock: API calls arrive as
updates whose validators reject what the state forbids, long operations run as
child workflows with business-key ids, every write to the database goes through
the idempotent `record_changes` activity, and the workflow continues as new when
Temporal suggests it, after draining handlers and never while a child runs.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, NoReturn

from temporalio import workflow
from temporalio.common import RetryPolicy, TypedSearchAttributes
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError, FailureError

with workflow.unsafe.imports_passed_through():
    from activities.store import StoreActivities
    from domain.errors import WardenError
    from domain.projection import ChangeSet

#: The projection must eventually be written: retry for as long as it takes.
STORE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
)
#: How many recent action ids an entity remembers (dedups client retries across runs).
RECENT_ACTIONS_KEPT = 200


def reject(error: WardenError) -> NoReturn:
    """Raise a domain error as the ApplicationError the API maps back to HTTP."""
    raise ApplicationError(error.message, type=type(error).__name__, non_retryable=True)


async def record(changes: ChangeSet, summary: str = "record changes") -> None:
    """Write a change set to the database through the store activity."""
    if changes.is_empty():
        return
    await workflow.execute_activity_method(
        StoreActivities.record_changes,
        changes,
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=STORE_RETRY,
        summary=summary,
    )


async def record_now(changes: ChangeSet, summary: str = "record changes") -> None:
    """Write a change set through a local activity (no server round trip).

    For writes an update handler must finish before it answers (read-your-writes for
    the caller): a local activity runs inside the same workflow task, so the update
    completes in one task instead of two. Long or batched writes keep using `record`.
    """
    if changes.is_empty():
        return
    await workflow.execute_local_activity_method(
        StoreActivities.record_changes,
        changes,
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=STORE_RETRY,
        summary=summary,
    )


def failure_reason(error: BaseException) -> str:
    """The most specific human message in a chain of Temporal failures."""
    reason = str(error)
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, ApplicationError) and current.message:
            reason = current.message
        elif isinstance(current, FailureError) and not isinstance(
            current, (ActivityError, ChildWorkflowError)
        ):
            reason = current.message or reason
        current = current.__cause__
    return reason


class Outcome:
    """How a child operation ended."""

    def __init__(self, succeeded: bool, reason: str = "", result: Any = None) -> None:
        self.succeeded = succeeded
        self.reason = reason
        self.result = result


async def run_child(
    run: Any,
    arg: Any,
    *,
    workflow_id: str,
    summary: str,
    attributes: TypedSearchAttributes,
    details: str = "",
) -> Outcome:
    """Run an operation as a child workflow; a failure becomes an Outcome, never a crash."""
    try:
        result: Any = await workflow.execute_child_workflow(
            run,
            arg,
            id=workflow_id,
            static_summary=summary,
            static_details=details or None,
            search_attributes=attributes,
        )
    except ChildWorkflowError as err:
        return Outcome(False, failure_reason(err))
    return Outcome(True, result=result)


class RecentActions:
    """Bounded memory of accepted action ids, carried across continue-as-new."""

    def __init__(self, ids: list[str]) -> None:
        self._ids = list(ids)[-RECENT_ACTIONS_KEPT:]

    def __contains__(self, action_id: object) -> bool:
        return action_id in self._ids

    def add(self, action_id: str) -> None:
        """Remember an accepted action id."""
        self._ids.append(action_id)
        del self._ids[:-RECENT_ACTIONS_KEPT]

    def to_list(self) -> list[str]:
        """The ids to hand to the next run."""
        return list(self._ids)


def continue_as_new_due(history_limit: int | None) -> bool:
    """Whether the current run should hand over to a new one."""
    info = workflow.info()
    if history_limit is not None and info.get_current_history_length() >= history_limit:
        return True
    return info.is_continue_as_new_suggested()
