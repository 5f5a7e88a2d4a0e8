"""Software deployment records (Heat's `/software_deployments`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, select

from domain.stack.types.software_config import SoftwareConfig
from domain.stack.types.software_deployment import SoftwareDeployment
from store.columns import json_column, utc_column
from store.software_configs import SoftwareConfigRecord


class SoftwareDeploymentRecord(SQLModel, table=True):
    """One deployment of a config to a server."""

    __tablename__ = "software_deployments"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    config_id: str = Field(index=True, max_length=64)
    server_id: str = Field(index=True, max_length=64)
    input_values: dict[str, Any] | None = Field(default=None, sa_column=json_column(nullable=True))
    output_values: dict[str, Any] | None = Field(default=None, sa_column=json_column(nullable=True))
    action: str | None = Field(default=None, max_length=255)
    status: str | None = Field(default=None, max_length=255)
    status_reason: str | None = Field(default=None)
    stack_user_project_id: str | None = Field(default=None, max_length=64)
    stack_id: str | None = Field(default=None, index=True, max_length=64)
    resource_name: str | None = Field(default=None, max_length=255)
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime | None = Field(default=None, sa_column=utc_column(nullable=True))

    def as_deployment(self) -> SoftwareDeployment:
        """The domain view."""
        return SoftwareDeployment.model_validate(self, from_attributes=True)


def save_deployment(session: Session, deployment: SoftwareDeployment) -> SoftwareDeployment:
    """Store a deployment under its id (one stored already is kept and given back)."""
    known = session.get(SoftwareDeploymentRecord, deployment.id)
    if known is not None:
        return known.as_deployment()
    record = SoftwareDeploymentRecord.model_validate(deployment.model_dump())
    session.add(record)
    session.flush()
    return record.as_deployment()


def _visible(
    record: SoftwareDeploymentRecord | None, project_id: str | None
) -> SoftwareDeploymentRecord | None:
    if record is None or (project_id is not None and record.project_id != project_id):
        return None
    return record


def get_deployment(
    session: Session, project_id: str | None, deployment_id: str
) -> SoftwareDeployment | None:
    """A deployment by id; another project's is not found."""
    found = _visible(session.get(SoftwareDeploymentRecord, deployment_id), project_id)
    return None if found is None else found.as_deployment()


def update_deployment(
    session: Session, project_id: str | None, deployment_id: str, changes: dict[str, Any]
) -> SoftwareDeployment | None:
    """Apply `changes` (fields of the record) to a deployment; None when there is none."""
    found = _visible(session.get(SoftwareDeploymentRecord, deployment_id), project_id)
    if found is None:
        return None
    for key, value in changes.items():
        setattr(found, key, value)
    session.add(found)
    session.flush()
    return found.as_deployment()


def list_deployments(
    session: Session, project_id: str | None, server_id: str | None = None
) -> list[SoftwareDeployment]:
    """Deployments oldest first, of one server when `server_id` is given."""
    query = select(SoftwareDeploymentRecord).order_by(
        col(SoftwareDeploymentRecord.created_at), col(SoftwareDeploymentRecord.id)
    )
    if project_id is not None:
        query = query.where(SoftwareDeploymentRecord.project_id == project_id)
    if server_id is not None:
        query = query.where(SoftwareDeploymentRecord.server_id == server_id)
    return [record.as_deployment() for record in session.exec(query)]


def server_configs(
    session: Session, project_id: str | None, server_id: str
) -> list[SoftwareConfig]:
    """Heat's deployment metadata of a server: the config of each of its deployments,
    ordered by config name."""
    query = (
        select(SoftwareConfigRecord)
        .join(
            SoftwareDeploymentRecord,
            col(SoftwareDeploymentRecord.config_id) == col(SoftwareConfigRecord.id),
        )
        .where(SoftwareDeploymentRecord.server_id == server_id)
        .order_by(col(SoftwareDeploymentRecord.created_at), col(SoftwareDeploymentRecord.id))
    )
    if project_id is not None:
        query = query.where(SoftwareDeploymentRecord.project_id == project_id)
    configs = [record.as_config() for record in session.exec(query)]
    return sorted(configs, key=lambda c: c.name or "")


def delete_deployment(session: Session, project_id: str | None, deployment_id: str) -> bool:
    """Delete a deployment; False when there is none."""
    found = _visible(session.get(SoftwareDeploymentRecord, deployment_id), project_id)
    if found is None:
        return False
    session.delete(found)
    return True


def config_in_use(session: Session, config_id: str) -> bool:
    """Whether a deployment uses the config (Heat refuses to delete it then)."""
    query = select(SoftwareDeploymentRecord.id).where(
        SoftwareDeploymentRecord.config_id == config_id
    )
    return session.exec(query.limit(1)).first() is not None
