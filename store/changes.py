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
from store.events import add_event
from store.stacks import StackRecord, StackResourceRecord


def apply_changes(session: Session, changes: ChangeSet) -> None:
    """Apply every write of the change set; the caller commits once."""
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
