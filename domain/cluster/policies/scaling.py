"""`senlin.policy.scaling` 1.0: how many nodes a scale-in or scale-out adds or removes.

Upstream Senlin (`senlin/policies/scaling_policy.py`): a policy serves one `event`
(CLUSTER_SCALE_IN or CLUSTER_SCALE_OUT). A scale action of that event without a `count`
gets the policy's: `number` itself (CHANGE_IN_CAPACITY), the distance from the current
size to `number` (EXACT_CAPACITY), or `number` percent of the current size, at least
`min_step` (CHANGE_IN_PERCENTAGE). A count that would break the cluster's size limits
fails the action, unless `best_effort`, which takes as many as the limits allow.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from domain.cluster.policies.base import MAX_SECONDS, SpecModel
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


def scaled_count(
    props: ScalingPolicyProperties,
    *,
    given: int | None,
    current: int,
    min_size: int,
    max_size: int,
) -> int:
    """The count a scale action of the policy's event runs with.

    `given` (the action's own count) wins over the policy's; a count the size limits
    refuse is cut to what they allow when `best_effort`, and refused otherwise, in
    Senlin's words. `max_size` -1 is no limit.
    """
    count = given if given is not None else adjustment_count(props, current)
    if count <= 0:
        raise InvalidRequest(f"Invalid count ({count}) for action '{props.event}'.")
    if props.event is ScalingEvent.SCALE_IN:
        room = current - min_size
        if count > room:
            if not props.adjustment.best_effort or room <= 0:
                raise InvalidRequest(
                    f"The target capacity ({current - count}) is less than the cluster's "
                    f"min_size ({min_size})."
                )
            count = room
    else:
        room = current + count if max_size == -1 else max_size - current
        if max_size != -1 and count > room:
            if not props.adjustment.best_effort or room <= 0:
                raise InvalidRequest(
                    f"The target capacity ({current + count}) is greater than the "
                    f"cluster's max_size ({max_size})."
                )
            count = room
    return count
