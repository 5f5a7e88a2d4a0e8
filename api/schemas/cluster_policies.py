"""Cluster-policy bindings as Senlin shows them (`/v1/clusters/{cluster_id}/policies`)."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field, computed_field

from store.clusters import ClusterRecord


class ClusterPolicyPublic(BaseModel):
    """One policy attached to one cluster."""

    cluster_id: str
    cluster_name: str
    policy_id: str
    policy_name: str
    policy_type: str
    enabled: bool
    #: Senlin's runtime data of the binding (Warden keeps none).
    data: dict[str, Any] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        """The binding's id, as Senlin shows one: the same for the same cluster and policy."""
        return str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"warden:binding:{self.cluster_id}:{self.policy_id}")
        )

    @classmethod
    def bindings(cls, cluster: ClusterRecord) -> list[ClusterPolicyPublic]:
        """The cluster's bindings, in the order the policies were attached."""
        return [
            cls(
                cluster_id=cluster.id,
                cluster_name=cluster.name,
                policy_id=str(p.get("policy_id", "")),
                policy_name=str(p.get("name", "")),
                policy_type=str(p.get("type", "")),
                enabled=bool(p.get("enabled", True)),
            )
            for p in cluster.policies
        ]


class ClusterPolicyEnvelope(BaseModel):
    """`{"cluster_policy": {...}}`."""

    cluster_policy: ClusterPolicyPublic


class ClusterPolicyList(BaseModel):
    """`{"cluster_policies": [...]}`."""

    cluster_policies: list[ClusterPolicyPublic]
