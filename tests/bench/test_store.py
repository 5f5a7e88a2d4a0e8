"""`python -m bench store`: its baseline really rebuilds the statements, and its rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.store import StoreActivities
from bench import store as bench_store
from store.changes import _insert_new_statement, _newer_wins_statement
from store.db import make_engine, migrate


def test_the_rebuilt_baseline_builds_the_statements_of_every_write_again(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'warden.db'}")
    migrate(engine)
    store = StoreActivities(engine)

    def built_and_reused(minute: int) -> list[tuple[int, int]]:
        store.record_changes(bench_store.mark_write(minute))
        infos = (_newer_wins_statement.cache_info(), _insert_new_statement.cache_info())
        return [(info.misses, info.hits) for info in infos]

    try:
        bench_store._rebuild_statements()
        first = built_and_reused(1)
        second = built_and_reused(2)
        bench_store._rebuild_statements()
        rebuilt = built_and_reused(3)
    finally:
        engine.dispose()
    assert first == [(1, 0), (1, 0)]  # one upsert and one insert built
    assert second == [(1, 1), (1, 1)]  # and then reused
    assert rebuilt == first  # the baseline builds them again


def test_each_write_is_held_to_its_rebuilt_self_and_to_the_raw_commit() -> None:
    results = {"raw_commit_p50_ms": 0.01}
    for name in ("mark", "accept", "batch"):
        results |= {f"{name}_p50_ms": 0.4, f"{name}_rebuilt_p50_ms": 0.8}
    rows = bench_store.figures(results)
    against_old = [r for r in rows if r["baseline_label"].startswith("the same")]
    assert [r["ratio"] for r in against_old] == [0.5, 0.5, 0.5]
    assert [r["measurement"] for r in rows if r["headline"]] == [
        "a mark's write (a resource, an event): record_changes p50"
    ]
    against_floor = [r for r in rows if r["measurement"].endswith("against the floor")]
    assert [r["baseline"] for r in against_floor] == [0.01, 0.01, 0.01]
    assert [r["ratio"] for r in against_floor] == pytest.approx([40.0, 40.0, 40.0])
