"""Reading Temporal histories: when an event happened, and where an update's time went."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from bench.measure import ms, pct

#: The parts of an update's round trip that a workflow's history shows (task_split).
SPLIT_PARTS = ("sent → task scheduled", "task queued", "task on the worker", "task done → answer")


def event_seconds(event: HistoryEvent) -> float:
    """When the server wrote an event (Unix seconds, the server's clock)."""
    return event.event_time.seconds + event.event_time.nanos / 1e9


def _workflow_tasks(events: Sequence[HistoryEvent]) -> list[tuple[float, float, float]]:
    """Each completed workflow task: when it was scheduled, started and completed."""
    tasks: list[tuple[float, float, float]] = []
    scheduled = started = 0.0
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            scheduled = event_seconds(event)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            started = event_seconds(event)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and scheduled:
            tasks.append((scheduled, started, event_seconds(event)))
    return tasks


def task_split(
    events: Sequence[HistoryEvent], windows: Sequence[tuple[float, float]]
) -> dict[str, float | None]:
    """Where calls to a workflow went, p50 ms per part: each call (its wall-clock window)
    is matched to the first workflow task scheduled after it was sent, whose scheduled,
    started and completed times are in the history (one machine, one clock)."""
    tasks = _workflow_tasks(events)
    parts: list[list[float]] = [[] for _ in SPLIT_PARTS]
    for sent, answered in windows:
        task = next((t for t in tasks if t[0] >= sent - 0.001), None)
        if task is None or task[2] > answered:
            continue
        for samples, value in zip(
            parts,
            (task[0] - sent, task[1] - task[0], task[2] - task[1], answered - task[2]),
            strict=True,
        ):
            samples.append(value)
    return {name: ms(pct(samples, 0.5)) for name, samples in zip(SPLIT_PARTS, parts, strict=True)}
