"""The scale-in benchmark's readings of victims' histories, and its figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from bench.scale_in.figures import unloaded_rows
from bench.scale_in.load_figures import busy_retries
from bench.scale_in.receiver import Completion
from bench.scale_in.signal_paths import (
    SIGNAL_STEPS,
    held_by_running_task,
    signal_path,
    signal_steps_p50_ms,
)
from bench.scale_in.workflow_histories import save_timelines, timelines_wanted, victim_timelines


def _event(kind: EventType.ValueType, at: float) -> HistoryEvent:
    event = HistoryEvent(event_type=kind)
    event.event_time.FromNanoseconds(int(at * 1e9))
    return event


def _numbered(*events: HistoryEvent) -> list[HistoryEvent]:
    for number, event in enumerate(events, start=1):
        event.event_id = number
    return list(events)


def test_a_victim_signal_path_runs_from_its_signal_to_the_delete_it_scheduled() -> None:
    kinds = EventType
    history = _numbered(
        _event(kinds.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, 1.0),
        _event(kinds.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, 1.1),  # 2: announce
        _event(kinds.EVENT_TYPE_ACTIVITY_TASK_STARTED, 1.2),
        _event(kinds.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, 5.000),  # 4
        _event(kinds.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 5.001),
        _event(kinds.EVENT_TYPE_WORKFLOW_TASK_STARTED, 5.004),  # 6
        _event(kinds.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, 5.010),  # 7
        _event(kinds.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, 5.010),  # 8: the delete
        _event(kinds.EVENT_TYPE_ACTIVITY_TASK_STARTED, 5.030),
        _event(kinds.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, 6.0),  # a repeat: ignored
    )
    history[2].activity_task_started_event_attributes.scheduled_event_id = 2
    history[6].workflow_task_completed_event_attributes.started_event_id = 6
    history[8].activity_task_started_event_attributes.scheduled_event_id = 8
    path = signal_path(history)
    assert path is not None
    steps = signal_steps_p50_ms({"victim": path}, {"victim": 5.035})
    assert list(steps) == list(SIGNAL_STEPS)
    # The announce activity, started before the signal, is not the delete.
    assert list(steps.values()) == pytest.approx([4.0, 6.0, 20.0, 5.0], abs=0.01)
    assert signal_steps_p50_ms({"victim": path}, {})[SIGNAL_STEPS[-1]] is None
    assert signal_path(history[:3]) is None  # never signalled
    assert path.held() is None  # signalled long after its first task ended


def test_a_signal_that_landed_during_the_first_task_is_counted_as_held() -> None:
    # The app answered while the victim's first task (its message's local activity)
    # still ran: Temporal wrote the signal after that task, with the time it arrived.
    kinds = EventType
    history = _numbered(
        _event(kinds.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, 1.000),
        _event(kinds.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 1.000),
        _event(kinds.EVENT_TYPE_WORKFLOW_TASK_STARTED, 1.001),  # 3
        _event(kinds.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, 1.050),  # 4
        _event(kinds.EVENT_TYPE_MARKER_RECORDED, 1.050),
        _event(kinds.EVENT_TYPE_TIMER_STARTED, 1.050),
        _event(kinds.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, 1.020),  # 7
    )
    history[3].workflow_task_completed_event_attributes.started_event_id = 3
    path = signal_path(history)
    assert path is not None
    assert path.held() == pytest.approx(0.030)
    counted = held_by_running_task({"held": path})
    assert counted["signals_held_by_running_task"] == 1
    assert counted["held_by_running_task_p50_ms"] == pytest.approx(30.0)
    assert held_by_running_task({}) == {
        "signals_held_by_running_task": 0,
        "held_by_running_task_p50_ms": None,
    }


def test_victim_timelines_put_each_tokens_history_beside_the_apps_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = {"node-delete:t1": [("WORKFLOW_EXECUTION_STARTED", 10.0)]}
    messages = {
        "t1": (10.05, {"resource_id": "s1"}),
        "t2": (10.2, {"resource_id": "s2"}),  # not completed, never deleted
    }
    completions = {"t1": Completion(sent=10.06, returned=10.1, status="202", attempts=1)}
    deletes = {"s1": (10.2, 10.21)}
    rows = victim_timelines(events, messages, completions, deletes)
    assert rows["t1"] == {
        "events": [("WORKFLOW_EXECUTION_STARTED", 10.0)],
        "received": 10.05,
        "sent": 10.06,
        "returned": 10.1,
        "attempts": 1,
        "deleted": 10.2,
    }
    assert rows["t2"]["events"] == [] and rows["t2"]["sent"] is None
    assert rows["t2"]["deleted"] is None

    monkeypatch.delenv("BENCH_TIMELINES", raising=False)
    assert timelines_wanted() is None
    monkeypatch.setenv("BENCH_TIMELINES", str(tmp_path / "tl"))
    assert timelines_wanted() == {}
    path = save_timelines("1000", rows)
    assert path == tmp_path / "tl-1000.json"
    assert json.loads(path.read_text())["t1"]["events"] == [["WORKFLOW_EXECUTION_STARTED", 10.0]]


def test_busy_workflow_retries_are_summed_over_task_types_and_absent_from_old_runs() -> None:
    work = {
        "UpdateWorkflowExecution calls": 10.0,
        "UpdateWorkflowExecution s": 0.5,
        "busy-workflow retries TransferActiveTaskStartChildExecution": 7.0,
        "busy-workflow retries TransferActiveTaskWorkflowTask": 2.0,
    }
    assert busy_retries(work) == 9.0
    # A run that counted store calls but saw no retry: zero, not unknown.
    assert busy_retries({"UpdateWorkflowExecution calls": 10.0}) == 0
    # A run without the server's metrics at all: unknown.
    assert busy_retries({}) is None


def test_one_victim_at_a_time_is_held_to_bare_calls_timed_in_its_own_rounds() -> None:
    unloaded = {
        "rounds": 15,
        "complete_call_p50_ms": 15.0,
        "complete_to_delete_p50_ms": 33.0,
        "bare_update_p50_ms": 12.0,
        "bare_victim_signal_p50_ms": 11.0,
        "bare_victim_to_activity_p50_ms": 27.0,
        "api_get_action_p50_ms": 2.0,
    }
    rows = {r["measurement"]: r for r in unloaded_rows(unloaded, back_to_back_update_p50=10.0)}
    goal = rows["1 victim at a time (x15): complete_lifecycle POST p50"]
    assert (goal["baseline"], goal["goal"], goal["met"]) == (12.0, "≤ 1.3x bare update", True)
    beside = rows[
        "1 victim at a time (x15): complete_lifecycle POST p50, against a back-to-back bare update"
    ]
    assert beside["baseline"] == 10.0 and beside["ratio"] == 1.5
    floor = rows["1 victim at a time (x15): complete_lifecycle POST p50, against its floor"]
    assert floor["baseline"] == 13.0  # the bare victim's signal call + the API's GET
    delete = rows["1 victim at a time (x15): complete_lifecycle → delete p50, against its floor"]
    assert delete["baseline"] == 29.0 and delete["ratio"] == 33.0 / 29.0
    slow = unloaded_rows({**unloaded, "complete_call_p50_ms": 16.0}, 10.0)
    assert [r["met"] for r in slow if r["goal"]] == [False]
