"""Receiver records (Senlin's webhook receivers), written by the API directly."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from store.columns import json_column, utc_column
from store.lookup import get_by_id_or_name


class ReceiverRecord(SQLModel, table=True):
    """A webhook receiver: whoever holds its URL may run `action` on the cluster."""

    __tablename__ = "receivers"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    name: str = Field(max_length=255)
    type: str = Field(max_length=16)
    cluster_id: str = Field(index=True, max_length=64)
    action: str = Field(max_length=64)
    params: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime = Field(sa_column=utc_column())


def get_receiver(session: Session, project_id: str, key: str) -> ReceiverRecord | None:
    """The project's receiver by id, unique name or short id."""
    return get_by_id_or_name(session, ReceiverRecord, project_id, key)


def get_webhook(session: Session, receiver_id: str) -> ReceiverRecord | None:
    """The receiver behind a webhook URL: by its full id only (the id is the credential)."""
    return session.get(ReceiverRecord, receiver_id)


def list_receivers(session: Session, project_id: str, *, limit: int = 100) -> list[ReceiverRecord]:
    """Receivers of a project, oldest first."""
    query = (
        select(ReceiverRecord)
        .where(ReceiverRecord.project_id == project_id)
        .order_by(col(ReceiverRecord.created_at), col(ReceiverRecord.id))
        .limit(limit)
    )
    return list(session.exec(query))
