"""The histories of a scale-in's workflows: their lengths, what is in them, and each
victim's events beside the app's own times (`BENCH_TIMELINES`)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType, TimeoutType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from bench.histories import event_seconds
from bench.scale_in.receiver import Completion
from bench.scale_in.signal_paths import SignalPath, signal_path

HISTORY_FETCH_CONCURRENCY = 16
#: A workflow's events as `(type, server time)`, for `save_timelines`.
Timeline = list[tuple[str, float]]


@dataclass
class _Tally:
    """What `history_lengths` gathers from each history besides its length; None:
    not gathered."""

    types: Counter[str] | None = None
    child_starts: list[float] | None = None
    task_problems: Counter[str] | None = None
    paths: dict[str, SignalPath] | None = None
    sizes: dict[str, int] | None = None
    type_bytes: Counter[str] | None = None
    timelines: dict[str, Timeline] | None = None

    def add(self, wid: str, events: Sequence[HistoryEvent]) -> None:
        """Tally one workflow's history."""
        if self.types is not None:
            self.types.update(EventType.Name(e.event_type) for e in events)
        if self.sizes is not None:
            self.sizes[wid] = sum(e.ByteSize() for e in events)
        if self.type_bytes is not None:
            for e in events:
                self.type_bytes[EventType.Name(e.event_type)] += e.ByteSize()
        if self.task_problems is not None:
            self._problems(wid, events, self.task_problems)
        if self.timelines is not None:
            self.timelines[wid] = [
                (EventType.Name(e.event_type).removeprefix("EVENT_TYPE_"), event_seconds(e))
                for e in events
            ]
        if self.paths is not None and (path := signal_path(events)) is not None:
            self.paths[wid] = path
        if self.child_starts is not None:
            self.child_starts.extend(
                event_seconds(e)
                for e in events
                if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED
            )

    @staticmethod
    def _problems(wid: str, events: Sequence[HistoryEvent], problems: Counter[str]) -> None:
        """Workflow task failures and timeouts, by workflow kind and cause."""
        kind = wid.partition(":")[0] + (":shard" if ":shard-" in wid else "")
        for e in events:
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
                cause = e.workflow_task_failed_event_attributes.cause
                problems[f"{kind} failed: {WorkflowTaskFailedCause.Name(cause)}"] += 1
            elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
                timeout = e.workflow_task_timed_out_event_attributes.timeout_type
                problems[f"{kind} timed out: {TimeoutType.Name(timeout)}"] += 1


async def history_lengths(
    client: Client,
    workflow_ids: list[str],
    types: Counter[str] | None = None,
    child_starts: list[float] | None = None,
    task_problems: Counter[str] | None = None,
    paths: dict[str, SignalPath] | None = None,
    sizes: dict[str, int] | None = None,
    type_bytes: Counter[str] | None = None,
    timelines: dict[str, Timeline] | None = None,
) -> dict[str, int]:
    """Events in each history; optionally tallies event types, child start times,
    workflow task failures/timeouts (by workflow kind and cause), each signalled
    workflow's `SignalPath`, each history's size in bytes (its events, serialized)
    and those bytes by event type."""
    tally = _Tally(types, child_starts, task_problems, paths, sizes, type_bytes, timelines)
    gate = asyncio.Semaphore(HISTORY_FETCH_CONCURRENCY)

    async def one(wid: str) -> tuple[str, int]:
        async with gate:
            history = await client.get_workflow_handle(wid).fetch_history()
        tally.add(wid, history.events)
        return wid, len(history.events)

    return dict(await asyncio.gather(*(one(w) for w in workflow_ids)))


def timelines_wanted() -> dict[str, Timeline] | None:
    """An empty map for `history_lengths` to fill when `BENCH_TIMELINES` is set."""
    return {} if os.environ.get("BENCH_TIMELINES") else None


def save_timelines(name: str, rows: dict[str, dict[str, Any]]) -> Path:
    """`BENCH_TIMELINES=prefix`: write each victim's row (its history's events as
    `[type, server time]` and the app's own times, wall clock) to `prefix-{name}.json`,
    to follow single victims beyond the p50s (`SignalPath` is their summary)."""
    path = Path(f"{os.environ['BENCH_TIMELINES']}-{name}.json")
    path.write_text(json.dumps(rows))
    return path


def victim_timelines(
    timelines: dict[str, Timeline],
    messages: dict[str, tuple[float, dict[str, Any]]],
    completions: dict[str, Completion],
    deletes: dict[str, tuple[float, float]],
) -> dict[str, dict[str, Any]]:
    """Per lifecycle token: its victim's events, when the app got the message, sent and
    got back complete_lifecycle (attempts made), and simcloud's DELETE."""
    rows = {}
    for token, (received, message) in messages.items():
        done = completions.get(token)
        deleted = deletes.get(str(message["resource_id"]))
        rows[token] = {
            "events": timelines.get(f"node-delete:{token}", []),
            "received": received,
            "sent": done.sent if done else None,
            "returned": done.returned if done else None,
            "attempts": done.attempts if done else None,
            "deleted": deleted[0] if deleted else None,
        }
    return rows


async def listed(client: Client, query: str) -> list[str]:
    """Ids of the workflows a visibility query lists."""
    return [w.id async for w in client.list_workflows(query)]


async def quiet_history(client: Client, workflow_id: str) -> tuple[str, int]:
    """Run id and history length once the history stops growing (≤ 10 s)."""
    handle = client.get_workflow_handle(workflow_id)
    last = -1
    deadline = time.monotonic() + 10
    while True:
        desc = await handle.describe()
        if desc.history_length == last or time.monotonic() > deadline:
            return desc.run_id, desc.history_length
        last = desc.history_length
        await asyncio.sleep(0.5)
