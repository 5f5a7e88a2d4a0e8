"""Pure rules of clusters: sizes, busy, lock, status after an operation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.actions import ActionName
from domain.cluster.nodes import NodeStatus, node_name, node_status_from_server
from domain.cluster.rules import ensure_can_lock, ensure_can_start, ensure_can_unlock
from domain.cluster.scaling import validate_capacity
from domain.cluster.state import (
    ClusterSpec,
    ClusterState,
    ClusterStatus,
    LockInfo,
    RunningOperation,
)
from domain.cluster.transitions import status_after
from domain.errors import Conflict, InvalidRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def state(**changes: object) -> ClusterState:
    spec = ClusterSpec(
        cluster_id="c1", project_id="p", name="web", profile_id="pr", desired_capacity=2
    )
    base = ClusterState(spec=spec, created=True, status=ClusterStatus.ACTIVE)
    return base.model_copy(update=changes)


def test_capacity_below_min_size_is_rejected_with_senlin_wording() -> None:
    with pytest.raises(
        InvalidRequest,
        match=r"The target capacity \(0\) is less than the "
        r"cluster's min_size \(1\)\.",
    ):
        validate_capacity(0, 1, -1)


@pytest.mark.parametrize(("desired", "min_size", "max_size"), [(5, 1, 4), (1, 3, 2)])
def test_capacity_contradictions_are_rejected(desired: int, min_size: int, max_size: int) -> None:
    with pytest.raises(InvalidRequest):
        validate_capacity(desired, min_size, max_size)


@pytest.mark.parametrize(("desired", "min_size", "max_size"), [(0, 0, -1), (3, 1, 3), (9, 0, -1)])
def test_capacity_within_bounds_is_accepted(desired: int, min_size: int, max_size: int) -> None:
    validate_capacity(desired, min_size, max_size)


def test_busy_cluster_refuses_another_operation() -> None:
    busy = state(busy=RunningOperation(action_id="a", name=ActionName.CLUSTER_CHECK))
    with pytest.raises(Conflict, match=r"already has an action \(CLUSTER_CHECK\) in progress"):
        ensure_can_start(busy, ActionName.CLUSTER_DELETE)


def test_locked_cluster_refuses_delete_but_allows_check() -> None:
    locked = state(lock=LockInfo(reason="kernel patch", owner="ops", locked_at=NOW))
    with pytest.raises(Conflict, match="locked by ops"):
        ensure_can_start(locked, ActionName.CLUSTER_DELETE)
    ensure_can_start(locked, ActionName.CLUSTER_CHECK)


def test_operations_wait_for_creation() -> None:
    with pytest.raises(Conflict, match="still being created"):
        ensure_can_start(state(created=False), ActionName.CLUSTER_CHECK)


def test_deleting_cluster_refuses_everything() -> None:
    with pytest.raises(Conflict, match="being deleted"):
        ensure_can_start(state(status=ClusterStatus.DELETING), ActionName.CLUSTER_CHECK)
    with pytest.raises(Conflict):
        ensure_can_lock(state(deleted=True))


def test_lock_twice_and_unlock_unlocked_conflict() -> None:
    locked = state(lock=LockInfo(locked_at=NOW))
    with pytest.raises(Conflict, match="already locked"):
        ensure_can_lock(locked)
    with pytest.raises(Conflict, match="not locked"):
        ensure_can_unlock(state())
    ensure_can_unlock(locked)


def test_status_after_operations() -> None:
    assert status_after(ActionName.CLUSTER_CREATE, True, ClusterStatus.CREATING) == "ACTIVE"
    assert status_after(ActionName.CLUSTER_CREATE, False, ClusterStatus.CREATING) == "ERROR"
    assert status_after(ActionName.CLUSTER_CHECK, False, ClusterStatus.ACTIVE) == "WARNING"


@pytest.mark.parametrize(
    ("server", "node"),
    [
        ("ACTIVE", NodeStatus.ACTIVE),
        ("active", NodeStatus.ACTIVE),
        ("SHUTOFF", NodeStatus.ERROR),
        ("ERROR", NodeStatus.ERROR),
        ("PAUSED", NodeStatus.ERROR),
        (None, NodeStatus.ERROR),
        ("BUILD", NodeStatus.CREATING),
        ("MIGRATING", NodeStatus.WARNING),
    ],
)
def test_node_status_follows_server_status(server: str | None, node: NodeStatus) -> None:
    status, reason = node_status_from_server(server)
    assert status == node
    assert (reason == "") == (node == NodeStatus.ACTIVE)


def test_nodes_are_named_after_the_cluster() -> None:
    assert node_name("web", 3) == "web-3"
