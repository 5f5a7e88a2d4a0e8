"""`OS::Heat::AutoScalingGroup`: a nested stack of identical members, resized by signals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.hot.properties import SECONDS_BOUNDS, SIZE_BOUNDS, ResourceType, prop

NAME: Final = "OS::Heat::AutoScalingGroup"


def _check_group_sizes(props: Mapping[str, Any], field: str) -> None:
    low, high = props.get("min_size"), props.get("max_size")
    desired = props.get("desired_capacity")
    if low is not None and high is not None and low > high:
        raise InvalidRequest(f"{field}.min_size: min_size can not be greater than max_size")
    if desired is not None and (
        (low is not None and desired < low) or (high is not None and desired > high)
    ):
        raise InvalidRequest(
            f"{field}.desired_capacity: desired_capacity must be between min_size and max_size"
        )


TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "min_size": prop("integer", required=True, **SIZE_BOUNDS),
        "max_size": prop("integer", required=True, **SIZE_BOUNDS),
        "desired_capacity": prop("integer", **SIZE_BOUNDS),
        "cooldown": prop("integer", **SECONDS_BOUNDS),
        "resource": prop("map", required=True, update_allowed=True),
    },
    attributes=frozenset({"outputs", "outputs_list", "current_size", "refs", "refs_map"}),
    # The member's definition is resolved in this template, as Heat resolves the
    # property (`get_param` in it reads this stack's parameters).
    member_definition="resource",
    member_attributes={"outputs": "map", "outputs_list": "list"},
    check=_check_group_sizes,
)
