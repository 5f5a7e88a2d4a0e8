"""The zone placement policy: Senlin's plans, and how nodes and victims follow them."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from domain.cluster.membership import MembershipPlan, choose_victims
from domain.cluster.nodes import NodeState
from domain.cluster.placement import distribution, placed, zone_of
from domain.cluster.policies.specs import ensure_profile_supports, parse_policy_spec
from domain.cluster.policies.zone_placement import create_plan
from domain.cluster.state import AttachedPolicy, ClusterSpec, ClusterState, ClusterStatus
from domain.errors import InvalidRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def node(i: int, zone: str | None = None) -> NodeState:
    data: dict[str, Any] = {"placement": {"zone": zone}} if zone else {}
    return NodeState(
        node_id=f"n{i}", name=f"web-{i}", index=i, profile_id="p", physical_id=f"s{i}",
        created_at=NOW, updated_at=NOW, data=data,
    )  # fmt: skip


def cluster(nodes: list[NodeState], zones: list[dict[str, Any]]) -> ClusterState:
    policy = AttachedPolicy(
        policy_id="z", name="spread", type="senlin.policy.zone_placement",
        properties={"zones": zones},
    )  # fmt: skip
    spec = ClusterSpec(
        cluster_id="c", project_id="p", name="web", profile_id="p", desired_capacity=len(nodes)
    )
    return ClusterState(
        spec=spec, nodes=nodes, policies=[policy], created=True, status=ClusterStatus.ACTIVE
    )


@pytest.mark.parametrize(
    ("current", "zones", "count", "expand", "plan"),
    [
        ({}, {"a": 100, "b": 100}, 4, True, {"a": 2, "b": 2}),
        ({"a": 2}, {"a": 100, "b": 100}, 2, True, {"b": 2}),
        ({}, {"a": 300, "b": 100}, 4, True, {"a": 3, "b": 1}),
        ({"a": 3, "b": 1}, {"a": 100, "b": 100}, 2, False, {"a": 2}),
        ({"a": 2, "b": 2}, {"a": 100, "b": 100}, 2, False, {"a": 1, "b": 1}),
        # Senlin's arithmetic asks more of a zone than it has (zone_victims then falls
        # back to the usual choice)
        ({"a": 1}, {"a": 100, "b": 100}, 2, False, {"a": 2}),
        ({}, {"a": 0, "b": 100}, 1, True, {"b": 1}),
    ],
)
def test_plans_are_senlins(
    current: dict[str, int], zones: dict[str, int], count: int, expand: bool, plan: Any
) -> None:
    assert create_plan(current, zones, count, expand) == plan


def test_new_nodes_get_their_zones_and_victims_follow_the_plan() -> None:
    zones = [{"name": "nova"}, {"name": "az-2"}]
    state = cluster([node(0, "nova"), node(1, "nova"), node(2, "az-2")], zones)
    new = placed(state, [node(3), node(4), node(5)])
    assert sorted(zone_of(n) or "" for n in new) == ["az-2", "az-2", "nova"]
    grown = state.model_copy(update={"nodes": [*state.nodes, *new]})
    assert distribution(grown.nodes) == {"nova": 3, "az-2": 3}
    plan = MembershipPlan(desired_capacity=4, min_size=0, max_size=-1, remove=2)
    victims = choose_victims(grown, plan, random.Random(7))
    assert sorted(zone_of(n) or "" for n in grown.nodes if n.node_id in victims) == [
        "az-2",
        "nova",
    ]


def test_only_server_clusters_take_the_policy() -> None:
    props = parse_policy_spec(
        {"type": "senlin.policy.zone_placement", "version": "1.0",
         "properties": {"zones": [{"name": "nova"}]}}
    ).properties  # fmt: skip
    ensure_profile_supports(props, "os.nova.server-1.0")
    with pytest.raises(InvalidRequest, match="Policy not applicable on profile type"):
        ensure_profile_supports(props, "os.heat.stack-1.0")


def test_the_policy_spec_is_checked_in_senlins_shape() -> None:
    spec = {"type": "senlin.policy.zone_placement", "version": "1.0"}
    parsed = parse_policy_spec(spec | {"properties": {"zones": [{"name": "nova"}]}})
    assert parsed.properties.weights() == {"nova": 100}  # type: ignore[union-attr]
    for zones in ([], [{"name": "a"}, {"name": "a"}], [{"name": "a", "weight": 0}]):
        with pytest.raises(InvalidRequest):
            parse_policy_spec(spec | {"properties": {"zones": zones}})
