"""Reading Temporal histories: where an update's round trip went (`bench/histories.py`)."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from bench.histories import task_split


def _event(kind: EventType.ValueType, at: float) -> HistoryEvent:
    event = HistoryEvent(event_type=kind)
    event.event_time.FromNanoseconds(int(at * 1e9))
    return event


def test_a_round_trip_is_split_by_the_workflow_task_that_answered_it() -> None:
    events = [
        _event(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 10.002),
        _event(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, 10.003),
        _event(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, 10.007),
        _event(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 20.001),
        _event(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, 20.002),
        _event(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, 20.004),
    ]
    # The second call's task is the second one; a call no task answered is left out.
    split = task_split(events, [(10.0, 10.012), (20.0, 20.006), (30.0, 30.01)])
    assert split == pytest.approx(
        {
            "sent → task scheduled": 2.0,  # p50 of 2 samples: the larger
            "task queued": 1.0,
            "task on the worker": 4.0,
            "task done → answer": 5.0,
        },
        abs=0.01,
    )
