"""Octavia v2 (load balancers, listeners, pools, members, health monitors, quotas).

Other layers use `router` (the FastAPI routes under `/load-balancer`) and:

- `pool_members(state, pool_id) -> list[MemberRecord]`: a pool's members, those added
  through the API then those joined by server metadata `lb_pool_id`; 404 (Octavia's
  `SimError`) for a pool id nobody named.
- `member_status(state, member) -> str`: a member's live `operating_status`.
- `settle_all(state) -> None`: complete the provisioning operations that are due.
- `OctaviaState` and the `*Record` types: what `SimState.octavia` holds.

The names are resolved on first use: the routes import `simcloud.state`, which imports
this package's `state` module, so importing them eagerly here would be circular.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "HealthMonitorRecord",
    "ListenerRecord",
    "LoadBalancerRecord",
    "MemberRecord",
    "OctaviaState",
    "PoolRecord",
    "member_status",
    "pool_members",
    "router",
    "settle_all",
]

_SOURCES = {
    "router": "simcloud.octavia.routes",
    "pool_members": "simcloud.octavia.members",
    "member_status": "simcloud.octavia.operating",
    "settle_all": "simcloud.octavia.provisioning",
    "OctaviaState": "simcloud.octavia.state",
    "HealthMonitorRecord": "simcloud.octavia.state",
    "ListenerRecord": "simcloud.octavia.state",
    "LoadBalancerRecord": "simcloud.octavia.state",
    "MemberRecord": "simcloud.octavia.state",
    "PoolRecord": "simcloud.octavia.state",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_SOURCES[name]), name)
