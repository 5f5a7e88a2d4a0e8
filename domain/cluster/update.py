"""A cluster update onto a new profile, planned once when the cluster accepts it.

The plan is decided at accept time from the cluster's state (replay-safe): which
nodes go in which batch (failed and marked nodes first, `domain/cluster/policies/batch.py`),
the pause between batches, the name index the replacements start at, and which nodes
keep their servers, updated in place (`domain/cluster/server_update.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from domain.cluster.nodes import MARKED_UNHEALTHY, NodeStatus
from domain.cluster.policies.batch import BatchPolicyProperties, update_batches
from domain.cluster.policies.specs import PolicyType
from domain.cluster.server_update import ServerChanges, server_changes
from domain.cluster.stack_profile import is_stack_profile
from domain.cluster.state import ClusterState
from domain.errors import InvalidRequest


class UpdatePlan(BaseModel):
    """What the update does, carried in the operation's parameters."""

    model_config = ConfigDict(frozen=True)

    profile_id: str
    profile: dict[str, Any]
    batches: list[list[str]]
    pause_time_s: int
    first_index: int
    #: Nodes whose servers are updated in place (`domain/cluster/server_update.py`); the
    #: other nodes of the batches are replaced.
    in_place: list[str] = []
    changes: ServerChanges | None = None


def batch_policy(state: ClusterState) -> BatchPolicyProperties | None:
    """The attached, enabled batch policy, if any."""
    for policy in state.policies:
        if policy.type == PolicyType.BATCH.value and policy.enabled:
            return BatchPolicyProperties.model_validate(policy.properties)
    return None


def plan_update(
    state: ClusterState, params: Mapping[str, Any], *, in_place: bool = True
) -> UpdatePlan:
    """The roll onto `params["profile_id"]` (400 when there is nothing to update).

    With `in_place`, healthy nodes on the cluster's profile whose servers can take the
    new profile's changes keep their servers; every other node is replaced."""
    profile_id, profile = params.get("profile_id"), params.get("profile")
    if not isinstance(profile_id, str) or not profile_id:
        raise InvalidRequest("cluster.profile_id: required")
    if profile_id == state.spec.profile_id:
        raise InvalidRequest("No property needs an update.")
    if not isinstance(profile, dict):
        raise InvalidRequest("cluster.profile: the new profile's spec is required")
    if profile.get("type") != state.profile.get("type"):
        raise InvalidRequest(
            "Cannot update a cluster to a different profile type, operation aborted."
        )
    failed = [
        n.node_id
        for n in state.nodes
        if n.status == NodeStatus.ERROR or n.data.get(MARKED_UNHEALTHY)
    ]
    unhealthy = set(failed)
    healthy = [n.node_id for n in state.nodes if n.node_id not in unhealthy]
    policy = batch_policy(state)
    # `profile_only`: the cluster takes the profile for its new nodes; none is rolled.
    rolled = [] if params.get("profile_only") else update_batches(failed, healthy, policy)
    changes = (
        server_changes(state.profile, profile)
        if in_place and rolled and not is_stack_profile(profile)
        else None
    )
    kept = [
        n.node_id
        for n in state.nodes
        if changes is not None
        and n.node_id not in unhealthy
        and n.physical_id
        and n.profile_id == state.spec.profile_id
    ]
    return UpdatePlan(
        profile_id=profile_id,
        profile=profile,
        batches=rolled,
        pause_time_s=policy.pause_time if policy else 0,
        first_index=state.next_index,
        in_place=kept,
        changes=changes if kept else None,
    )
