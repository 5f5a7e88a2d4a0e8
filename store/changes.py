"""Apply a ChangeSet: the only way workflows write the database."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlmodel import Session, SQLModel, delete

from domain.projection import (
    ChangeSet,
    ClusterSnapshot,
    NodeSnapshot,
    StackSnapshot,
)
from store.actions import apply_action_change
from store.clusters import ClusterRecord, NodeRecord
from store.db import insert_for, lock_for_write
from store.events import EventRecord, event_row
from store.stacks import StackRecord, StackResourceRecord


def apply_changes(session: Session, changes: ChangeSet) -> None:
    """Apply every write of the change set; the caller commits once.

    Snapshots and events are written one statement per table (an upsert whose newer
    row wins, an insert that skips known event ids), so a step that projects 100
    resources costs a few statements, not 200 ORM round trips (docs/performance.md). Clusters and
    actions are read, merged and written back, under `lock_for_write`.
    """
    lock_for_write(session, _row_keys(changes))
    for snapshot in changes.clusters:
        _upsert_cluster(session, snapshot)
    _newer_wins(session, NodeRecord, [_node_row(n) for n in changes.nodes])
    _newer_wins(session, StackRecord, [_stack_row(s) for s in changes.stacks])
    _newer_wins(session, StackResourceRecord, [r.model_dump() for r in changes.resources])
    for action in changes.actions:
        apply_action_change(session, action)
    _insert_new(session, EventRecord, [event_row(e) for e in changes.events])
    if changes.deleted_nodes:
        session.exec(delete(NodeRecord).where(NodeRecord.id.in_(changes.deleted_nodes)))  # type: ignore[attr-defined]
    if changes.deleted_clusters:
        ids = changes.deleted_clusters
        session.exec(delete(NodeRecord).where(NodeRecord.cluster_id.in_(ids)))  # type: ignore[attr-defined]
        session.exec(delete(ClusterRecord).where(ClusterRecord.id.in_(ids)))  # type: ignore[attr-defined]
    for key in changes.deleted_resources:
        row = session.get(StackResourceRecord, (key.stack_id, key.name))
        if row is not None:
            session.delete(row)
    if changes.deleted_stacks:
        ids = changes.deleted_stacks
        session.exec(delete(StackResourceRecord).where(StackResourceRecord.stack_id.in_(ids)))  # type: ignore[attr-defined]
        session.exec(delete(StackRecord).where(StackRecord.id.in_(ids)))  # type: ignore[attr-defined]


def _row_keys(changes: ChangeSet) -> list[str]:
    """The rows the change set reads before it writes them, as `lock_for_write` keys
    (the single-statement upserts and inserts need none: the database orders them)."""
    return [
        *(f"clusters:{c.cluster_id}" for c in changes.clusters),
        *(f"actions:{a.action_id}" for a in changes.actions),
        *(f"resources:{k.stack_id}:{k.name}" for k in changes.deleted_resources),
    ]


def _newer_wins(session: Session, model: type[SQLModel], rows: Sequence[dict[str, Any]]) -> None:
    """Insert the rows, or overwrite the stored ones not newer than them (`updated_at`):
    a late retry of an older snapshot must not win. One statement for all rows."""
    if not rows:
        return
    table: Any = model.__table__  # type: ignore[attr-defined]
    key = [column.name for column in table.primary_key.columns]
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:  # one row per key: a statement may not touch a row twice
        seen = latest.get(tuple(row[k] for k in key))
        if seen is None or seen["updated_at"] <= row["updated_at"]:
            latest[tuple(row[k] for k in key)] = row
    statement = _newer_wins_statement(_dialect(session), table, tuple(rows[0]))
    session.execute(statement, list(latest.values()))


def _insert_new(session: Session, model: type[SQLModel], rows: Sequence[dict[str, Any]]) -> None:
    """Insert the rows whose `id` is not stored yet (retries are harmless)."""
    if not rows:
        return
    table: Any = model.__table__  # type: ignore[attr-defined]
    session.execute(_insert_new_statement(_dialect(session), table), list(rows))


# The statements are built once per dialect, table and column set, then reused: a
# statement is immutable, and building an upsert (its `excluded` alias, one proxy per
# column) cost more CPU than executing it, about half of a one-resource write.


def _dialect(session: Session) -> str:
    return session.connection().dialect.name


@functools.cache
def _newer_wins_statement(dialect: str, table: Table, columns: tuple[str, ...]) -> Any:
    """`_newer_wins`' upsert of `columns` into `table`."""
    key = [column.name for column in table.primary_key.columns]
    statement = insert_for(dialect)(table)
    return statement.on_conflict_do_update(
        index_elements=key,
        set_={name: statement.excluded[name] for name in columns if name not in key},
        where=table.c.updated_at <= statement.excluded.updated_at,
    )


@functools.cache
def _insert_new_statement(dialect: str, table: Table) -> Any:
    """`_insert_new`'s insert into `table` that skips known ids."""
    return insert_for(dialect)(table).on_conflict_do_nothing(index_elements=["id"])


def _node_row(snapshot: NodeSnapshot) -> dict[str, Any]:
    values = snapshot.model_dump(exclude={"node_id", "metadata"})
    return {"id": snapshot.node_id, "metadata_": snapshot.metadata, **values}


def _stack_row(snapshot: StackSnapshot) -> dict[str, Any]:
    return {"id": snapshot.stack_id, **snapshot.model_dump(exclude={"stack_id"})}


def _upsert_cluster(session: Session, snapshot: ClusterSnapshot) -> None:
    record = session.get(ClusterRecord, snapshot.cluster_id)
    if record is not None and record.updated_at > snapshot.updated_at:
        return  # a late retry of an older snapshot must not win
    values = snapshot.model_dump(exclude={"cluster_id", "metadata"})
    if record is None:
        record = ClusterRecord(id=snapshot.cluster_id, **values)
    else:
        for key, value in values.items():
            setattr(record, key, value)
    record.metadata_ = snapshot.metadata
    session.add(record)
