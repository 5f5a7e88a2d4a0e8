"""Action links only grow: several writers (scale-in shards) add to one parent."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from domain.actions import ActionChange, ActionName, ActionStatus
from store.actions import ActionRecord, apply_action_change
from store.db import make_engine, migrate, session_scope

AT = datetime(2026, 11, 21, tzinfo=UTC)


def change(depended_by: list[str]) -> ActionChange:
    return ActionChange(
        action_id="parent",
        project_id="p",
        name=ActionName.CLUSTER_SCALE_IN,
        target="c",
        status=ActionStatus.WAITING,
        depended_by=depended_by,
        at=AT,
    )


def test_each_shard_adds_its_tokens_to_the_parent(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'a.db'}")
    migrate(engine)
    for tokens in (["t1", "t2"], ["t3"], ["t2", "t4"]):
        with session_scope(engine) as session:
            apply_action_change(session, change(tokens))
    with session_scope(engine) as session:
        record = session.get(ActionRecord, "parent")
        assert record is not None and record.depended_by == ["t1", "t2", "t3", "t4"]
    engine.dispose()
