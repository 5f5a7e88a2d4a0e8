"""`OS::Heat::ScalingPolicy`: a signal URL that resizes a scaling group of the same stack."""

from __future__ import annotations

from typing import Any, Final

from domain.hot.properties import SECONDS_BOUNDS, SIZE_BOUNDS, ResourceType, prop

NAME: Final = "OS::Heat::ScalingPolicy"

TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "auto_scaling_group_id": prop("string", required=True, update_allowed=True),
        "adjustment_type": prop(
            "string",
            required=True,
            update_allowed=True,
            allowed_values=(
                "change_in_capacity",
                "exact_capacity",
                "percent_change_in_capacity",
            ),
        ),
        "scaling_adjustment": prop("number", required=True, update_allowed=True),
        "cooldown": prop("integer", **SECONDS_BOUNDS),
        "min_adjustment_step": prop("integer", **SIZE_BOUNDS),
    },
    attributes=frozenset({"alarm_url", "signal_url"}),
)


def policy_attributes(
    project_id: str, stack_name: str, stack_id: str, resource: str
) -> dict[str, Any]:
    """`signal_url` and `alarm_url`: where a POST applies the policy (Heat's resource signal)."""
    url = f"/v1/{project_id}/stacks/{stack_name}/{stack_id}/resources/{resource}/signal"
    return {"signal_url": url, "alarm_url": url}
