"""`senlin.policy.zone_placement` 1.0: spread a cluster's servers over availability zones.

Upstream Senlin (`senlin/policies/zone_placement.py`): each zone has a `weight`
(default 100). When nodes are added, each zone's share of the new total is its weight
over the sum, rounded up, and the zones furthest below their share get the new nodes
(`_create_plan`); when nodes are removed, the shares are rounded down and the zones
furthest above theirs give up nodes. A new node's server is created in its zone (the
node keeps it as `data.placement.zone`, as Senlin's does). Only server clusters take it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final, Self

from pydantic import Field, model_validator

from domain.cluster.policies.base import SpecModel

#: The profile types whose nodes the policy places (Senlin's `PROFILE_TYPE`).
PROFILE_TYPES: Final = ("os.nova.server",)


class Zone(SpecModel):
    """One candidate availability zone."""

    name: str = Field(min_length=1, max_length=255)
    weight: int = Field(100, ge=0, le=1_000_000)


class ZonePlacementProperties(SpecModel):
    """`senlin.policy.zone_placement` 1.0 properties."""

    zones: list[Zone] = Field(min_length=1, max_length=100)

    @model_validator(mode="after")
    def _weighed(self) -> Self:
        names = [z.name for z in self.zones]
        if len(set(names)) != len(names):
            raise ValueError("zones: each zone may be listed once")
        if not any(z.weight for z in self.zones):
            raise ValueError("zones: at least one zone needs a positive weight")
        return self

    def weights(self) -> dict[str, int]:
        """Zone name → weight."""
        return {z.name: z.weight for z in self.zones}


def create_plan(
    current: Mapping[str, int], zones: Mapping[str, int], count: int, expand: bool
) -> dict[str, int] | None:
    """How many nodes each zone gains (`expand`) or loses: Senlin's `_create_plan`;
    None when no plan places every node."""
    candidates = sorted(zones.items(), key=lambda item: item[1], reverse=expand)
    total_weight = sum(zones.values())
    existing = sum(current.get(z, 0) for z in zones)
    total = existing + count if expand else existing - count
    remain = count
    plan = dict.fromkeys(zones, 0)
    for zone, weight in candidates:
        share = total * weight / float(total_weight)
        if expand:
            headroom = math.ceil(share) - current.get(zone, 0)
        else:
            headroom = current.get(zone, 0) - math.floor(share)
        if headroom <= 0:
            continue
        if headroom < remain:
            plan[zone] = headroom
            remain -= headroom
        else:
            plan[zone] = max(remain, 0)
            remain = 0
            break
    if remain > 0:
        return None
    return {zone: n for zone, n in plan.items() if n > 0}
