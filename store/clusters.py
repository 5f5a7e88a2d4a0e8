"""Cluster and node records (projections written by activities) and queries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Field, Session, SQLModel, col, func, select

from store.columns import json_column, utc_column
from store.lookup import get_by_id_or_name


class ClusterRecord(SQLModel, table=True):
    """A cluster as last projected by its entity workflow."""

    __tablename__ = "clusters"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    name: str = Field(max_length=255)
    profile_id: str = Field(index=True, max_length=64)
    status: str = Field(max_length=32)
    status_reason: str = Field(default="")
    desired_capacity: int = 0
    min_size: int = 0
    max_size: int = -1
    lock: dict[str, Any] | None = Field(default=None, sa_column=json_column(nullable=True))
    policies: list[dict[str, Any]] = Field(default_factory=list, sa_column=json_column())
    metadata_: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    config: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    timeout: int | None = None
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime = Field(sa_column=utc_column())


class NodeRecord(SQLModel, table=True):
    """A cluster member: one server in the cloud."""

    __tablename__ = "nodes"

    id: str = Field(primary_key=True, max_length=64)
    project_id: str = Field(index=True, max_length=64)
    cluster_id: str = Field(index=True, max_length=64)
    name: str = Field(max_length=255)
    index: int = 0
    profile_id: str = Field(max_length=64)
    physical_id: str | None = Field(default=None, index=True, max_length=64)
    status: str = Field(max_length=32)
    status_reason: str = Field(default="")
    data: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    role: str = Field(default="", max_length=255)
    metadata_: dict[str, Any] = Field(default_factory=dict, sa_column=json_column())
    created_at: datetime = Field(sa_column=utc_column(index=True))
    updated_at: datetime = Field(sa_column=utc_column())


def get_cluster(session: Session, project_id: str, cluster_id: str) -> ClusterRecord | None:
    """The cluster by id, or by name when unique in the project."""
    return get_by_id_or_name(session, ClusterRecord, project_id, cluster_id)


def list_clusters(session: Session, project_id: str, *, limit: int = 100) -> list[ClusterRecord]:
    """Clusters of a project, oldest first."""
    query = (
        select(ClusterRecord)
        .where(ClusterRecord.project_id == project_id)
        .order_by(col(ClusterRecord.created_at), col(ClusterRecord.id))
        .limit(limit)
    )
    return list(session.exec(query))


def count_clusters_using_profile(session: Session, profile_id: str) -> int:
    """How many clusters (and so nodes) still use a profile."""
    query = (
        select(func.count())
        .select_from(ClusterRecord)
        .where(ClusterRecord.profile_id == profile_id)
    )
    return int(session.exec(query).one())


def count_nodes_using_profile(session: Session, profile_id: str) -> int:
    """How many nodes (standalone ones included) still use a profile."""
    query = select(func.count()).select_from(NodeRecord).where(NodeRecord.profile_id == profile_id)
    return int(session.exec(query).one())


def cluster_names_using_policy(session: Session, project_id: str, policy_id: str) -> list[str]:
    """Names of the project's clusters that have the policy attached."""
    query = select(ClusterRecord).where(ClusterRecord.project_id == project_id)
    return [
        c.name
        for c in session.exec(query)
        if any(p.get("policy_id") == policy_id for p in c.policies)
    ]


def list_nodes(
    session: Session, project_id: str, *, cluster_id: str | None = None, limit: int = 1000
) -> list[NodeRecord]:
    """Nodes of a project (optionally one cluster's), by cluster then index."""
    query = select(NodeRecord).where(NodeRecord.project_id == project_id)
    if cluster_id:
        query = query.where(NodeRecord.cluster_id == cluster_id)
    query = query.order_by(col(NodeRecord.cluster_id), col(NodeRecord.index)).limit(limit)
    return list(session.exec(query))


def get_node(session: Session, project_id: str, node_id: str) -> NodeRecord | None:
    """The project's node by id, unique name or short id (as Senlin finds nodes)."""
    return get_by_id_or_name(session, NodeRecord, project_id, node_id)


def get_node_by_physical_id(
    session: Session, project_id: str, physical_id: str
) -> NodeRecord | None:
    """The project's node backed by this server, if any."""
    query = select(NodeRecord).where(
        NodeRecord.project_id == project_id, NodeRecord.physical_id == physical_id
    )
    return session.exec(query).first()


def find_node_by_physical_id(session: Session, physical_id: str) -> NodeRecord | None:
    """The node backed by this server in any project (server ids are unique in the
    cloud): for the operator's message bus, which names servers, not projects."""
    return session.exec(select(NodeRecord).where(NodeRecord.physical_id == physical_id)).first()
