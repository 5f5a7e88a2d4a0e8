"""The stacks benchmark: round trips (Warden's calls and their baselines, timed alike)
and what a create's histories tell."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from bench.stacks.creates import task_runs
from bench.stacks.figures import figures
from bench.stacks.round_trips import interleaved
from bench.stacks.settings import CHAIN


def test_each_kind_runs_its_calls_in_rounds_each_kind_leading_in_turn() -> None:
    order: list[str] = []

    def kind(name: str, took: float) -> Any:
        async def call() -> float:
            order.append(name)
            return took

        return call

    kinds = {"mark": kind("mark", 0.02), "update": kind("update", 0.01), "get": kind("get", 0.003)}
    samples = asyncio.run(interleaved(kinds, rounds=4, per_round=2))
    assert samples == {"mark": [0.02] * 8, "update": [0.01] * 8, "get": [0.003] * 8}
    rounds = [order[i : i + 6] for i in range(0, len(order), 6)]
    assert rounds == [
        ["mark", "mark", "update", "update", "get", "get"],
        ["update", "update", "get", "get", "mark", "mark"],
        ["get", "get", "mark", "mark", "update", "update"],
        ["mark", "mark", "update", "update", "get", "get"],
    ]


def _results(mark_p99: float, lock_p99: float) -> dict[str, Any]:
    echo = {
        "update_p50_ms": 8.0,
        "update_p99_ms": 20.0,
        "written_update_p50_ms": 14.0,
        "written_update_p99_ms": 28.0,
        "paced_update_p50_ms": 14.0,
        "paced_update_p99_ms": 21.0,
        "paced_written_update_p50_ms": 19.0,
        "paced_written_update_p99_ms": 30.0,
    }
    trips = {
        "mark_p50_ms": 20.0,
        "mark_p99_ms": mark_p99,
        "lock_p50_ms": 28.0,
        "lock_p99_ms": lock_p99,
        "unlock_p50_ms": 27.0,
        "get_p50_ms": 3.0,
        "get_p99_ms": 6.0,
        "paced_get_p50_ms": 5.0,
        "paced_get_p99_ms": 8.0,
        "mark_calls": 300,
        "lock_calls": 200,
    }
    creates = {"1 independent #1": {"wall_s": 0.7}, f"{CHAIN}-deep chain": {"wall_s": 7.0}}
    return {"creates": creates, "echo": echo, "round_trips": trips}


def test_a_round_trips_p99_is_held_to_bare_and_beside_its_floors_p99() -> None:
    rows = {r["measurement"]: r for r in figures(_results(mark_p99=34.0, lock_p99=45.0))}
    mark = rows["mark-unhealthy PATCH round trip p99"]
    assert (mark["baseline"], mark["goal"], mark["met"]) == (20.0, "≤ 2x bare", True)
    mark_floor = rows["mark-unhealthy PATCH round trip p99, against its floor"]
    assert mark_floor["baseline"] == 34.0  # the written update's p99 + the GET's
    lock = rows["lock POST round trip p99"]
    assert (lock["baseline"], lock["met"]) == (21.0, False)  # 45 > 2 x the paced 21
    lock_floor = rows["lock POST round trip p99, against its floor"]
    assert lock_floor["baseline"] == 38.0  # both paced: 30 + 8
    slow = figures(_results(mark_p99=41.0, lock_p99=42.0))
    met = {r["measurement"]: r["met"] for r in slow if r["goal"]}
    assert met["mark-unhealthy PATCH round trip p99"] is False
    assert met["lock POST round trip p99"] is True


def test_a_workflow_tasks_run_is_from_its_start_to_its_completion() -> None:
    started, completed = HistoryEvent(event_id=3), HistoryEvent(event_id=4)
    started.event_type = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
    started.event_time.FromNanoseconds(10_000_000_000)
    completed.event_type = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    completed.event_time.FromNanoseconds(10_300_000_000)
    completed.workflow_task_completed_event_attributes.started_event_id = 3
    assert task_runs([started, completed]) == pytest.approx([0.3])
    assert task_runs([started]) == []  # a task still running (or failed) has no run
