"""Cluster size arithmetic: Senlin's calculate_desired, truncation, size checks and plans."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from domain.cluster.scaling import (
    AdjustmentType,
    ResizePlan,
    ResizeRequest,
    calculate_desired,
    check_scale_count,
    check_size_params,
    plan_resize,
    truncate_desired,
)
from domain.cluster.state import MAX_CAPACITY
from domain.errors import InvalidRequest

EXACT = AdjustmentType.EXACT_CAPACITY
CHANGE = AdjustmentType.CHANGE_IN_CAPACITY
PERCENT = AdjustmentType.CHANGE_IN_PERCENTAGE


# --- calculate_desired ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "kind", "number", "min_step", "expected"),
    [
        (3, EXACT, 5, None, 5),
        (3, EXACT, 0, None, 0),
        (3, CHANGE, 2, None, 5),
        (3, CHANGE, -2, None, 1),
        (10, PERCENT, 50, None, 15),
        (10, PERCENT, -50, None, 5),
        (10, PERCENT, 15.81, None, 11),  # 1.581 rounds down
        (10, PERCENT, 8, None, 11),  # 0.8 rounds up: a change below one node is one node
        (10, PERCENT, -8, None, 9),
        (10, PERCENT, -15.81, None, 9),  # -1.581 rounds towards zero
        (10, PERCENT, 15.81, 2, 12),  # min_step raises the change
        (10, PERCENT, -15.81, 3, 7),
        (10, PERCENT, 50, 2, 15),  # min_step below the change does nothing
    ],
)
def test_calculate_desired_matches_senlin(
    current: int, kind: AdjustmentType, number: float, min_step: int | None, expected: int
) -> None:
    assert calculate_desired(current, kind, number, min_step) == expected


@given(current=st.integers(0, 1000), number=st.integers(-1000, 1000))
def test_exact_and_change_in_capacity_are_plain_arithmetic(current: int, number: int) -> None:
    assert calculate_desired(current, EXACT, number, None) == number
    assert calculate_desired(current, CHANGE, number, None) == current + number


@given(
    current=st.integers(1, 1000),
    number=st.floats(0.01, 1000, allow_nan=False),
    min_step=st.none() | st.integers(0, 50),
)
def test_positive_percentage_always_grows_by_at_least_one_node(
    current: int, number: float, min_step: int | None
) -> None:
    desired = calculate_desired(current, PERCENT, number, min_step)
    delta = number * current / 100
    assert desired > current
    assert desired - current <= max(math.ceil(delta), min_step or 0)
    assert desired - current >= (min_step or 1)


@given(
    current=st.integers(1, 1000),
    number=st.floats(-1000, -0.01, allow_nan=False),
    min_step=st.none() | st.integers(0, 50),
)
def test_negative_percentage_always_shrinks_by_at_least_one_node(
    current: int, number: float, min_step: int | None
) -> None:
    desired = calculate_desired(current, PERCENT, number, min_step)
    assert desired < current
    assert current - desired >= (min_step or 1)


# --- truncate_desired -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("desired", "min_size", "max_size", "expected"),
    [(0, 1, 5, 1), (9, 1, 5, 5), (3, 1, 5, 3), (500, 0, -1, 500), (-2, 0, -1, 0), (4, 0, 0, 0)],
)
def test_truncate_desired_clamps_into_bounds(
    desired: int, min_size: int, max_size: int, expected: int
) -> None:
    assert truncate_desired(desired, min_size, max_size) == expected


# --- check_size_params ------------------------------------------------------------------


def check(
    desired: int | None,
    min_size: int | None = None,
    max_size: int | None = None,
    *,
    current_min: int = 1,
    current_max: int = 5,
    strict: bool = True,
    current_desired: int | None = None,
) -> None:
    check_size_params(
        desired,
        min_size,
        max_size,
        current_min=current_min,
        current_max=current_max,
        strict=strict,
        current_desired=current_desired,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"desired": 0}, "The target capacity (0) is less than the cluster's min_size (1)."),
        (
            {"desired": 1, "min_size": 2},
            "The target capacity (1) is less than the specified min_size (2).",
        ),
        ({"desired": 6}, "The target capacity (6) is greater than the cluster's max_size (5)."),
        (
            {"desired": 4, "max_size": 3},
            "The target capacity (4) is greater than the specified max_size (3).",
        ),
        (
            {"desired": None, "min_size": 3, "max_size": 2},
            "The specified min_size (3) is greater than the specified max_size (2).",
        ),
        (
            {"desired": None, "min_size": 6},
            "The specified min_size (6) is greater than the current max_size (5) of the cluster.",
        ),
        (
            {"desired": None, "max_size": 0},
            "The specified max_size (0) is less than the current min_size (1) of the cluster.",
        ),
        (
            {"desired": None, "min_size": 4, "current_desired": 3},
            "The specified min_size (4) is greater than the current desired_capacity (3) "
            "of the cluster.",
        ),
        (
            {"desired": None, "max_size": 2, "current_desired": 3},
            "The specified max_size (2) is less than the current desired_capacity (3) "
            "of the cluster.",
        ),
        (
            {"desired": MAX_CAPACITY + 1, "current_max": -1},
            f"The target capacity ({MAX_CAPACITY + 1}) is greater than the maximum number "
            f"of nodes allowed per cluster ({MAX_CAPACITY}).",
        ),
        (
            {"desired": None, "max_size": MAX_CAPACITY + 1},
            f"The specified max_size ({MAX_CAPACITY + 1}) is greater than the maximum number "
            f"of nodes allowed per cluster ({MAX_CAPACITY}).",
        ),
    ],
)
def test_check_size_params_rejects_with_senlin_messages(
    kwargs: dict[str, int | None], message: str
) -> None:
    with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}$"):
        check(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"desired": 1},
        {"desired": 5},
        {"desired": 0, "min_size": 0},
        {"desired": 9, "max_size": -1},
        {"desired": 7, "max_size": 8},
        {"desired": None, "min_size": 2, "max_size": 2},
        {"desired": None, "min_size": 9, "max_size": -1},
        {"desired": 50, "current_max": -1},
    ],
)
def test_check_size_params_accepts_consistent_sizes(kwargs: dict[str, int | None]) -> None:
    check(**kwargs)  # type: ignore[arg-type]


def test_non_strict_check_ignores_the_clusters_current_bounds() -> None:
    check(0, strict=False)
    check(9, strict=False)
    check(None, min_size=4, current_desired=3, strict=False)


def test_unbounded_max_size_never_limits_capacity() -> None:
    check(MAX_CAPACITY, current_min=0, current_max=-1)


# --- ResizeRequest ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"adjustment_type": "EXACT_CAPACITY"}, "Missing number value for size adjustment."),
        ({"number": 2}, "Missing adjustment_type value for size adjustment."),
        ({"strict": False}, "Not enough parameters to do resize action."),
        (
            {"adjustment_type": "EXACT_CAPACITY", "number": 2.5},
            "The 'number' must be an integer for adjustment type 'EXACT_CAPACITY'.",
        ),
        (
            {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 0.5},
            "The 'number' must be an integer for adjustment type 'CHANGE_IN_CAPACITY'.",
        ),
        (
            {"adjustment_type": "EXACT_CAPACITY", "number": -1},
            "The 'number' must be a non-negative integer for adjustment type 'EXACT_CAPACITY'.",
        ),
    ],
)
def test_resize_request_rejects_incomplete_adjustments_with_senlin_messages(
    body: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        ResizeRequest.model_validate(body)
    assert caught.value.errors()[0]["msg"] == message


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"adjustment_type": "HALF", "number": 1}, "adjustment_type"),
        ({"min_size": -1}, "min_size"),
        ({"max_size": -2}, "max_size"),
        ({"max_size": MAX_CAPACITY + 1}, "max_size"),
        ({"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 5, "min_step": -1}, "min_step"),
        ({"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": float("inf")}, "number"),
        ({"adjustment_type": "CHANGE_IN_CAPACITY", "number": 10**7}, "number"),
        ({"min_size": 1, "count": 3}, "count"),
    ],
)
def test_resize_request_names_the_out_of_bounds_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ResizeRequest.model_validate(body)
    assert caught.value.errors()[0]["loc"] == (field,)


def test_resize_request_accepts_a_percentage_with_min_step() -> None:
    req = ResizeRequest.model_validate(
        {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -12.5, "min_step": 2}
    )
    assert req.adjustment_type == PERCENT
    assert req.strict is True


# --- plan_resize ------------------------------------------------------------------------


def resize(**body: object) -> ResizeRequest:
    return ResizeRequest.model_validate(body)


def test_strict_resize_within_bounds_sets_the_new_capacity() -> None:
    plan = plan_resize(3, 1, 5, resize(adjustment_type="CHANGE_IN_CAPACITY", number=2))
    assert plan == ResizePlan(desired=5, min_size=1, max_size=5)


def test_strict_resize_beyond_max_size_is_rejected() -> None:
    with pytest.raises(
        InvalidRequest, match=re.escape("The target capacity (6) is greater than the cluster's")
    ):
        plan_resize(3, 1, 5, resize(adjustment_type="EXACT_CAPACITY", number=6))


def test_strict_resize_below_new_min_size_is_rejected() -> None:
    with pytest.raises(InvalidRequest, match=re.escape("is less than the specified min_size (3).")):
        plan_resize(3, 1, 5, resize(adjustment_type="EXACT_CAPACITY", number=2, min_size=3))


def test_non_strict_resize_is_truncated_to_the_clusters_bounds() -> None:
    req = resize(adjustment_type="CHANGE_IN_CAPACITY", number=10, strict=False)
    assert plan_resize(3, 1, 5, req).desired == 5
    req = resize(adjustment_type="CHANGE_IN_CAPACITY", number=-10, strict=False)
    assert plan_resize(3, 1, 5, req).desired == 1


def test_non_strict_resize_is_truncated_to_the_new_bounds() -> None:
    req = resize(adjustment_type="EXACT_CAPACITY", number=9, max_size=7, strict=False)
    assert plan_resize(3, 1, 5, req) == ResizePlan(desired=7, min_size=1, max_size=7)


def test_non_strict_resize_still_rejects_contradicting_bounds() -> None:
    req = resize(min_size=4, max_size=2, strict=False)
    with pytest.raises(InvalidRequest, match=re.escape("min_size (4) is greater than the spec")):
        plan_resize(3, 1, 5, req)


def test_bounds_only_resize_keeps_the_capacity() -> None:
    assert plan_resize(3, 1, 5, resize(min_size=0, max_size=10)) == ResizePlan(
        desired=3, min_size=0, max_size=10
    )


def test_non_strict_bounds_only_resize_truncates_the_capacity_into_them() -> None:
    assert plan_resize(3, 1, 5, resize(min_size=4, strict=False)).desired == 4
    assert plan_resize(3, 1, 5, resize(max_size=2, strict=False)).desired == 2


def test_strict_bounds_only_resize_rejects_bounds_excluding_the_capacity() -> None:
    with pytest.raises(InvalidRequest, match=re.escape("current desired_capacity (3)")):
        plan_resize(3, 1, 5, resize(min_size=4))


def test_resize_to_unbounded_max_size() -> None:
    plan = plan_resize(3, 1, 5, resize(adjustment_type="EXACT_CAPACITY", number=40, max_size=-1))
    assert plan == ResizePlan(desired=40, min_size=1, max_size=-1)


def test_percentage_resize_uses_min_step() -> None:
    req = resize(adjustment_type="CHANGE_IN_PERCENTAGE", number=10, min_step=3)
    assert plan_resize(4, 0, -1, req).desired == 7


@given(
    current=st.integers(0, 100),
    min_size=st.integers(0, 50),
    span=st.integers(0, 50),
    unbounded=st.booleans(),
    number=st.integers(-200, 200),
)
def test_non_strict_resize_always_lands_inside_the_bounds(
    current: int, min_size: int, span: int, unbounded: bool, number: int
) -> None:
    max_size = -1 if unbounded else min_size + span
    req = resize(adjustment_type="CHANGE_IN_CAPACITY", number=number, strict=False)
    plan = plan_resize(current, min_size, max_size, req)
    assert plan.desired >= min_size
    assert unbounded or plan.desired <= max_size


@pytest.mark.parametrize("count", [-1, MAX_CAPACITY + 1])
def test_scaling_count_out_of_bounds_names_count(count: int) -> None:
    with pytest.raises(InvalidRequest, match=r"^count: must be between 1 and"):
        check_scale_count(count, "scale-out")


@pytest.mark.parametrize("operation", ["scale-in", "scale-out"])
def test_scaling_by_zero_is_rejected(operation: str) -> None:
    with pytest.raises(InvalidRequest, match=r"^Count for scale-(in|out) request cannot be 0\.$"):
        check_scale_count(0, operation)
