"""The state after an operation, decided by pure domain functions (no Temporal)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.actions import ActionName
from domain.cluster import rules as cluster_rules
from domain.cluster import transitions as clusters
from domain.cluster.nodes import NodeState
from domain.cluster.requests import ClusterOperationRequest
from domain.cluster.state import ClusterStatus, RunningOperation
from domain.errors import Conflict, NotFound
from domain.stack import transitions as stacks
from domain.stack.requests import StackOperationRequest
from domain.stack.state import StackAction, StackLock, StackOperation, Status
from tests.unit.cluster.test_rules import state as cluster
from tests.unit.stack.test_rules import resource, stack

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TEMPLATE = {"heat_template_version": "2021-04-16", "resources": {}}


def test_an_accepted_operation_makes_the_stack_busy_and_in_progress() -> None:
    op = StackOperation(action_id="a1", action=StackAction.UPDATE, template=TEMPLATE)
    req = StackOperationRequest(action_id="a1", timeout_mins=5, disable_rollback=False)

    after = stacks.accepted(stack(StackAction.CREATE, Status.COMPLETE), op, req, "go", NOW)

    assert (after.stack_status, after.status_reason, after.busy) == ("UPDATE_IN_PROGRESS", "go", op)
    assert (after.timeout_mins, after.disable_rollback, after.updated_at) == (5, False, NOW)


def test_a_failed_update_keeps_its_template_so_the_next_update_redoes_what_it_missed() -> None:
    op = StackOperation(action_id="a1", action=StackAction.UPDATE, template=TEMPLATE)
    ending = stacks.OperationEnding({"vm": resource("vm")}, {"ip": "x"}, "vm: boom")

    after = stacks.finished(
        stack(StackAction.UPDATE, Status.IN_PROGRESS, busy=op),
        op,
        StackAction.UPDATE,
        ending,
        final=True,
        now=NOW,
    )

    assert (after.stack_status, after.status_reason) == ("UPDATE_FAILED", "vm: boom")
    assert (after.template, after.outputs, after.busy) == (TEMPLATE, {"ip": "x"}, None)


def test_before_a_rollback_the_stack_stays_busy() -> None:
    op = StackOperation(action_id="a1", action=StackAction.UPDATE, template=TEMPLATE)
    ending = stacks.OperationEnding({}, {}, "boom")
    busy = stack(StackAction.UPDATE, Status.IN_PROGRESS, busy=op)

    after = stacks.finished(busy, op, StackAction.UPDATE, ending, final=False, now=NOW)

    assert after.busy == op and not after.deleted


@pytest.mark.parametrize(
    ("action", "error", "expect"),
    [
        (StackAction.DELETE, "", {"deleted": True}),
        (StackAction.DELETE, "boom", {"deleted": False}),
        (StackAction.SUSPEND, "", {"suspended": True}),
        (StackAction.RESUME, "", {"suspended": False}),
        (StackAction.UNLOCK, "", {"lock": None}),
    ],
)
def test_what_each_ending_changes(
    action: StackAction, error: str, expect: dict[str, object]
) -> None:
    lock = StackLock(locked_at=NOW)
    before = stack(action, Status.IN_PROGRESS, suspended=action == StackAction.RESUME, lock=lock)
    op = StackOperation(action_id="a1", action=action)

    after = stacks.finished(
        before, op, action, stacks.OperationEnding({}, {}, error), final=True, now=NOW
    )

    assert {k: getattr(after, k) for k in expect} == expect


def test_a_node_check_keeps_the_cluster_status_unless_it_fails() -> None:
    for before in (ClusterStatus.ACTIVE, ClusterStatus.WARNING, ClusterStatus.ERROR):
        ok = clusters.finished(cluster(status=before), ActionName.NODE_CHECK, True, "", None)
        assert ok.status == before
    failed = clusters.finished(cluster(), ActionName.NODE_CHECK, False, "shutoff", None)
    assert (failed.status, failed.status_reason) == (ClusterStatus.WARNING, "shutoff")


def test_a_node_check_names_nodes_of_this_cluster_only() -> None:
    node = NodeState(
        node_id="n1", name="web-1", index=1, profile_id="pr", created_at=NOW, updated_at=NOW
    )
    members = cluster(nodes=[node])
    rule = cluster_rules.ensure_can_run(ActionName.NODE_CHECK)

    rule(members, ClusterOperationRequest(params={"nodes": ["n1"]}))
    with pytest.raises(NotFound, match="n2"):
        rule(members, ClusterOperationRequest(params={"nodes": ["n2"]}))


def test_a_deleted_cluster_keeps_its_nodes_for_the_record() -> None:
    node = NodeState(
        node_id="n1", name="web-1", index=1, profile_id="pr", created_at=NOW, updated_at=NOW
    )
    after = clusters.finished(cluster(nodes=[node]), ActionName.CLUSTER_DELETE, True, "", [])

    assert (after.deleted, after.status, after.nodes) == (True, ClusterStatus.DELETING, [node])


def test_health_verdicts_change_only_an_idle_active_or_warning_cluster() -> None:
    warned = clusters.with_health_verdict(cluster(), "web-1 unreachable")
    assert (warned.status, warned.status_reason) == (ClusterStatus.WARNING, "web-1 unreachable")
    cleared = clusters.with_health_verdict(warned, "")
    assert (cleared.status, cleared.status_reason) == (ClusterStatus.ACTIVE, "Health checks pass")
    busy = cluster(busy=RunningOperation(action_id="a", name=ActionName.CLUSTER_SCALE_IN))
    assert clusters.with_health_verdict(busy, "late").status == ClusterStatus.ACTIVE
    assert clusters.with_health_verdict(busy, "late").health_warning == "late"
    errored = cluster(status=ClusterStatus.ERROR)
    assert clusters.with_health_verdict(errored, "").status == ClusterStatus.ERROR


def test_creating_twice_is_a_conflict() -> None:
    with pytest.raises(Conflict, match="already exists"):
        cluster_rules.ensure_can_run(ActionName.CLUSTER_CREATE)(
            cluster(), ClusterOperationRequest()
        )
