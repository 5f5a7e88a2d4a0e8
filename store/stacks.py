"""Stack and stack-resource records (projections written by activities) and queries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from store.columns import json_column, utc_column


class StackRecord(SQLModel, table=True):
    """A stack as last projected by its entity workflow."""

    __tablename__ = "stacks"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    name: str = Field(index=True, max_length=255)
    parent_id: str | None = Field(default=None, index=True, max_length=64)
    parent_resource: str | None = Field(default=None, max_length=255)
    action: str = Field(max_length=16)
    status: str = Field(max_length=16)
    status_reason: str = Field(default="")
    template: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    parameters: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    outputs: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    #: Why an output has no value, by key (Heat's `output_error`).
    output_errors: dict[str, str] = Field(default_factory=dict, sa_column=json_column())
    lock: dict[str, Any] | None = Field(default=None, sa_column=json_column(nullable=True))
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: list[str] | None = Field(default=None, sa_column=json_column(nullable=True))
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime = Field(sa_column=utc_column())


class StackResourceRecord(SQLModel, table=True):
    """One resource of a stack; the row is keyed by stack and logical name."""

    __tablename__ = "stack_resources"

    stack_id: str = Field(primary_key=True, max_length=64)
    name: str = Field(primary_key=True, max_length=255)
    project_id: str = Field(index=True, max_length=64)
    resource_id: str = Field(max_length=64)
    type: str = Field(max_length=255)
    physical_id: str | None = Field(default=None, index=True, max_length=255)
    action: str = Field(max_length=16)
    status: str = Field(max_length=16)
    status_reason: str = Field(default="")
    required_by: list[str] = Field(default_factory=list, sa_column=json_column())
    attributes: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    #: Heat's resource metadata (a wait condition handle's signals).
    rsrc_metadata: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    created_at: datetime = Field(sa_column=utc_column())
    updated_at: datetime = Field(sa_column=utc_column())


def get_stack(session: Session, project_id: str, stack_id: str) -> StackRecord | None:
    """The project's stack with this id."""
    record = session.get(StackRecord, stack_id)
    return record if record is not None and record.project_id == project_id else None


def find_stacks_named(session: Session, project_id: str, name: str) -> list[StackRecord]:
    """The project's stacks with this name (top-level names are unique; nested may repeat)."""
    query = select(StackRecord).where(
        StackRecord.project_id == project_id, StackRecord.name == name
    )
    return list(session.exec(query.order_by(col(StackRecord.created_at))))


def list_stacks(
    session: Session, project_id: str, *, show_nested: bool = False, limit: int = 1000
) -> list[StackRecord]:
    """Stacks of a project, oldest first; nested stacks only when asked."""
    query = select(StackRecord).where(StackRecord.project_id == project_id)
    if not show_nested:
        query = query.where(col(StackRecord.parent_id).is_(None))
    query = query.order_by(col(StackRecord.created_at), col(StackRecord.id)).limit(limit)
    return list(session.exec(query))


def list_child_stacks(session: Session, parent_ids: list[str]) -> list[StackRecord]:
    """Stacks nested directly in any of the given stacks."""
    if not parent_ids:
        return []
    query = select(StackRecord).where(col(StackRecord.parent_id).in_(parent_ids))
    return list(session.exec(query.order_by(col(StackRecord.created_at))))


def list_stack_resources(session: Session, stack_ids: list[str]) -> list[StackResourceRecord]:
    """Resources of the given stacks, in creation order."""
    query = select(StackResourceRecord).where(col(StackResourceRecord.stack_id).in_(stack_ids))
    query = query.order_by(col(StackResourceRecord.created_at), col(StackResourceRecord.name))
    return list(session.exec(query))
