"""Heat scaling groups: members as a generated nested template, sizes, scaling signals.

An `OS::Heat::AutoScalingGroup` is a nested stack whose template has one resource per
member, all with the group's `resource` definition. The nested stack itself decides
which members go on scale-down, because it alone knows their current states: failed
members first, then the oldest, then by name (`order_victims(..., OLDEST_FIRST)`,
the rule clusters share). Failed members that stay are replaced by the nested
stack's normal update rule, keeping their names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from domain.deletion_policy import DeletionCriteria
from domain.errors import InvalidRequest
from domain.scaling import AdjustmentType, calculate_desired, truncate_desired
from domain.victims import VictimCandidate, order_victims

GROUP_TEMPLATE_VERSION = "2021-04-16"
#: Heat's spelling of adjustment types, mapped onto the shared arithmetic.
ADJUSTMENTS = {
    "change_in_capacity": AdjustmentType.CHANGE_IN_CAPACITY,
    "exact_capacity": AdjustmentType.EXACT_CAPACITY,
    "percent_change_in_capacity": AdjustmentType.CHANGE_IN_PERCENTAGE,
}


class GroupSpec(BaseModel):
    """What a group's nested stack should hold: `size` members of `member`."""

    model_config = ConfigDict(frozen=True)

    member: dict[str, Any]
    size: int


class GroupMember(BaseModel):
    """A member as the group's nested stack knows it."""

    model_config = ConfigDict(frozen=True)

    name: str
    failed: bool
    created: bool
    created_at: datetime | None = None


def group_members(
    members: Sequence[GroupMember], size: int, new_name: Callable[[], str]
) -> list[str]:
    """The member names after resizing to `size`: victims dropped, new names added."""
    if size < 0:
        raise InvalidRequest(f"A scaling group cannot have {size} members.")
    keep = [m.name for m in members]
    excess = len(keep) - size
    if excess > 0:
        candidates = [
            VictimCandidate(
                id=m.name, name=m.name, created_at=m.created_at, failed=m.failed, created=m.created
            )
            for m in members
        ]
        victims = {
            c.name for c in order_victims(candidates, DeletionCriteria.OLDEST_FIRST)[:excess]
        }
        keep = [name for name in keep if name not in victims]
    taken = set(keep)
    while len(keep) < size:
        name = new_name()
        if name not in taken:
            keep.append(name)
            taken.add(name)
    return keep


def group_template(member: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The nested template of a group: one resource per member name."""
    return {
        "heat_template_version": GROUP_TEMPLATE_VERSION,
        "resources": {name: dict(member) for name in names},
    }


def group_size(props: Mapping[str, Any], previous: Mapping[str, Any], current: int | None) -> int:
    """How many members the group should have after its properties changed.

    A new `desired_capacity` wins; otherwise the size the group has now (after any
    scaling signals) is kept, clamped into the (maybe new) bounds.
    """
    low, high = int(props["min_size"]), int(props["max_size"])
    desired = props.get("desired_capacity")
    if desired is not None and (current is None or desired != previous.get("desired_capacity")):
        return truncate_desired(int(desired), low, high)
    return truncate_desired(current if current is not None else low, low, high)


def scaled_size(policy: Mapping[str, Any], group: Mapping[str, Any], current: int) -> int:
    """The size a scaling signal asks for, clamped into the group's bounds."""
    kind = ADJUSTMENTS[str(policy["adjustment_type"])]
    step = policy.get("min_adjustment_step")
    desired = calculate_desired(
        current, kind, float(policy["scaling_adjustment"]), int(step) if step else None
    )
    return truncate_desired(desired, int(group["min_size"]), int(group["max_size"]))
