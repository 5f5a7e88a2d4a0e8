"""Victim selection: which members go first when a cluster or scaling group shrinks.

Shared by Senlin-style clusters (deletion policy `criteria`) and Heat scaling groups,
which use `order_victims(..., DeletionCriteria.OLDEST_FIRST)`: not-failed, creation
time, name — Heat's own order for removing group members.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from domain.cluster.nodes import NodeState, NodeStatus
from domain.cluster.policies.deletion import DeletionCriteria

#: Node statuses that make a node a victim before any healthy one.
FAILED_STATUSES = frozenset({NodeStatus.ERROR, NodeStatus.WARNING})
#: Node statuses of nodes whose server is not there yet.
UNCREATED_STATUSES = frozenset({NodeStatus.INIT, NodeStatus.CREATING})

# Stands in for a missing time; only ever compared with other missing times.
_NO_TIME = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class VictimCandidate:
    """A member that could be removed, reduced to what the ordering needs."""

    id: str
    name: str
    created_at: datetime | None
    #: ERROR/WARNING or marked unhealthy.
    failed: bool
    #: Has a physical resource (server) behind it.
    created: bool
    profile_id: str = ""
    profile_created_at: datetime | None = None


def _time_key(value: datetime | None) -> tuple[bool, datetime]:
    """Known times ascending, unknown ones last."""
    return (value is None, value or _NO_TIME)


def _age_key(c: VictimCandidate) -> tuple[bool, datetime, str, str]:
    return (*_time_key(c.created_at), c.name, c.id)


def _profile_age_key(c: VictimCandidate) -> tuple[bool, datetime, bool, datetime, str, str]:
    return (*_time_key(c.profile_created_at), *_age_key(c))


def _youngest_first(candidates: Sequence[VictimCandidate]) -> list[VictimCandidate]:
    by_name = sorted(candidates, key=lambda c: (c.name, c.id))
    dated = [c for c in by_name if c.created_at is not None]
    # sort() is stable with reverse=True, so equal times stay in name order.
    dated.sort(key=lambda c: c.created_at or _NO_TIME, reverse=True)
    return dated + [c for c in by_name if c.created_at is None]


def order_victims(
    candidates: Sequence[VictimCandidate],
    criteria: DeletionCriteria,
    *,
    rand: random.Random | None = None,
) -> list[VictimCandidate]:
    """All candidates, first victim first.

    Failed members come first, then members not yet created (both oldest first, then
    by name), then the rest by `criteria`: OLDEST_FIRST / YOUNGEST_FIRST by creation
    time then name, OLDEST_PROFILE_FIRST by the profile's creation time, then the
    member's, then name; RANDOM shuffles with `rand`. Unknown times sort last.

    Args:
        candidates: the members, in any order (the result does not depend on it).
        criteria: the deletion policy's criteria.
        rand: required for RANDOM; workflows pass `workflow.random()` so the choice
            is the same on replay.

    Raises:
        ValueError: RANDOM without `rand`.
    """
    if criteria == DeletionCriteria.RANDOM and rand is None:
        raise ValueError("RANDOM victim selection needs a random source (workflow.random())")
    failed = sorted((c for c in candidates if c.failed), key=_age_key)
    pending = sorted((c for c in candidates if not c.failed and not c.created), key=_age_key)
    healthy = [c for c in candidates if not c.failed and c.created]
    if criteria == DeletionCriteria.OLDEST_FIRST:
        rest = sorted(healthy, key=_age_key)
    elif criteria == DeletionCriteria.YOUNGEST_FIRST:
        rest = _youngest_first(healthy)
    elif criteria == DeletionCriteria.OLDEST_PROFILE_FIRST:
        rest = sorted(healthy, key=_profile_age_key)
    else:
        assert rand is not None
        # Sort first so the shuffle depends on the random seed only, not on the input order.
        rest = sorted(healthy, key=_age_key)
        rand.shuffle(rest)
    return failed + pending + rest


def select_victims(
    candidates: Sequence[VictimCandidate],
    count: int,
    criteria: DeletionCriteria,
    *,
    rand: random.Random | None = None,
) -> list[VictimCandidate]:
    """The first `count` of `order_victims()` (all of them if there are fewer)."""
    return order_victims(candidates, criteria, rand=rand)[: max(count, 0)]


def candidates_from_nodes(
    nodes: Sequence[NodeState], *, profile_created: Mapping[str, datetime] | None = None
) -> list[VictimCandidate]:
    """Victim candidates for a cluster's nodes.

    Args:
        nodes: the cluster's nodes.
        profile_created: profile id → the profile's creation time (OLDEST_PROFILE_FIRST).
    """
    created_by_profile = profile_created or {}
    return [
        VictimCandidate(
            id=node.node_id,
            name=node.name,
            created_at=node.created_at,
            failed=node.status in FAILED_STATUSES,
            created=node.physical_id is not None and node.status not in UNCREATED_STATUSES,
            profile_id=node.profile_id,
            profile_created_at=created_by_profile.get(node.profile_id),
        )
        for node in nodes
    ]
