"""Profile schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from api.schemas.common import StrictModel
from domain.cluster.profiles import ProfileSpec
from store.profiles import ProfileRecord


class ProfileBody(StrictModel):
    """The inside of `{"profile": {...}}`."""

    name: str = Field(min_length=1, max_length=255)
    spec: ProfileSpec
    metadata: dict[str, str] = Field(default_factory=dict, max_length=64)


class ProfileCreate(StrictModel):
    """`POST /v1/profiles`."""

    profile: ProfileBody


class ProfilePublic(BaseModel):
    """A profile as the API shows it."""

    id: str
    name: str
    type: str
    version: str
    spec: dict[str, Any]
    metadata: dict[str, Any]
    project_id: str
    created_at: datetime
    updated_at: datetime
    # Senlin's owner fields, as openstacksdk reads them (Warden keeps no user or domain).
    user: str | None = None
    domain: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def project(self) -> str:
        """Senlin's name for `project_id`."""
        return self.project_id

    @classmethod
    def of(cls, record: ProfileRecord) -> ProfilePublic:
        """From the database row."""
        return cls(
            id=record.id,
            name=record.name,
            type=record.type,
            version=record.version,
            spec=record.spec,
            metadata=record.metadata_,
            project_id=record.project_id,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class ProfileEnvelope(BaseModel):
    """`{"profile": {...}}`."""

    profile: ProfilePublic


class ProfileList(BaseModel):
    """`{"profiles": [...]}`."""

    profiles: list[ProfilePublic]
