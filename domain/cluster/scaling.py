"""Cluster size arithmetic with Senlin's semantics and wording (`senlin.common.scaleutils`).

`plan_resize()` turns a request into the new desired capacity and bounds, or raises
`InvalidRequest` with the message Senlin gives; `check_size_params()` is Senlin's check
(a scale's own verdict is in `domain.cluster.scale_actions`).
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from domain.cluster.state import MAX_CAPACITY
from domain.errors import InvalidRequest


class AdjustmentType(StrEnum):
    """How `resize` reads its `number`."""

    EXACT_CAPACITY = "EXACT_CAPACITY"
    CHANGE_IN_CAPACITY = "CHANGE_IN_CAPACITY"
    CHANGE_IN_PERCENTAGE = "CHANGE_IN_PERCENTAGE"


def calculate_desired(
    current: int, adjustment_type: AdjustmentType, number: float, min_step: int | None
) -> int:
    """Desired capacity after an adjustment, exactly as Senlin computes it.

    A percentage change rounds towards zero, except that a change smaller than one node
    rounds away from zero; `min_step` then raises its size to at least that many nodes.
    """
    if adjustment_type == AdjustmentType.EXACT_CAPACITY:
        return int(number)
    if adjustment_type == AdjustmentType.CHANGE_IN_CAPACITY:
        return current + int(number)
    delta = number * current / 100.0
    if delta > 0.0:
        rounded = int(math.ceil(delta) if math.fabs(delta) < 1.0 else math.floor(delta))
    else:
        rounded = int(math.floor(delta) if math.fabs(delta) < 1.0 else math.ceil(delta))
    if min_step is not None and min_step > abs(rounded):
        return current + (min_step if rounded > 0 else -min_step)
    return current + rounded


def truncate_desired(desired: int, min_size: int, max_size: int) -> int:
    """Clamp `desired` into [min_size, max_size] (max_size -1 = unbounded), non-strict resize."""
    if desired < min_size:
        return min_size
    if max_size >= 0 and desired > max_size:
        return max_size
    return desired


def check_size_params(
    desired: int | None,
    min_size: int | None,
    max_size: int | None,
    *,
    current_min: int,
    current_max: int,
    strict: bool,
    current_desired: int | None = None,
) -> None:
    """Reject sizes that contradict each other or the cluster, with Senlin's messages.

    Args:
        desired: the target capacity, if the request changes it.
        min_size: the new min_size, if the request sets one.
        max_size: the new max_size (-1 = unbounded), if the request sets one.
        current_min: the cluster's min_size now.
        current_max: the cluster's max_size now (-1 = unbounded).
        strict: check against the cluster's current bounds and capacity too
            (a non-strict request has been truncated into them already).
        current_desired: the cluster's capacity now, checked against new bounds
            when `desired` is None.
    """
    # Contradicting bounds first: they explain any capacity message that would follow.
    message = _min_size_problem(min_size, max_size, current_max)
    message = message or _max_size_problem(max_size, min_size, current_min)
    message = message or _desired_problem(
        desired, min_size, max_size, current_min, current_max, strict
    )
    if message is None and desired is None and current_desired is not None and strict:
        message = _bounds_vs_capacity(min_size, max_size, current_desired)
    if message:
        raise InvalidRequest(message)


def _desired_problem(
    desired: int | None,
    min_size: int | None,
    max_size: int | None,
    current_min: int,
    current_max: int,
    strict: bool,
) -> str | None:
    if desired is None:
        return None
    if desired > MAX_CAPACITY:
        return (
            f"The target capacity ({desired}) is greater than the maximum number of nodes "
            f"allowed per cluster ({MAX_CAPACITY})."
        )
    if min_size is not None and desired < min_size:
        return f"The target capacity ({desired}) is less than the specified min_size ({min_size})."
    if min_size is None and strict and desired < current_min:
        return (
            f"The target capacity ({desired}) is less than the cluster's min_size ({current_min})."
        )
    if max_size is not None and max_size >= 0 and desired > max_size:
        return (
            f"The target capacity ({desired}) is greater than the specified max_size ({max_size})."
        )
    if max_size is None and strict and 0 <= current_max < desired:
        return (
            f"The target capacity ({desired}) is greater than the cluster's max_size "
            f"({current_max})."
        )
    return None


def _min_size_problem(min_size: int | None, max_size: int | None, current_max: int) -> str | None:
    if min_size is None:
        return None
    if max_size is not None and 0 <= max_size < min_size:
        return (
            f"The specified min_size ({min_size}) is greater than the specified "
            f"max_size ({max_size})."
        )
    if max_size is None and 0 <= current_max < min_size:
        return (
            f"The specified min_size ({min_size}) is greater than the current "
            f"max_size ({current_max}) of the cluster."
        )
    return None


def _max_size_problem(max_size: int | None, min_size: int | None, current_min: int) -> str | None:
    if max_size is None:
        return None
    if max_size > MAX_CAPACITY:
        return (
            f"The specified max_size ({max_size}) is greater than the maximum number of "
            f"nodes allowed per cluster ({MAX_CAPACITY})."
        )
    if min_size is None and 0 <= max_size < current_min:
        return (
            f"The specified max_size ({max_size}) is less than the current "
            f"min_size ({current_min}) of the cluster."
        )
    return None


def _bounds_vs_capacity(min_size: int | None, max_size: int | None, current: int) -> str | None:
    if min_size is not None and min_size > current:
        return (
            f"The specified min_size ({min_size}) is greater than the current "
            f"desired_capacity ({current}) of the cluster."
        )
    if max_size is not None and 0 <= max_size < current:
        return (
            f"The specified max_size ({max_size}) is less than the current "
            f"desired_capacity ({current}) of the cluster."
        )
    return None


class ResizeRequest(BaseModel):
    """`resize {adjustment_type, number, min_size?, max_size?, min_step?, strict?}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    adjustment_type: AdjustmentType | None = None
    number: float | None = Field(None, ge=-1_000_000, le=1_000_000, allow_inf_nan=False)
    min_size: int | None = Field(None, ge=0, le=MAX_CAPACITY)
    max_size: int | None = Field(None, ge=-1, le=MAX_CAPACITY)
    min_step: int | None = Field(None, ge=0, le=MAX_CAPACITY)
    strict: bool = True

    @model_validator(mode="after")
    def _adjustment_complete(self) -> Self:
        kind, number = self.adjustment_type, self.number
        if kind is not None and number is None:
            raise _bad("Missing number value for size adjustment.")
        if kind is None and number is not None:
            raise _bad("Missing adjustment_type value for size adjustment.")
        if kind is None and self.min_size is None and self.max_size is None:
            raise _bad("Not enough parameters to do resize action.")
        if kind in (AdjustmentType.EXACT_CAPACITY, AdjustmentType.CHANGE_IN_CAPACITY):
            assert number is not None
            if not number.is_integer():
                raise _bad(f"The 'number' must be an integer for adjustment type '{kind}'.")
            if kind == AdjustmentType.EXACT_CAPACITY and number < 0:
                raise _bad(
                    f"The 'number' must be a non-negative integer for adjustment type '{kind}'."
                )
        return self


def _bad(message: str) -> PydanticCustomError:
    # A custom error keeps pydantic's "Value error, " prefix out of the 400 message.
    return PydanticCustomError("invalid_resize", message)


class ResizePlan(BaseModel):
    """The cluster's size after a resize."""

    model_config = ConfigDict(frozen=True)

    desired: int
    min_size: int
    max_size: int


def plan_resize(
    current_size: int, current_min: int, current_max: int, req: ResizeRequest
) -> ResizePlan:
    """Sizes after `resize`: strict requests outside the bounds are rejected (400),
    non-strict ones are truncated into them (the new bounds when given).

    Without an adjustment (only min_size/max_size) the capacity stays, truncated into
    the new bounds when not strict; a strict request must keep the current capacity
    inside them.
    """
    desired: int | None = None
    if req.adjustment_type is not None and req.number is not None:
        desired = calculate_desired(current_size, req.adjustment_type, req.number, req.min_step)
    new_min = current_min if req.min_size is None else req.min_size
    new_max = current_max if req.max_size is None else req.max_size
    bounds = {"current_min": current_min, "current_max": current_max}
    if req.strict:
        check_size_params(
            desired, req.min_size, req.max_size, strict=True, current_desired=current_size, **bounds
        )
        target = current_size if desired is None else desired
    else:
        target = truncate_desired(current_size if desired is None else desired, new_min, new_max)
        check_size_params(target, req.min_size, req.max_size, strict=False, **bounds)
    return ResizePlan(desired=target, min_size=new_min, max_size=new_max)


def check_scale_count(count: int, operation: str) -> None:
    """Senlin's service checks of a scale's given count (400)."""
    if count == 0:
        raise InvalidRequest(f"Count for {operation} request cannot be 0.")
    if not 0 < count <= MAX_CAPACITY:
        raise InvalidRequest(f"count: must be between 1 and {MAX_CAPACITY} for {operation}.")


def validate_capacity(desired: int, min_size: int, max_size: int) -> None:
    """Reject sizes that contradict each other, with Senlin's wording."""
    if max_size != -1 and min_size > max_size:
        raise InvalidRequest(
            f"The specified min_size ({min_size}) is greater than the specified "
            f"max_size ({max_size})."
        )
    if desired < min_size:
        raise InvalidRequest(
            f"The target capacity ({desired}) is less than the cluster's min_size ({min_size})."
        )
    if max_size != -1 and desired > max_size:
        raise InvalidRequest(
            f"The target capacity ({desired}) is greater than the cluster's max_size ({max_size})."
        )


def validate_new_cluster_size(desired: int, min_size: int, max_size: int) -> None:
    """A new cluster's sizes, in the order and words of Senlin's `check_size_params`
    (the sizes are all the caller's own: "the specified min_size")."""
    if desired < min_size:
        raise InvalidRequest(
            f"The target capacity ({desired}) is less than the specified min_size ({min_size})."
        )
    if max_size >= 0 and desired > max_size:
        raise InvalidRequest(
            f"The target capacity ({desired}) is greater than the specified max_size ({max_size})."
        )
    if max_size >= 0 and min_size > max_size:
        raise InvalidRequest(
            f"The specified min_size ({min_size}) is greater than the specified "
            f"max_size ({max_size})."
        )
