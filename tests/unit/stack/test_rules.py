"""Stack state rules: Heat's lock transition table, mark-unhealthy, groups, scaling signals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import Conflict, InvalidRequest, NotFound
from domain.stack.groups import GroupMember, group_members, group_size, group_template, scaled_size
from domain.stack.requests import (
    MarkResourceRequest,
    ResourceSignalRequest,
    StackOperationRequest,
)
from domain.stack.rules import (
    ensure_can_lock,
    ensure_can_mark,
    ensure_can_start,
    ensure_can_unlock,
    find_resource,
    plan_scaling_signal,
)
from domain.stack.state import (
    ResourceState,
    StackAction,
    StackLock,
    StackOperation,
    StackSpec,
    StackState,
    Status,
)
from domain.stack.transitions import DEFAULT_UNHEALTHY_REASON, mark_resource

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MARK_VM = MarkResourceRequest(resource_name="vm", mark_unhealthy=True)


def resource(name: str, **extra: object) -> ResourceState:
    values: dict[str, object] = {
        "name": name,
        "type": "OS::Nova::Server",
        "resource_id": f"id-{name}",
        "physical_id": f"pid-{name}",
        "action": StackAction.CREATE,
        "created_at": T0,
        "updated_at": T0,
    }
    values.update(extra)
    return ResourceState.model_validate(values)


def stack(action: StackAction, status: Status, **extra: object) -> StackState:
    values: dict[str, object] = {
        "spec": StackSpec(stack_id="s1", project_id="p", name="web"),
        "action": action,
        "status": status,
        "resources": {"vm": resource("vm")},
    }
    values.update(extra)
    return StackState.model_validate(values)


LOCKABLE = [
    (a, Status.COMPLETE) for a in StackAction if a not in (StackAction.INIT, StackAction.DELETE)
]


@pytest.mark.parametrize(("action", "status"), [*LOCKABLE, (StackAction.LOCK, Status.FAILED)])
def test_lock_is_allowed_from_complete_states_and_lock_failed(
    action: StackAction, status: Status
) -> None:
    ensure_can_lock(stack(action, status))


@pytest.mark.parametrize(
    ("action", "status"),
    [
        (StackAction.INIT, Status.COMPLETE),
        (StackAction.DELETE, Status.COMPLETE),
        (StackAction.UPDATE, Status.FAILED),
        (StackAction.UNLOCK, Status.FAILED),
        (StackAction.CREATE, Status.IN_PROGRESS),
    ],
)
def test_lock_is_refused_elsewhere(action: StackAction, status: Status) -> None:
    with pytest.raises(Conflict):
        ensure_can_lock(stack(action, status))


@pytest.mark.parametrize(
    ("state", "allowed"),
    [
        ("LOCK_COMPLETE", True),
        ("LOCK_FAILED", True),
        ("UNLOCK_FAILED", True),
        ("UNLOCK_COMPLETE", False),
        ("UPDATE_COMPLETE", False),
    ],
)
def test_unlock_only_from_lock_states(state: str, allowed: bool) -> None:
    action, status = state.rsplit("_", 1)
    target = stack(StackAction(action), Status(status))
    if allowed:
        ensure_can_unlock(target)
    else:
        with pytest.raises(Conflict):
            ensure_can_unlock(target)


def test_locked_stack_refuses_every_operation() -> None:
    locked = stack(StackAction.LOCK, Status.COMPLETE)
    for action in (StackAction.UPDATE, StackAction.DELETE, StackAction.CHECK, StackAction.SUSPEND):
        with pytest.raises(Conflict, match="is locked"):
            ensure_can_start(locked, action)
    with pytest.raises(Conflict, match="is locked"):
        ensure_can_mark(locked, MARK_VM)


def test_failed_lock_allows_only_delete() -> None:
    failed = stack(StackAction.LOCK, Status.FAILED)
    ensure_can_start(failed, StackAction.DELETE)
    with pytest.raises(Conflict):
        ensure_can_start(failed, StackAction.UPDATE)


def test_busy_stack_answers_with_heat_wording() -> None:
    busy = stack(
        StackAction.UPDATE,
        Status.IN_PROGRESS,
        busy=StackOperation(action_id="a", action=StackAction.UPDATE),
    )
    with pytest.raises(Conflict) as err:
        ensure_can_mark(busy, MARK_VM)
    assert err.value.message == "Stack web already has an action (UPDATE) in progress."


def test_find_resource_by_physical_id_rejects_ambiguity() -> None:
    state = stack(
        StackAction.CREATE,
        Status.COMPLETE,
        resources={"a": resource("a", physical_id="x"), "b": resource("b", physical_id="x")},
    )
    with pytest.raises(InvalidRequest, match="Multiple resources"):
        find_resource(state, "x")
    assert find_resource(state, "a").name == "a"
    with pytest.raises(NotFound):
        find_resource(state, "zz")


def test_mark_rules() -> None:
    vm = resource("vm")
    marked = mark_resource(vm, MarkResourceRequest(resource_name="vm", mark_unhealthy=True), T0)
    assert marked is not None
    assert (marked.resource_status, marked.status_reason, marked.marked) == (
        "CHECK_FAILED",
        DEFAULT_UNHEALTHY_REASON,
        True,
    )
    clear = MarkResourceRequest(resource_name="vm", mark_unhealthy=False)
    assert mark_resource(vm, clear, T0) is None  # false on a healthy resource: no change
    cleared = mark_resource(marked, clear, T0)
    assert cleared is not None and cleared.resource_status == "CHECK_COMPLETE"
    deleting = resource("vm", action=StackAction.DELETE, status=Status.IN_PROGRESS)
    mark = MarkResourceRequest(resource_name="vm", mark_unhealthy=True)
    assert mark_resource(deleting, mark, T0) is None


def test_group_drops_failed_then_oldest_members_and_names_new_ones() -> None:
    members = [
        GroupMember(name="a", failed=False, created=True, created_at=T0),
        GroupMember(name="b", failed=True, created=True, created_at=T0 + timedelta(hours=1)),
        GroupMember(name="c", failed=False, created=True, created_at=T0 + timedelta(hours=2)),
    ]
    names = iter(["n1", "n2"])
    assert group_members(members, 2, lambda: next(names)) == ["a", "c"]
    assert group_members(members, 1, lambda: next(names)) == ["c"]
    assert group_members(members, 4, lambda: next(names)) == ["a", "b", "c", "n1"]
    assert group_template({"type": "OS::Heat::None"}, ["x"])["resources"] == {
        "x": {"type": "OS::Heat::None"}
    }


def test_group_size_keeps_scaled_size_unless_desired_changes() -> None:
    props = {"min_size": 1, "max_size": 5, "desired_capacity": 2}
    assert group_size(props, {}, None) == 2
    assert group_size(props, props, 4) == 4
    assert group_size({**props, "desired_capacity": 3}, props, 4) == 3
    assert group_size({**props, "max_size": 3}, props, 4) == 3


@pytest.mark.parametrize(
    ("kind", "adjustment", "current", "expected"),
    [
        ("change_in_capacity", 1, 2, 3),
        ("change_in_capacity", -5, 2, 1),
        ("exact_capacity", 9, 2, 5),
        ("percent_change_in_capacity", 50, 2, 3),
        ("percent_change_in_capacity", -10, 4, 3),
    ],
)
def test_scaled_size_is_clamped(kind: str, adjustment: int, current: int, expected: int) -> None:
    policy = {"adjustment_type": kind, "scaling_adjustment": adjustment}
    assert scaled_size(policy, {"min_size": 1, "max_size": 5}, current) == expected


def test_scaling_signal_honours_cooldown_and_bounds() -> None:
    group = resource(
        "asg",
        type="OS::Heat::AutoScalingGroup",
        resolved={"min_size": 1, "max_size": 3},
        attributes={"current_size": 2},
    )
    policy = resource(
        "up",
        type="OS::Heat::ScalingPolicy",
        resolved={
            "auto_scaling_group_id": "pid-asg",
            "adjustment_type": "change_in_capacity",
            "scaling_adjustment": 1,
            "cooldown": 60,
        },
    )
    state = stack(StackAction.CREATE, Status.COMPLETE, resources={"asg": group, "up": policy})
    req = ResourceSignalRequest(resource_name="up")
    plan = plan_scaling_signal(state, req, T0)
    assert (plan.group, plan.current, plan.size, plan.ignored) == ("asg", 2, 3, "")
    cooling = policy.model_copy(update={"attributes": {"last_adjustment": T0.isoformat()}})
    state.resources["up"] = cooling
    assert "cooldown" in plan_scaling_signal(state, req, T0 + timedelta(seconds=30)).ignored
    assert not plan_scaling_signal(state, req, T0 + timedelta(seconds=61)).ignored
    with pytest.raises(InvalidRequest, match="does not accept signals"):
        plan_scaling_signal(state, ResourceSignalRequest(resource_name="asg"), T0)


@pytest.mark.parametrize("state", ["LOCK_FAILED", "UNLOCK_FAILED"])
def test_mark_unhealthy_is_refused_after_a_failed_lock_or_unlock(state: str) -> None:
    action, status = state.rsplit("_", 1)
    with pytest.raises(Conflict, match="only"):
        ensure_can_mark(stack(StackAction(action), Status(status)), MARK_VM)


def test_suspended_stack_resumes_even_after_lock_and_unlock() -> None:
    unlocked = stack(StackAction.UNLOCK, Status.COMPLETE, suspended=True)
    ensure_can_start(unlocked, StackAction.RESUME)
    with pytest.raises(Conflict, match="already suspended"):
        ensure_can_start(unlocked, StackAction.SUSPEND)
    with pytest.raises(Conflict, match="only a suspended stack"):
        ensure_can_start(stack(StackAction.UNLOCK, Status.COMPLETE), StackAction.RESUME)


def test_nested_stack_locked_with_its_parent_unlocks_only_with_it() -> None:
    lock = StackLock(locked_at=T0, parent_id="parent-1")
    nested = stack(StackAction.LOCK, Status.COMPLETE, lock=lock)
    with pytest.raises(Conflict, match="parent"):
        ensure_can_unlock(nested)
    ensure_can_unlock(nested, StackOperationRequest(notify="op-of-the-parent"))
