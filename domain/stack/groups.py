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
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from domain.cluster.policies.deletion import DeletionCriteria
from domain.cluster.scaling import AdjustmentType, calculate_desired, truncate_desired
from domain.cluster.state import MAX_CAPACITY
from domain.errors import InvalidRequest
from domain.victims import VictimCandidate, order_victims

GROUP_TEMPLATE_VERSION = "2021-04-16"
#: The group attribute holding what the group reads of each member (`member_view`).
MEMBERS: Final = "members"
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
    #: OS::Heat::ResourceGroup: members are named "0", "1", … and this variable is
    #: replaced by the member's name in its properties.
    index_var: str | None = None
    #: Names removed first and never used again (ResourceGroup's removal_policies).
    skip: list[str] = Field(default_factory=list)
    #: A rolling update's batch: at most this many members take the new definition
    #: (new members included), failed ones first; None gives it to every member.
    max_updates: int | None = None


class RollingUpdate(BaseModel):
    """`update_policy.rolling_update` (or ResourceGroup's `batch_create`), Heat's defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_in_service: int = Field(0, ge=0, le=MAX_CAPACITY)
    max_batch_size: int = Field(1, ge=1, le=MAX_CAPACITY)
    pause_time: float = Field(0, ge=0, le=86_400)


def rolling_policy(
    update_policy: Mapping[str, Any], key: str = "rolling_update"
) -> RollingUpdate | None:
    """The group's `update_policy[key]`, or None when it has none (400 if malformed)."""
    raw = update_policy.get(key)
    if raw is None:
        return None
    if key == "batch_create" and isinstance(raw, Mapping) and "min_in_service" in raw:
        raise InvalidRequest("update_policy.batch_create: min_in_service is not allowed")
    try:
        return RollingUpdate.model_validate(raw)
    except ValidationError as err:
        raise InvalidRequest(f"update_policy.{key}: {err.errors()[0]['msg']}") from None


def rolling_batches(
    target: int, current: int, batch_size: int, min_in_service: int
) -> list[tuple[int, int]]:
    """Heat's batches (`heat.scaling.rolling_update`): (group size, members updated) each.

    Each batch keeps at least `min_in_service` members (and never more than the target
    beyond the batch) while at most `batch_size` take the new definition.
    """
    batches: list[tuple[int, int]] = []
    updated = 0
    while not (updated >= current == target):
        in_service = min(min_in_service, target, current)
        size = min(batch_size, max(target - updated, 0))
        capacity = size + max(min(current, target - size), in_service)
        batches.append((capacity, size))
        updated += size - max(capacity - max(current, target), 0)
        current = capacity
    return batches


def rolled_resources(
    new: Mapping[str, Any], old: Mapping[str, Any], order: Sequence[str], max_updates: int
) -> dict[str, Any]:
    """A batch's member definitions: `max_updates` changes (new members first), the rest old.

    `order` ranks existing members for the new definition: failed ones first.
    """
    budget = max_updates - sum(1 for name in new if name not in old)
    resources = dict(new)
    for name in sorted(resources, key=lambda n: order.index(n) if n in order else -1):
        if name not in old or old[name] == new[name]:
            continue
        if budget > 0:
            budget -= 1
        else:
            resources[name] = old[name]
    return resources


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


def indexed_members(members: Sequence[GroupMember], size: int, skip: Sequence[str]) -> list[str]:
    """ResourceGroup's member names after resizing to `size`, in index order.

    Skipped names go first, then failed members (CHECK_FAILED included), then the
    highest indexes; new members take the lowest indexes neither used nor skipped.
    """
    if size < 0:
        raise InvalidRequest(f"A resource group cannot have {size} members.")
    banned = set(skip)
    kept = [m for m in members if m.name not in banned]
    excess = len(kept) - size
    if excess > 0:
        ranked = sorted(kept, key=lambda m: (not m.failed, -_index_of(m.name), m.name))
        victims = {m.name for m in ranked[:excess]}
        kept = [m for m in kept if m.name not in victims]
    names = [m.name for m in kept]
    taken = banned | set(names)
    index = 0
    while len(names) < size:
        if str(index) not in taken:
            names.append(str(index))
        index += 1
    return sorted(names, key=member_order)


def _index_of(name: str) -> int:
    return int(name) if name.isascii() and name.isdigit() else -1


def member_order(name: str) -> tuple[int, str]:
    """Sort key of member names: indexes by number, then other names alphabetically."""
    index = _index_of(name)
    return (index, "") if index >= 0 else (1 << 62, name)


def with_index(value: Any, index_var: str, name: str) -> Any:
    """`value` with `index_var` replaced by `name` in every string, recursively."""
    if isinstance(value, str):
        return value.replace(index_var, name)
    if isinstance(value, dict):
        return {k: with_index(v, index_var, name) for k, v in value.items()}
    if isinstance(value, list):
        return [with_index(v, index_var, name) for v in value]
    return value


def indexed_template(
    resource_def: Mapping[str, Any], names: Sequence[str], index_var: str
) -> dict[str, Any]:
    """ResourceGroup's nested template: member `n` with `index_var` replaced by `n`."""
    properties = {k: v for k, v in (resource_def.get("properties") or {}).items() if v is not None}
    resources: dict[str, Any] = {}
    for name in names:
        member: dict[str, Any] = {"type": resource_def["type"]}
        if properties:
            member["properties"] = with_index(properties, index_var, name)
        if resource_def.get("metadata"):
            member["metadata"] = dict(resource_def["metadata"])
        resources[name] = member
    return {"heat_template_version": GROUP_TEMPLATE_VERSION, "resources": resources}


def member_view(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """What a group reads of a member: its attributes, and a nested stack's outputs as such."""
    outputs = attributes.get("outputs")
    return {**attributes, **outputs} if isinstance(outputs, dict) else dict(attributes)


def group_target(
    members: Sequence[GroupMember],
    spec: GroupSpec,
    old_resources: Mapping[str, Any],
    new_name: Callable[[], str],
) -> dict[str, Any]:
    """The nested template a group's request moves its nested stack to.

    `members` come oldest first; a rolling batch gives the new definition to failed
    members first, then (ResourceGroup) the highest indexes or (scaling group) the oldest.
    """
    if spec.index_var is not None:
        names = indexed_members(members, spec.size, spec.skip)
        template = indexed_template(spec.member, names, spec.index_var)
        ranked = sorted(members, key=lambda m: (not m.failed, -_index_of(m.name)))
    else:
        names = group_members(members, spec.size, new_name)
        template = group_template(spec.member, names)
        ranked = sorted(members, key=lambda m: not m.failed)
    if spec.max_updates is not None:
        order = [m.name for m in ranked]
        template["resources"] = rolled_resources(
            template["resources"], old_resources, order, spec.max_updates
        )
    return template


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
