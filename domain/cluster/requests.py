"""What the API and apps send a cluster workflow, and what it answers.

Leaf messages: the API imports them without pulling in any workflow code.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.cluster.state import AttachedPolicy


class ClusterOperationRequest(BaseModel):
    """A request for an operation (check, delete, …); action_id dedups retries."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class LockClusterRequest(BaseModel):
    """`lock`: maintenance mode."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    reason: str = Field("", max_length=255)
    owner: str = Field("", max_length=255)


class OperationAccepted(BaseModel):
    """What an accepted update answers: the action that tracks it."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    status: str


class PolicyAttachRequest(BaseModel):
    """`policy_attach`: the API resolves the policy and sends its public copy."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    policy: AttachedPolicy


class ClusterPropertiesRequest(BaseModel):
    """`PATCH /v1/clusters/{id}` of the properties changed at once (None = keep)."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    timeout: int | None = None


class PolicyUpdateRequest(BaseModel):
    """`policy_update {policy_id, enabled?}`: a bound policy switched on or off."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    policy_id: str
    enabled: bool | None = None


class PolicyDetachRequest(BaseModel):
    """`policy_detach {policy_id}`."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    policy_id: str


class MarkNodeRequest(BaseModel):
    """`PATCH /v1/nodes/{node_id}`: mark a node unhealthy (or clear the mark)."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    node_id: str
    mark_unhealthy: bool
    status_reason: str = Field("", max_length=255)
