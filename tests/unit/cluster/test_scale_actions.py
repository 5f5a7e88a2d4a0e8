"""Senlin's scale actions: what the service refuses (400), what the action refuses
(FAILED, the cluster unchanged), a scaling policy's say, and its cooldown (409)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.actions import ActionName
from domain.cluster.membership import plan_membership
from domain.cluster.nodes import NodeState
from domain.cluster.requests import ClusterOperationRequest
from domain.cluster.rules import ensure_can_run
from domain.cluster.scale_actions import after_scale, decide_scale, ensure_out_of_cooldown
from domain.cluster.state import AttachedPolicy, ClusterSpec, ClusterState, ClusterStatus
from domain.errors import Conflict, InvalidRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)
OUT, IN = ActionName.CLUSTER_SCALE_OUT, ActionName.CLUSTER_SCALE_IN


def cluster(size: int, *, min_size: int = 0, max_size: int = -1, **policy: Any) -> ClusterState:
    spec = ClusterSpec(
        cluster_id="c1", project_id="p", name="web", profile_id="pr", desired_capacity=size,
        min_size=min_size, max_size=max_size,
    )  # fmt: skip
    nodes = [
        NodeState(
            node_id=f"n{i}",
            name=f"web-{i}",
            index=i,
            profile_id="pr",
            created_at=NOW,
            updated_at=NOW,
        )
        for i in range(size)
    ]
    bound = [AttachedPolicy(policy_id="sp", name="grow", type="senlin.policy.scaling", **policy)]
    return ClusterState(
        spec=spec, nodes=nodes, desired_capacity=size, created=True, status=ClusterStatus.ACTIVE,
        policies=bound if policy else [],
    )  # fmt: skip


def scaling(event: ActionName, **adjustment: object) -> dict[str, Any]:
    return {"properties": {"event": event.value, "adjustment": adjustment}}


def test_without_a_policy_the_given_count_or_one_runs_within_the_limits() -> None:
    assert decide_scale(cluster(2, max_size=5), OUT, None) == (1, "")
    assert decide_scale(cluster(2, max_size=5), OUT, 3) == (3, "")
    assert decide_scale(cluster(4, max_size=5), OUT, 2) == (
        0,
        "The target capacity (6) is greater than the cluster's max_size (5).",
    )
    assert decide_scale(cluster(1, min_size=1), IN, None) == (
        0,
        "The target capacity (0) is less than the cluster's min_size (1).",
    )


def test_a_scale_in_count_is_cut_to_the_nodes_there_are() -> None:
    assert decide_scale(cluster(2), IN, 5) == (2, "")


def test_a_policy_refusal_names_the_policy_and_best_effort_cuts() -> None:
    strict = cluster(1, **scaling(IN, number=50, type="CHANGE_IN_PERCENTAGE", min_step=2))
    assert decide_scale(strict, IN, 2) == (
        0,
        "Policy check failure: Failed policy 'grow': The target capacity (-1) is less than "
        "the cluster's min_size (0).",
    )
    lenient = cluster(4, max_size=5, **scaling(OUT, number=2, best_effort=True))
    assert decide_scale(lenient, OUT, 2) == (1, "")
    assert decide_scale(lenient, OUT, None) == (1, "")
    # the policy serves one event: a scale-out policy says nothing of a scale-in
    assert decide_scale(cluster(3, **scaling(OUT, number=2)), IN, None) == (1, "")


def test_the_service_refuses_only_a_zero_count_or_the_per_cluster_maximum() -> None:
    state = cluster(4, max_size=5)
    with pytest.raises(InvalidRequest, match=r"^Count for scale-out request cannot be 0\.$"):
        plan_membership(state, OUT, {"count": 0})
    with pytest.raises(InvalidRequest, match="maximum number of nodes allowed per cluster"):
        plan_membership(state, OUT, {"count": 1999})
    refused = plan_membership(state, OUT, {"count": 2})
    assert refused.refusal and refused.add == 0 and refused.desired_capacity == 4
    ensure_can_run(OUT)(state, ClusterOperationRequest(params={"count": 2}))  # no 400


def test_a_cooldown_refuses_the_next_scale_of_its_event_until_it_has_passed() -> None:
    state = cluster(2, **scaling(OUT, number=1, cooldown=60))
    ensure_out_of_cooldown(state, OUT, NOW)  # never scaled: no cooldown
    scaled = after_scale(state, OUT, "", NOW)
    assert scaled.policies[0].last_op == NOW
    with pytest.raises(Conflict, match=r"cannot be processed due to Policy sp cooldown still"):
        ensure_out_of_cooldown(scaled, OUT, NOW + timedelta(seconds=30))
    with pytest.raises(Conflict):
        ensure_can_run(OUT)(
            scaled.model_copy(update={"now": NOW + timedelta(seconds=30)}),
            ClusterOperationRequest(params={}),
        )
    ensure_out_of_cooldown(scaled, OUT, NOW + timedelta(seconds=61))
    ensure_out_of_cooldown(scaled, IN, NOW + timedelta(seconds=30))  # other event
    # a scale the policy refused does not restart its cooldown
    refused = after_scale(state, OUT, "Policy check failure: Failed policy 'grow': x", NOW)
    assert refused.policies[0].last_op is None
    # the judged time is never stored
    assert "now" not in scaled.model_copy(update={"now": NOW}).model_dump()
