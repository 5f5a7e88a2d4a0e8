"""`senlin.policy.scaling` 1.0: how many nodes a scale-in or scale-out adds or removes.

Upstream Senlin (`senlin/policies/scaling_policy.py`): a policy serves one `event`
(CLUSTER_SCALE_IN or CLUSTER_SCALE_OUT). A scale action of that event without a `count`
gets the policy's: `number` itself (CHANGE_IN_CAPACITY), the distance from the current
size to `number` (EXACT_CAPACITY), or `number` percent of the current size, at least
`min_step` (CHANGE_IN_PERCENTAGE). A count that would break the cluster's size limits
fails the action, unless `best_effort`, which takes as many as the limits allow. After
a scale of its event, the policy refuses another (409) until `cooldown` seconds pass.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from domain.cluster.policies.base import MAX_SECONDS, SpecModel
from domain.cluster.scaling import check_size_params
from domain.cluster.state import MAX_CAPACITY
from domain.errors import InvalidRequest


class ScalingEvent(StrEnum):
    """The action a scaling policy sizes."""

    SCALE_IN = "CLUSTER_SCALE_IN"
    SCALE_OUT = "CLUSTER_SCALE_OUT"


class Adjustment(StrEnum):
    """How `number` reads (Senlin's adjustment types)."""

    EXACT_CAPACITY = "EXACT_CAPACITY"
    CHANGE_IN_CAPACITY = "CHANGE_IN_CAPACITY"
    CHANGE_IN_PERCENTAGE = "CHANGE_IN_PERCENTAGE"


class AdjustmentSpec(SpecModel):
    """`adjustment` (Senlin's defaults)."""

    type: Adjustment = Adjustment.CHANGE_IN_CAPACITY
    number: float = 1
    min_step: int = Field(1, ge=0)
    best_effort: bool = False
    cooldown: int = Field(0, ge=0, le=MAX_SECONDS)


class ScalingPolicyProperties(SpecModel):
    """`senlin.policy.scaling` 1.0 properties."""

    event: ScalingEvent
    adjustment: AdjustmentSpec = Field(default_factory=AdjustmentSpec)


def adjustment_count(props: ScalingPolicyProperties, current: int) -> int:
    """The nodes one scale action adds or removes, from the current size (Senlin's
    `_calculate_adjustment_count`)."""
    adj = props.adjustment
    if adj.type is Adjustment.EXACT_CAPACITY:
        if props.event is ScalingEvent.SCALE_IN:
            count = current - adj.number
        else:
            count = adj.number - current
    elif adj.type is Adjustment.CHANGE_IN_CAPACITY:
        count = adj.number
    else:
        count = int(adj.number * current / 100.0)
        count = max(count, adj.min_step)
    return abs(int(count))


def policy_count(
    props: ScalingPolicyProperties,
    *,
    given: int | None,
    current: int,
    min_size: int,
    max_size: int,
) -> int:
    """The count a scale action of the policy's event runs with (Senlin's `pre_op`).

    `given` (the action's own count) wins over the policy's. With `best_effort` the
    count is cut to what the size limits allow (possibly 0: nothing to do), and only
    the per-cluster maximum is checked; without it the new size must keep inside the
    cluster's limits. `max_size` -1 is no limit. Raises `InvalidRequest` with Senlin's
    reason, which fails the action (the caller adds the policy's name).
    """
    count = given if given is not None else adjustment_count(props, current)
    if count <= 0:
        raise InvalidRequest(f"Invalid count ({count}) for action '{props.event}'.")
    limit = MAX_CAPACITY if max_size == -1 else max_size
    best_effort = props.adjustment.best_effort
    if props.event is ScalingEvent.SCALE_IN:
        if best_effort:
            count = max(0, min(count, current - min_size))
        target = current - count
    else:
        if best_effort:
            count = max(0, min(count, limit - current))
        target = current + count
    check_size_params(
        target, None, None, current_min=min_size, current_max=max_size, strict=not best_effort
    )
    return count
