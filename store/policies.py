"""Policy records (deletion and health policies), written by the API directly."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from store.columns import json_column, utc_column
from store.lookup import get_by_id_or_name


class PolicyRecord(SQLModel, table=True):
    """A policy. `secret` (a webhook's HMAC key) is never shown nor sent to Temporal."""

    __tablename__ = "policies"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    name: str = Field(max_length=255)
    type: str = Field(max_length=64)
    version: str = Field(max_length=16)
    spec: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    secret: str | None = Field(default=None, max_length=256)
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime = Field(sa_column=utc_column())


def get_policy(session: Session, project_id: str, policy_id: str) -> PolicyRecord | None:
    """The policy by id, or by name when the name is unique in the project."""
    return get_by_id_or_name(session, PolicyRecord, project_id, policy_id)


def list_policies(session: Session, project_id: str, *, limit: int = 100) -> list[PolicyRecord]:
    """Policies of a project, oldest first."""
    query = (
        select(PolicyRecord)
        .where(PolicyRecord.project_id == project_id)
        .order_by(col(PolicyRecord.created_at), col(PolicyRecord.id))
        .limit(limit)
    )
    return list(session.exec(query))


def get_policy_secret(session: Session, policy_id: str) -> str | None:
    """The webhook secret of a policy (for the hook delivery activity only)."""
    record = session.get(PolicyRecord, policy_id)
    return record.secret if record is not None else None
