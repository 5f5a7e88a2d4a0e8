"""Where a cluster's nodes go: the zone placement policy's plans, applied (pure).

New nodes of a cluster with an enabled `senlin.policy.zone_placement` are given zones
by the policy's plan (`data.placement.zone`, as Senlin's nodes carry it); their servers
are created there. A removal takes its victims zone by zone as the policy's plan says,
each zone's by the deletion policy's criteria (failed nodes first, as always). Nodes
placed before the policy was attached count in no zone.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from domain.cluster.nodes import NodeState
from domain.cluster.policies.affinity import AffinityProperties
from domain.cluster.policies.deletion import DeletionCriteria
from domain.cluster.policies.specs import PolicyType
from domain.cluster.policies.zone_placement import ZonePlacementProperties, create_plan
from domain.cluster.state import ClusterState
from domain.victims import candidates_from_nodes, select_victims

#: The node data key of its placement (`{"zone": <availability zone>}`).
PLACEMENT = "placement"


def zone_policy(state: ClusterState) -> ZonePlacementProperties | None:
    """The attached, enabled zone placement policy, if any."""
    for bound in state.policies:
        if bound.type == PolicyType.ZONE_PLACEMENT.value and bound.enabled:
            return ZonePlacementProperties.model_validate(bound.properties)
    return None


def zone_of(node: NodeState) -> str | None:
    """The availability zone the node was placed in, if any."""
    placement = node.data.get(PLACEMENT)
    zone = placement.get("zone") if isinstance(placement, dict) else None
    return zone if isinstance(zone, str) and zone else None


def distribution(nodes: Sequence[NodeState]) -> dict[str, int]:
    """Zone → how many of `nodes` are placed there."""
    return dict(Counter(z for z in (zone_of(n) for n in nodes) if z is not None))


def affinity_placement(state: ClusterState) -> dict[str, str]:
    """What an attached, enabled affinity policy puts in each new node's placement: its
    server group (`servergroup`) and zone (`zone`), as Senlin's `pre_op` does."""
    for bound in state.policies:
        if bound.type == PolicyType.AFFINITY.value and bound.enabled:
            group = bound.data.get("servergroup_id")
            zone = AffinityProperties.model_validate(bound.properties).availability_zone
            entry = {"servergroup": str(group)} if group else {}
            return entry | ({"zone": zone} if zone else {})
    return {}


def placed(state: ClusterState, new: list[NodeState]) -> list[NodeState]:
    """`new` with the zones the zone policy's plan gives them and the server group of
    an affinity policy (as they are without either)."""
    if not new:
        return new
    group = affinity_placement(state)
    if group:
        new = [
            node.model_copy(update={"data": {**node.data, PLACEMENT: dict(group)}}) for node in new
        ]
    policy = zone_policy(state)
    if policy is None:
        return new
    plan = create_plan(distribution(state.nodes), policy.weights(), len(new), expand=True)
    if plan is None:
        return new
    zones = [zone for zone, count in sorted(plan.items()) for _ in range(count)]
    return [
        node.model_copy(
            update={"data": {**node.data, PLACEMENT: {**_placement(node), "zone": zone}}}
        )
        for node, zone in zip(new, zones, strict=False)
    ]


def _placement(node: NodeState) -> dict[str, Any]:
    found = node.data.get(PLACEMENT)
    return dict(found) if isinstance(found, dict) else {}


def server_group_of(node: NodeState) -> str | None:
    """The server group the node was placed in (by an affinity policy), if any."""
    group = _placement(node).get("servergroup")
    return group if isinstance(group, str) and group else None


def zone_victims(
    state: ClusterState, count: int, criteria: DeletionCriteria, rand: random.Random
) -> list[str] | None:
    """The policy's victims, zone by zone; None without a policy or a feasible plan."""
    policy = zone_policy(state)
    if policy is None or count <= 0:
        return None
    plan = create_plan(distribution(state.nodes), policy.weights(), count, expand=False)
    if plan is None:
        return None
    victims: list[str] = []
    for zone, n in sorted(plan.items()):
        there = [node for node in state.nodes if zone_of(node) == zone]
        chosen = select_victims(candidates_from_nodes(there), n, criteria, rand=rand)
        victims.extend(c.id for c in chosen)
    return victims if len(victims) == count else None
