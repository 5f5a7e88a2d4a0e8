"""Profile records: templates for the servers a cluster's nodes run on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from store.columns import json_column, utc_column
from store.lookup import get_by_id_or_name


class ProfileRecord(SQLModel, table=True):
    """A profile (`os.nova.server` 1.0). Written by the API: it has no lifecycle."""

    __tablename__ = "profiles"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    name: str = Field(max_length=255)
    type: str = Field(max_length=64)
    version: str = Field(max_length=16)
    spec: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    metadata_: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime = Field(sa_column=utc_column())


def get_profile(session: Session, project_id: str, profile_id: str) -> ProfileRecord | None:
    """The profile by id, or by name when the name is unique in the project."""
    return get_by_id_or_name(session, ProfileRecord, project_id, profile_id)


def list_profiles(session: Session, project_id: str, *, limit: int = 100) -> list[ProfileRecord]:
    """Profiles of a project, oldest first."""
    query = (
        select(ProfileRecord)
        .where(ProfileRecord.project_id == project_id)
        .order_by(col(ProfileRecord.created_at), col(ProfileRecord.id))
        .limit(limit)
    )
    return list(session.exec(query))
