"""Cluster-policy bindings as Senlin shows them (`/v1/clusters/{cluster_id}/policies`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

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
