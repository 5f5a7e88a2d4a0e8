"""Senlin's scale-out and scale-in actions: the count they run with, or why they fail.

Senlin's service refuses only a zero count or a size past the per-cluster maximum (a
400, `membership.plan_membership`). The action itself then lets an attached, enabled
scaling policy of its event have its say (`ScalingPolicy.pre_op`: the policy's count,
its `best_effort` cut, its refusal, reported as "Policy check failure: Failed policy
'<name>': …"), and checks the new size against the cluster's limits
(`ClusterAction.do_scale_out` / `do_scale_in`, a scale-in count cut to the nodes there
are). A refused action ends FAILED with the reason and leaves the cluster as it was.

A policy's `cooldown` refuses the next scale of its event with a 409 until that many
seconds have passed since the last one it checked (`Action.validate_scaling_action`;
the time is kept on the binding, Senlin's `cluster_policy.last_op`).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from domain.actions import ActionName
from domain.cluster.policies.scaling import ScalingPolicyProperties, policy_count
from domain.cluster.policies.specs import PolicyType
from domain.cluster.scaling import check_size_params
from domain.cluster.state import AttachedPolicy, ClusterState
from domain.errors import Conflict, InvalidRequest

#: How Senlin starts the reason of an action a policy refused.
POLICY_CHECK_FAILURE = "Policy check failure"

SCALE_ACTIONS = frozenset({ActionName.CLUSTER_SCALE_OUT, ActionName.CLUSTER_SCALE_IN})


class ScaleDecision(NamedTuple):
    """What a scale action does: add or remove `nodes` nodes, or fail with `refusal`."""

    nodes: int
    refusal: str = ""


def scaling_policy(state: ClusterState, name: ActionName) -> AttachedPolicy | None:
    """The attached, enabled scaling policy whose event is `name`, if any."""
    for bound in state.policies:
        if bound.type != PolicyType.SCALING.value or not bound.enabled:
            continue
        if ScalingPolicyProperties.model_validate(bound.properties).event.value == name.value:
            return bound
    return None


def decide_scale(state: ClusterState, name: ActionName, given: int | None) -> ScaleDecision:
    """The count of a scale action (`given`: the request's, if any), or its refusal."""
    current, spec = len(state.nodes), state.spec
    bound = scaling_policy(state, name)
    if bound is not None:
        props = ScalingPolicyProperties.model_validate(bound.properties)
        try:
            count = policy_count(
                props,
                given=given,
                current=current,
                min_size=spec.min_size,
                max_size=spec.max_size,
            )
        except InvalidRequest as refused:
            return ScaleDecision(
                0, f"{POLICY_CHECK_FAILURE}: Failed policy '{bound.name}': {refused.message}"
            )
    else:
        count = 1 if given is None else given
    if name == ActionName.CLUSTER_SCALE_IN:
        count = min(count, current)
        target = current - count
    else:
        target = current + count
    try:
        check_size_params(
            target, None, None, current_min=spec.min_size, current_max=spec.max_size, strict=True
        )
    except InvalidRequest as refused:
        return ScaleDecision(0, refused.message)
    return ScaleDecision(count)


def policy_checked(refusal: str) -> bool:
    """Whether the scaling policy let the action through (its cooldown then restarts)."""
    return not refusal.startswith(POLICY_CHECK_FAILURE)


def ensure_out_of_cooldown(state: ClusterState, name: ActionName, now: datetime) -> None:
    """409 while the scaling policy of `name`'s event is still cooling down."""
    bound = scaling_policy(state, name)
    if bound is None or bound.last_op is None:
        return
    cooldown = ScalingPolicyProperties.model_validate(bound.properties).adjustment.cooldown
    if cooldown and (now - bound.last_op).total_seconds() <= cooldown:
        raise Conflict(
            f"The {name} action for cluster {state.spec.cluster_id} cannot be processed "
            f"due to Policy {bound.policy_id} cooldown still in progress"
        )


def after_scale(state: ClusterState, name: ActionName, refusal: str, now: datetime) -> ClusterState:
    """The cluster once a scale action has ended: its policy's cooldown starts again
    (Senlin's `post_op`, run whenever the policy's check passed)."""
    bound = scaling_policy(state, name)
    if bound is None or not policy_checked(refusal):
        return state
    stamped = bound.model_copy(update={"last_op": now})
    policies = [stamped if p.policy_id == bound.policy_id else p for p in state.policies]
    return state.model_copy(update={"policies": policies})
