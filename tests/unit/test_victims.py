"""Victim ordering: failed first, then not-yet-created, then the deletion criteria."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.cluster.nodes import NodeState, NodeStatus
from domain.cluster.policies.deletion import DeletionCriteria
from domain.victims import VictimCandidate, candidates_from_nodes, order_victims, select_victims

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def cand(
    name: str,
    minute: int | None = 0,
    *,
    failed: bool = False,
    created: bool = True,
    profile_minute: int | None = None,
) -> VictimCandidate:
    return VictimCandidate(
        id=f"id-{name}",
        name=name,
        created_at=None if minute is None else at(minute),
        failed=failed,
        created=created,
        profile_id=f"p{profile_minute}",
        profile_created_at=None if profile_minute is None else at(profile_minute),
    )


def names(candidates: list[VictimCandidate]) -> list[str]:
    return [c.name for c in candidates]


HEALTHY = [cand("b", 2), cand("a", 1), cand("c", 3), cand("d", 2)]


def test_oldest_first_orders_by_creation_time_then_name() -> None:
    assert names(order_victims(HEALTHY, DeletionCriteria.OLDEST_FIRST)) == ["a", "b", "d", "c"]


def test_youngest_first_orders_by_creation_time_descending_then_name() -> None:
    assert names(order_victims(HEALTHY, DeletionCriteria.YOUNGEST_FIRST)) == ["c", "b", "d", "a"]


def test_oldest_profile_first_orders_by_profile_age_then_node_age() -> None:
    candidates = [
        cand("new-profile-old-node", 1, profile_minute=50),
        cand("old-profile-young-node", 9, profile_minute=10),
        cand("old-profile-old-node", 2, profile_minute=10),
        cand("unknown-profile", 0),
    ]
    assert names(order_victims(candidates, DeletionCriteria.OLDEST_PROFILE_FIRST)) == [
        "old-profile-old-node",
        "old-profile-young-node",
        "new-profile-old-node",
        "unknown-profile",
    ]


@pytest.mark.parametrize(
    "criteria", [DeletionCriteria.OLDEST_FIRST, DeletionCriteria.YOUNGEST_FIRST]
)
def test_members_of_unknown_age_come_last(criteria: DeletionCriteria) -> None:
    candidates = [cand("x", None), cand("a", 5), cand("b", 1)]
    assert names(order_victims(candidates, criteria))[-1] == "x"


def test_failed_then_uncreated_then_criteria() -> None:
    candidates = [
        cand("healthy-old", 0),
        cand("pending", 7, created=False),
        cand("failed-young", 9, failed=True),
        cand("failed-old", 3, failed=True),
        cand("healthy-young", 8),
    ]
    ordered = order_victims(candidates, DeletionCriteria.YOUNGEST_FIRST)
    assert names(ordered) == [
        "failed-old",
        "failed-young",
        "pending",
        "healthy-young",
        "healthy-old",
    ]


def test_failed_member_without_server_counts_as_failed() -> None:
    candidates = [cand("pending", 1, created=False), cand("broken", 2, failed=True, created=False)]
    assert names(order_victims(candidates, DeletionCriteria.OLDEST_FIRST)) == ["broken", "pending"]


def test_random_without_a_random_source_is_refused() -> None:
    with pytest.raises(ValueError, match="random source"):
        order_victims(HEALTHY, DeletionCriteria.RANDOM)


def test_random_keeps_failed_and_uncreated_groups_deterministic() -> None:
    candidates = [*HEALTHY, cand("f2", 5, failed=True), cand("f1", 4, failed=True)]
    candidates.append(cand("p", 0, created=False))
    for seed in range(20):
        ordered = order_victims(candidates, DeletionCriteria.RANDOM, rand=random.Random(seed))
        assert names(ordered)[:3] == ["f1", "f2", "p"]


def test_random_eventually_picks_every_healthy_member_first() -> None:
    firsts = {
        order_victims(HEALTHY, DeletionCriteria.RANDOM, rand=random.Random(seed))[0].name
        for seed in range(200)
    }
    assert firsts == {"a", "b", "c", "d"}


def test_select_victims_takes_at_most_the_candidates_there_are() -> None:
    assert len(select_victims(HEALTHY, 10, DeletionCriteria.OLDEST_FIRST)) == 4
    assert select_victims(HEALTHY, 0, DeletionCriteria.OLDEST_FIRST) == []


def test_heat_scaling_groups_remove_failed_then_oldest_by_name() -> None:
    members = [cand("m2", 1), cand("m1", 1), cand("m0", 0), cand("bad", 9, failed=True)]
    assert names(select_victims(members, 3, DeletionCriteria.OLDEST_FIRST)) == ["bad", "m0", "m1"]


# --- properties -------------------------------------------------------------------------

candidate_lists = st.lists(
    st.builds(
        VictimCandidate,
        id=st.uuids().map(str),
        name=st.text("abcxyz-0123", min_size=1, max_size=6),
        created_at=st.none() | st.integers(0, 500).map(at),
        failed=st.booleans(),
        created=st.booleans(),
        profile_id=st.sampled_from(["p1", "p2"]),
        profile_created_at=st.none() | st.integers(0, 500).map(at),
    ),
    max_size=25,
    unique_by=lambda c: c.id,
)
criteria_values = st.sampled_from(list(DeletionCriteria))


@given(candidates=candidate_lists, criteria=criteria_values, seed=st.integers(0, 2**32))
def test_order_is_a_permutation_with_failed_first_and_uncreated_next(
    candidates: list[VictimCandidate], criteria: DeletionCriteria, seed: int
) -> None:
    ordered = order_victims(candidates, criteria, rand=random.Random(seed))
    assert sorted(c.id for c in ordered) == sorted(c.id for c in candidates)
    ranks = [0 if c.failed else 1 if not c.created else 2 for c in ordered]
    assert ranks == sorted(ranks)


@given(
    candidates=candidate_lists,
    criteria=criteria_values,
    seed=st.integers(0, 2**32),
    count=st.integers(0, 30),
)
def test_select_victims_is_a_prefix_of_order_victims(
    candidates: list[VictimCandidate], criteria: DeletionCriteria, seed: int, count: int
) -> None:
    chosen = select_victims(candidates, count, criteria, rand=random.Random(seed))
    ordered = order_victims(candidates, criteria, rand=random.Random(seed))
    assert chosen == ordered[:count]


@given(candidates=candidate_lists, seed=st.integers(0, 2**32), shuffle_seed=st.integers(0, 99))
def test_random_is_deterministic_for_a_seed_whatever_the_input_order(
    candidates: list[VictimCandidate], seed: int, shuffle_seed: int
) -> None:
    shuffled = list(candidates)
    random.Random(shuffle_seed).shuffle(shuffled)
    first = order_victims(candidates, DeletionCriteria.RANDOM, rand=random.Random(seed))
    again = order_victims(shuffled, DeletionCriteria.RANDOM, rand=random.Random(seed))
    assert first == again


@given(candidates=candidate_lists, criteria=criteria_values)
def test_ordering_by_age_ignores_the_input_order(
    candidates: list[VictimCandidate], criteria: DeletionCriteria
) -> None:
    if criteria == DeletionCriteria.RANDOM:
        return
    assert order_victims(candidates, criteria) == order_victims(candidates[::-1], criteria)


@given(candidates=candidate_lists)
def test_oldest_first_healthy_members_are_in_creation_order(
    candidates: list[VictimCandidate],
) -> None:
    ordered = order_victims(candidates, DeletionCriteria.OLDEST_FIRST)
    healthy = [c.created_at for c in ordered if c.created and not c.failed and c.created_at]
    assert healthy == sorted(healthy)


@given(candidates=candidate_lists)
def test_youngest_first_healthy_members_are_in_reverse_creation_order(
    candidates: list[VictimCandidate],
) -> None:
    ordered = order_victims(candidates, DeletionCriteria.YOUNGEST_FIRST)
    healthy = [c.created_at for c in ordered if c.created and not c.failed and c.created_at]
    assert healthy == sorted(healthy, reverse=True)


# --- candidates_from_nodes --------------------------------------------------------------


def node(index: int, status: NodeStatus, physical_id: str | None = "srv") -> NodeState:
    return NodeState(
        node_id=f"n{index}",
        name=f"web-{index}",
        index=index,
        profile_id="prof",
        physical_id=physical_id,
        status=status,
        created_at=at(index),
        updated_at=at(index),
    )


@pytest.mark.parametrize(
    ("status", "physical_id", "failed", "created"),
    [
        (NodeStatus.ACTIVE, "srv", False, True),
        (NodeStatus.ERROR, "srv", True, True),
        (NodeStatus.WARNING, "srv", True, True),
        (NodeStatus.ERROR, None, True, False),
        (NodeStatus.INIT, None, False, False),
        (NodeStatus.CREATING, "srv", False, False),
        (NodeStatus.ACTIVE, None, False, False),
        (NodeStatus.RECOVERING, "srv", False, True),
    ],
)
def test_candidates_from_nodes_flags_failed_and_created(
    status: NodeStatus, physical_id: str | None, failed: bool, created: bool
) -> None:
    (candidate,) = candidates_from_nodes([node(1, status, physical_id)])
    assert (candidate.failed, candidate.created) == (failed, created)
    assert (candidate.id, candidate.name, candidate.created_at) == ("n1", "web-1", at(1))


def test_candidates_from_nodes_fills_profile_creation_time() -> None:
    (with_time,) = candidates_from_nodes(
        [node(1, NodeStatus.ACTIVE)], profile_created={"prof": at(-5)}
    )
    (without,) = candidates_from_nodes([node(1, NodeStatus.ACTIVE)])
    assert with_time.profile_created_at == at(-5)
    assert without.profile_created_at is None
