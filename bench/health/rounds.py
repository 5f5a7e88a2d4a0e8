"""A loop's rounds as its history shows them: when each round's activity was scheduled,
started and completed, and how much history each round wrote."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from temporalio.client import WorkflowHistory

from bench.health.settings import COMPLETED, SCHEDULED, STARTED
from bench.histories import event_seconds
from bench.measure import ms, pct


@dataclass
class Round:
    """One activity of a loop, as its history shows it."""

    scheduled: float
    started: float | None = None
    completed: float | None = None
    #: Events and bytes of history since the previous round's activity was scheduled.
    events_since_previous: int | None = None
    bytes_since_previous: int | None = None


def rounds_of(history: WorkflowHistory, activity_name: str) -> list[Round]:
    """Every `activity_name` activity of one history, in order."""
    rounds: dict[int, Round] = {}
    previous_index: int | None = None
    sizes = [event.ByteSize() for event in history.events]
    for index, event in enumerate(history.events):
        if event.event_type == SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name != activity_name:
                continue
            found = Round(scheduled=event_seconds(event))
            if previous_index is not None:
                found.events_since_previous = index - previous_index
                found.bytes_since_previous = sum(sizes[previous_index:index])
            previous_index = index
            rounds[event.event_id] = found
        elif event.event_type == STARTED:
            started = event.activity_task_started_event_attributes.scheduled_event_id
            if started in rounds:
                rounds[started].started = event_seconds(event)
        elif event.event_type == COMPLETED:
            done = event.activity_task_completed_event_attributes.scheduled_event_id
            if done in rounds:
                rounds[done].completed = event_seconds(event)
    return list(rounds.values())


@dataclass
class RoundStats:
    """Rounds of one or more loops that started inside a window."""

    rounds: int
    loops: int
    duration: list[float]
    queued: list[float]
    period: list[float]
    events: list[int]
    bytes: list[int]

    def add(self, before: Round | None, this: Round) -> None:
        """One round (`before`: the loop's previous one, if any)."""
        assert this.completed is not None
        self.rounds += 1
        self.duration.append(this.completed - this.scheduled)
        if this.started is not None:
            self.queued.append(this.started - this.scheduled)
        if before is not None:
            self.period.append(this.scheduled - before.scheduled)
        if this.events_since_previous is not None:
            self.events.append(this.events_since_previous)
        if this.bytes_since_previous is not None:
            self.bytes.append(this.bytes_since_previous)

    def summary(self, prefix: str = "") -> dict[str, Any]:
        """JSON-able percentiles (ms for durations, s for periods)."""
        return {
            f"{prefix}rounds": self.rounds,
            f"{prefix}loops": self.loops,
            f"{prefix}round_p50_ms": ms(pct(self.duration, 0.5)),
            f"{prefix}round_p99_ms": ms(pct(self.duration, 0.99)),
            f"{prefix}round_max_ms": ms(max(self.duration, default=None)),
            f"{prefix}schedule_to_start_p50_ms": ms(pct(self.queued, 0.5)),
            f"{prefix}schedule_to_start_p99_ms": ms(pct(self.queued, 0.99)),
            f"{prefix}period_p50_s": pct(self.period, 0.5),
            f"{prefix}period_p99_s": pct(self.period, 0.99),
            f"{prefix}period_max_s": max(self.period, default=None),
            f"{prefix}events_per_round": pct(self.events, 0.5),
            f"{prefix}events_per_round_max": max(self.events, default=None),
            f"{prefix}bytes_per_round": pct(self.bytes, 0.5),
            f"{prefix}bytes_per_round_max": max(self.bytes, default=None),
        }


def round_stats(loops: Iterable[list[Round]], start: float, end: float) -> RoundStats:
    """The rounds of `loops` scheduled between `start` and `end` that completed."""
    stats = RoundStats(0, 0, [], [], [], [], [])
    for rounds in loops:
        stats.loops += 1
        for before, this in zip([None, *rounds[:-1]], rounds, strict=True):
            if start <= this.scheduled <= end and this.completed is not None:
                stats.add(before, this)
    return stats
