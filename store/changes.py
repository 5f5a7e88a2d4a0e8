"""Apply a ChangeSet: the only way workflows write the database."""

from __future__ import annotations

from sqlmodel import Session, delete

from domain.projection import (
    ChangeSet,
    ClusterSnapshot,
    NodeSnapshot,
    ResourceSnapshot,
    StackSnapshot,
)
from store.actions import apply_action_change
from store.clusters import ClusterRecord, NodeRecord
from store.db import lock_for_write
from store.events import add_event
from store.stacks import StackRecord, StackResourceRecord


def apply_changes(session: Session, changes: ChangeSet) -> None:
    """Apply every write of the change set; the caller commits once."""
    lock_for_write(session, _row_keys(changes))
    for snapshot in changes.clusters:
        _upsert_cluster(session, snapshot)
    for node in changes.nodes:
        _upsert_node(session, node)
    for stack in changes.stacks:
        _upsert_stack(session, stack)
    for resource in changes.resources:
        _upsert_resource(session, resource)
    for action in changes.actions:
        apply_action_change(session, action)
    for event in changes.events:
        add_event(session, event)
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
    """The rows the change set reads before it writes them, as `lock_for_write` keys."""
    return [
        *(f"clusters:{c.cluster_id}" for c in changes.clusters),
        *(f"nodes:{n.node_id}" for n in changes.nodes),
        *(f"stacks:{s.stack_id}" for s in changes.stacks),
        *(f"resources:{r.stack_id}:{r.name}" for r in changes.resources),
        *(f"actions:{a.action_id}" for a in changes.actions),
        *(f"events:{e.event_id}" for e in changes.events),
        *(f"resources:{k.stack_id}:{k.name}" for k in changes.deleted_resources),
    ]


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


def _upsert_node(session: Session, snapshot: NodeSnapshot) -> None:
    record = session.get(NodeRecord, snapshot.node_id)
    if record is not None and record.updated_at > snapshot.updated_at:
        return
    values = snapshot.model_dump(exclude={"node_id"})
    if record is None:
        record = NodeRecord(id=snapshot.node_id, **values)
    else:
        for key, value in values.items():
            setattr(record, key, value)
    session.add(record)


def _upsert_stack(session: Session, snapshot: StackSnapshot) -> None:
    record = session.get(StackRecord, snapshot.stack_id)
    if record is not None and record.updated_at > snapshot.updated_at:
        return
    values = snapshot.model_dump(exclude={"stack_id"})
    if record is None:
        record = StackRecord(id=snapshot.stack_id, **values)
    else:
        for key, value in values.items():
            setattr(record, key, value)
    session.add(record)


def _upsert_resource(session: Session, snapshot: ResourceSnapshot) -> None:
    record = session.get(StackResourceRecord, (snapshot.stack_id, snapshot.name))
    if record is not None and record.updated_at > snapshot.updated_at:
        return
    values = snapshot.model_dump()
    if record is None:
        record = StackResourceRecord(**values)
    else:
        for key, value in values.items():
            setattr(record, key, value)
    session.add(record)
