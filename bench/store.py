"""Benchmark the projection's writes: `uv run python -m bench store`.

Every workflow writes the database through one activity, `record_changes`, and an
update that must answer with read-your-writes waits for it (a mark, an accept). This
times it in this process on the default database (a SQLite file in WAL mode, migrated),
for the change sets those paths write, against two same-run baselines:

- the floor of any write: one row committed with the standard library's `sqlite3`, on
  the same kind of file with the same pragmas (no ORM, no statement to build);
- the same write with its statements built again for every call, as every write did
  before they were built once and reused (`store/changes.py`, `store/actions.py`).
"""

from __future__ import annotations

import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from activities.store import StoreActivities
from bench.figures import figure, figure_rows, shown
from bench.report import git_state
from domain.actions import ActionChange, ActionName, ActionStatus
from domain.events import Event
from domain.projection import ChangeSet, ResourceSnapshot, StackSnapshot
from store import actions as store_actions
from store import changes as store_changes
from store.db import make_engine, migrate

WARMUP = 100
CALLS = 1_000
#: A walk's batch: resources that finished in one workflow task, each with its event.
BATCH = 100
AT = datetime(2026, 1, 1, tzinfo=UTC)


def _rebuild_statements() -> None:
    """Forget every built statement, so the next write builds its own again."""
    store_changes._newer_wins_statement.cache_clear()
    store_changes._insert_new_statement.cache_clear()
    store_actions._insert_statement.cache_clear()


def _resource(n: int, at: datetime) -> ResourceSnapshot:
    return ResourceSnapshot(
        stack_id="s1",
        name=f"server{n:03d}",
        project_id="p",
        resource_id=f"r{n}",
        type="OS::Nova::Server",
        physical_id=f"vm-{n}",
        action="CHECK",
        status="FAILED",
        status_reason="Marked unhealthy by the bench",
        attributes={"networks": {"private": ["10.0.0.1"]}},
        created_at=AT,
        updated_at=at,
    )


def _event(obj_id: str, at: datetime) -> Event:
    return Event(
        event_id=str(uuid.uuid4()),
        project_id="p",
        obj_type="resource",
        obj_id=obj_id,
        stack_id="s1",
        action="CHECK",
        status="FAILED",
        at=at,
    )


def mark_write(i: int) -> ChangeSet:
    """What a mark writes: its resource and one event."""
    at = AT + timedelta(seconds=i)
    return ChangeSet(resources=[_resource(0, at)], events=[_event("r0", at)])


def accept_write(i: int) -> ChangeSet:
    """What an operation's accept writes: the stack, its new action, one event."""
    at = AT + timedelta(seconds=i)
    action_id = str(uuid.uuid4())
    stack = StackSnapshot(
        stack_id="s1",
        project_id="p",
        name="bench",
        action="LOCK",
        status="IN_PROGRESS",
        status_reason="Stack LOCK started",
        template={"heat_template_version": "2021-04-16", "resources": {}},
        created_at=AT,
        updated_at=at,
    )
    action = ActionChange(
        action_id=action_id,
        project_id="p",
        name=ActionName.STACK_LOCK,
        target="s1",
        status=ActionStatus.RUNNING,
        inputs={},
        at=at,
    )
    return ChangeSet(stacks=[stack], actions=[action], events=[_event("s1", at)])


def batch_write(i: int) -> ChangeSet:
    """A walk's batch: `BATCH` resources and an event for each."""
    at = AT + timedelta(seconds=i)
    return ChangeSet(
        resources=[_resource(n, at) for n in range(BATCH)],
        events=[_event(f"r{n}", at) for n in range(BATCH)],
    )


def _p50_ms(prepared: Callable[[int], Callable[[], object]], calls: int) -> float:
    """p50 (ms) of the calls `prepared(i)` returns, after `WARMUP` untimed ones; only the
    returned call is timed, not what `prepared` does to make it."""
    samples = []
    for i in range(WARMUP + calls):
        call = prepared(i)
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples[WARMUP:]) * 1000


def _record_p50_ms(
    store: StoreActivities,
    changes: Callable[[int], ChangeSet],
    calls: int,
    *,
    offset: int,
    before: Callable[[], None] | None = None,
) -> float:
    """p50 of `record_changes` alone: change sets are built, and `before` runs, untimed.
    `offset` keeps each series' timestamps after the last one's (the newer row wins)."""

    def prepared(i: int) -> Callable[[], None]:
        change_set = changes(offset + i)
        if before is not None:
            before()
        return lambda: store.record_changes(change_set)

    return _p50_ms(prepared, calls)


def _raw_commit_p50_ms(path: Path) -> float:
    """One row committed by `sqlite3` alone, with Warden's pragmas (`store/db.py`)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE rows (n INTEGER PRIMARY KEY, at REAL)")
    sql = "INSERT OR REPLACE INTO rows VALUES (?, ?)"
    try:
        return _p50_ms(lambda n: lambda: db.execute(sql, (n, time.time())), CALLS)
    finally:
        db.close()


def _measure(var: Path) -> dict[str, Any]:
    engine = make_engine(f"sqlite:///{var / 'warden.db'}")
    migrate(engine)
    store = StoreActivities(engine)
    results: dict[str, Any] = {"raw_commit_p50_ms": _raw_commit_p50_ms(var / "raw.db")}
    cases: dict[str, tuple[Callable[[int], ChangeSet], int]] = {
        "mark": (mark_write, CALLS),
        "accept": (accept_write, CALLS),
        "batch": (batch_write, CALLS // 10),
    }
    offset = 0
    try:
        for name, (changes, calls) in cases.items():
            results[f"{name}_p50_ms"] = _record_p50_ms(store, changes, calls, offset=offset)
            offset += WARMUP + calls
            results[f"{name}_rebuilt_p50_ms"] = _record_p50_ms(
                store, changes, calls, offset=offset, before=_rebuild_statements
            )
            offset += WARMUP + calls
    finally:
        _rebuild_statements()
        engine.dispose()
    return results


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's rows: each write against the raw commit and against its old self."""
    raw = results["raw_commit_p50_ms"]
    rows = [figure("one row committed by sqlite3 alone, no SQLAlchemy, p50 (the floor)", raw, "ms")]
    labels = {
        "mark": "a mark's write (a resource, an event)",
        "accept": "an accept's write (a stack, an action, an event)",
        "batch": f"a walk's batch ({BATCH} resources, {BATCH} events)",
    }
    for name, label in labels.items():
        value = results[f"{name}_p50_ms"]
        rows.append(
            figure(
                f"{label}: record_changes p50",
                value,
                "ms",
                results[f"{name}_rebuilt_p50_ms"],
                "the same, its statements built for every call",
                headline=name == "mark",
            )
        )
        rows.append(
            figure(
                f"{label}: record_changes p50, against the floor",
                value,
                "ms",
                raw,
                "one row committed by sqlite3 alone, no SQLAlchemy",
            )
        )
    return rows


async def run() -> dict[str, Any]:
    """`python -m bench store`: measured in a fresh temporary directory (nothing here
    awaits; the benchmarks' runner awaits every benchmark)."""
    with tempfile.TemporaryDirectory(prefix="warden-bench-store-") as var:
        results = _measure(Path(var))
    return {
        "figures": figures(results),
        **results,
        "setup": {
            "database": "SQLite file, WAL, synchronous=NORMAL (Warden's default)",
            "calls": CALLS,
            "git": git_state(),
        },
    }


def table(results: dict[str, Any]) -> str:
    """The figures, then the raw p50s, as Markdown."""
    rows = figure_rows(results["figures"])
    keys = [k for k in results if k.endswith("_ms")]
    details = ["| detail | value |", "|---|---|"]
    details += [f"| {k} | {shown(results[k], 'ms')} |" for k in keys]
    return "\n".join([*rows, "", *details, "", f"setup: {results['setup']}"])
