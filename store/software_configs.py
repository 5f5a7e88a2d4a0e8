"""Software config records (Heat's `/software_configs`): written by the API and by the
config resources' activity, never changed once written."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from domain.stack.types.software_config import SoftwareConfig
from store.columns import json_column, now_utc, utc_column


class SoftwareConfigRecord(SQLModel, table=True):
    """One config: `body` holds Heat's `config`, `inputs`, `outputs` and `options`."""

    __tablename__ = "software_configs"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    name: str | None = Field(default=None, max_length=255)
    group: str | None = Field(default=None, max_length=255)
    body: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    created_at: datetime = Field(sa_column=utc_column(index=True))

    def as_config(self) -> SoftwareConfig:
        """The domain view."""
        return SoftwareConfig(
            id=self.id,
            project_id=self.project_id,
            name=self.name,
            group=self.group,
            config=self.body.get("config"),
            inputs=self.body.get("inputs") or [],
            outputs=self.body.get("outputs") or [],
            options=self.body.get("options") or {},
            created_at=self.created_at,
        )


def save_config(session: Session, config: SoftwareConfig) -> SoftwareConfig:
    """Store a config under its id; one stored already under that id is kept (a retried
    create), and given back."""
    known = session.get(SoftwareConfigRecord, config.id)
    if known is not None:
        return known.as_config()
    body = {
        "config": config.config,
        "inputs": config.inputs,
        "outputs": config.outputs,
        "options": config.options,
    }
    record = SoftwareConfigRecord(
        id=config.id,
        project_id=config.project_id,
        name=config.name,
        group=config.group,
        body=body,
        created_at=config.created_at or now_utc(),
    )
    session.add(record)
    session.flush()
    return record.as_config()


def get_config(session: Session, project_id: str | None, config_id: str) -> SoftwareConfig | None:
    """A config by id; another project's is not found (`project_id` None: any project)."""
    record = session.get(SoftwareConfigRecord, config_id)
    if record is None or (project_id is not None and record.project_id != project_id):
        return None
    return record.as_config()


def list_configs(
    session: Session, project_id: str | None, *, limit: int | None, marker: str | None
) -> list[SoftwareConfig] | None:
    """Configs oldest first, after the `marker` config (None when the marker is not one
    of them); `project_id` None lists every project's."""
    query = select(SoftwareConfigRecord).order_by(
        col(SoftwareConfigRecord.created_at), col(SoftwareConfigRecord.id)
    )
    if project_id is not None:
        query = query.where(SoftwareConfigRecord.project_id == project_id)
    if marker is not None:
        after = session.get(SoftwareConfigRecord, marker)
        if after is None or (project_id is not None and after.project_id != project_id):
            return None
        query = query.where(
            (col(SoftwareConfigRecord.created_at) > after.created_at)
            | (
                (col(SoftwareConfigRecord.created_at) == after.created_at)
                & (col(SoftwareConfigRecord.id) > after.id)
            )
        )
    if limit is not None:
        query = query.limit(limit)
    return [record.as_config() for record in session.exec(query)]


def delete_config(session: Session, project_id: str | None, config_id: str) -> bool:
    """Delete a config; False when there is none."""
    record = session.get(SoftwareConfigRecord, config_id)
    if record is None or (project_id is not None and record.project_id != project_id):
        return False
    session.delete(record)
    return True
