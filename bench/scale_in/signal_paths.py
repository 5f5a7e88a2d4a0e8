"""A victim's way from its complete_lifecycle signal to its delete, read from its history."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from bench.histories import event_seconds
from bench.measure import ms, pct

#: The steps from a victim's first signal to its delete, as its history shows them
#: (`SignalPath`), then to the delete itself: simcloud's DELETE for Warden's victims,
#: the activity's first line for the bare fan-out's (which calls no cloud).
SIGNAL_STEPS = (
    "signal recorded → task started",
    "task on the worker",
    "task done → delete activity started",
    "delete activity started → delete",
)
_SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
_TASK_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
_TASK_COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
_ACTIVITY_STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED


@dataclass(frozen=True)
class SignalPath:
    """When a victim's history recorded its first signal, started and finished the
    workflow task that saw it, and started its delete (the last activity scheduled
    after that task; event times, the server's clock)."""

    recorded: float
    task_started: float | None = None
    task_done: float | None = None
    activity_started: float | None = None
    #: When the workflow task written just before the signal ended, if it ended later
    #: than the signal arrived: the signal was held until it ended (a signal that lands
    #: while a task runs is buffered, then written after it with its arrival time).
    prior_task_done: float | None = None

    def held(self) -> float | None:
        """How long the signal waited for the task that ran when it arrived (s), if it did."""
        if self.prior_task_done is None or self.prior_task_done <= self.recorded:
            return None
        return self.prior_task_done - self.recorded

    def steps(self, deleted: float | None) -> tuple[float | None, ...]:
        """The durations of `SIGNAL_STEPS` (s), None where a step is missing."""
        times = (self.recorded, self.task_started, self.task_done, self.activity_started, deleted)
        return tuple(
            b - a if a is not None and b is not None else None for a, b in itertools.pairwise(times)
        )


def _seconds(event: HistoryEvent | None) -> float | None:
    return None if event is None else event_seconds(event)


def _task_after(after: list[HistoryEvent]) -> tuple[HistoryEvent | None, HistoryEvent | None]:
    """The first workflow task started after the signal, and its completion."""
    started = next((e for e in after if e.event_type == _TASK_STARTED), None)
    done = next(
        (
            e
            for e in after
            if e.event_type == _TASK_COMPLETED
            and started is not None
            and e.workflow_task_completed_event_attributes.started_event_id == started.event_id
        ),
        None,
    )
    return started, done


def _delete_started(after: list[HistoryEvent], done: HistoryEvent | None) -> HistoryEvent | None:
    """The last activity started that was scheduled after the task `done`: the delete."""
    if done is None:
        return None
    return next(
        (
            e
            for e in reversed(after)
            if e.event_type == _ACTIVITY_STARTED
            and e.activity_task_started_event_attributes.scheduled_event_id > done.event_id
        ),
        None,
    )


def _prior_task_done(events: Sequence[HistoryEvent], signal: HistoryEvent) -> HistoryEvent | None:
    """The last workflow task completed before the signal's event."""
    # A signal that lands while a task runs is written after that task, with the time it
    # arrived: a task completed before the signal's event, but later than it.
    return next(
        (
            e
            for e in reversed(events)
            if e.event_type == _TASK_COMPLETED and e.event_id < signal.event_id
        ),
        None,
    )


def signal_path(events: Sequence[HistoryEvent]) -> SignalPath | None:
    """The `SignalPath` of a history, None if it was never signalled."""
    signal = next((e for e in events if e.event_type == _SIGNALED), None)
    if signal is None:
        return None
    after = [e for e in events if e.event_id > signal.event_id]
    started, done = _task_after(after)
    return SignalPath(
        recorded=event_seconds(signal),
        prior_task_done=_seconds(_prior_task_done(events, signal)),
        task_started=_seconds(started),
        task_done=_seconds(done),
        activity_started=_seconds(_delete_started(after, done)),
    )


def signal_steps_p50_ms(
    paths: dict[str, SignalPath], deleted: dict[str, float]
) -> dict[str, float | None]:
    """p50 of each of `SIGNAL_STEPS` over `paths` (ms); `deleted`: workflow id → delete."""
    steps = [path.steps(deleted.get(wid)) for wid, path in paths.items()]
    return {
        name: ms(pct((d for s in steps if (d := s[i]) is not None), 0.5))
        for i, name in enumerate(SIGNAL_STEPS)
    }


def held_by_running_task(paths: dict[str, SignalPath]) -> dict[str, float | int | None]:
    """How many signals landed while a workflow task of theirs ran (a victim's first:
    its message's local activity), and the p50 of how long they waited for it (ms)."""
    held = [h for path in paths.values() if (h := path.held()) is not None]
    return {
        "signals_held_by_running_task": len(held),
        "held_by_running_task_p50_ms": ms(pct(held, 0.5)),
    }
