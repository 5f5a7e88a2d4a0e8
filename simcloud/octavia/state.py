"""What one simcloud's Octavia holds: load balancers and the objects hanging off them.

Records keep, as typed fields, what simcloud reasons about (ids, parents, protocols,
ports, statuses) and, in `attributes`, the other attributes Octavia shows as they were
given (timeouts, TLS references, session persistence...). Operating statuses are not
stored: they are derived from the servers behind the members whenever they are read.
This module imports nothing from simcloud: `SimState` imports it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

ACTIVE = "ACTIVE"
PENDING_CREATE = "PENDING_CREATE"
PENDING_UPDATE = "PENDING_UPDATE"
PENDING_DELETE = "PENDING_DELETE"
#: simcloud's default quotas per project (Octavia's own default is unlimited); -1 is
#: unlimited. The keys are Octavia's quota names.
DEFAULT_QUOTAS = {
    "load_balancer": 100,
    "listener": 100,
    "pool": 100,
    "health_monitor": 100,
    "member": 1000,
}


def isotime(epoch: float | None) -> str | None:
    """Octavia's timestamps (`2017-02-28T00:41:44`, no zone); None stays None."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S")


@dataclass(slots=True, kw_only=True)
class OctaviaRecord:
    """What every Octavia object has."""

    id: str
    project_id: str
    name: str = ""
    description: str = ""
    admin_state_up: bool = True
    tags: list[str] = field(default_factory=list)
    provisioning_status: str = PENDING_CREATE
    created_at: float
    updated_at: float | None = None
    #: Attributes shown as given that nothing in simcloud acts on.
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class LoadBalancerRecord(OctaviaRecord):
    """A load balancer and its VIP."""

    provider: str
    vip_address: str
    vip_port_id: str
    vip_subnet_id: str
    vip_network_id: str
    #: Whether Octavia made the VIP port (and deletes it with the load balancer).
    vip_port_owned: bool
    #: When the operation in progress completes (None: no operation in progress).
    done_at: float | None = None


@dataclass(slots=True, kw_only=True)
class ListenerRecord(OctaviaRecord):
    """A listener on one load balancer's VIP."""

    loadbalancer_id: str
    protocol: str
    protocol_port: int
    default_pool_id: str | None = None


@dataclass(slots=True, kw_only=True)
class PoolRecord(OctaviaRecord):
    """A pool of one load balancer (serving once a listener uses it)."""

    loadbalancer_id: str
    protocol: str
    lb_algorithm: str
    healthmonitor_id: str | None = None


@dataclass(slots=True, kw_only=True)
class HealthMonitorRecord(OctaviaRecord):
    """The health monitor of one pool."""

    pool_id: str
    type: str


@dataclass(slots=True, kw_only=True)
class MemberRecord(OctaviaRecord):
    """A pool member added through the API, or joined through server metadata."""

    pool_id: str
    address: str
    protocol_port: int
    weight: int = 1


class OctaviaState:
    """Load balancers, listeners, pools, health monitors and members."""

    def __init__(self) -> None:
        self.loadbalancers: dict[str, LoadBalancerRecord] = {}
        self.listeners: dict[str, ListenerRecord] = {}
        self.pools: dict[str, PoolRecord] = {}
        self.healthmonitors: dict[str, HealthMonitorRecord] = {}
        #: pool id → member id → member added through the API. The pool id may name
        #: no pool of `pools`: such a pool exists from its first member on.
        self.members: dict[str, dict[str, MemberRecord]] = {}
        #: Load balancers with an operation in progress, settled when next read.
        self.busy: set[str] = set()

    def listeners_of(self, loadbalancer_id: str) -> list[ListenerRecord]:
        """A load balancer's listeners, oldest first."""
        return [r for r in self.listeners.values() if r.loadbalancer_id == loadbalancer_id]

    def pools_of(self, loadbalancer_id: str) -> list[PoolRecord]:
        """A load balancer's pools, oldest first."""
        return [r for r in self.pools.values() if r.loadbalancer_id == loadbalancer_id]

    def listeners_using(self, pool_id: str) -> list[ListenerRecord]:
        """The listeners whose default pool is `pool_id`."""
        return [r for r in self.listeners.values() if r.default_pool_id == pool_id]

    def objects_of(self, loadbalancer_id: str) -> Iterator[OctaviaRecord]:
        """Everything below a load balancer: listeners, pools, monitors, members."""
        yield from self.listeners_of(loadbalancer_id)
        for pool in self.pools_of(loadbalancer_id):
            yield pool
            if pool.healthmonitor_id is not None:
                yield self.healthmonitors[pool.healthmonitor_id]
            yield from self.members.get(pool.id, {}).values()

    def used(self, project_id: str, resource: str) -> int:
        """How many objects counted by a quota resource a project holds."""
        if resource == "member":
            return sum(
                m.project_id == project_id for pool in self.members.values() for m in pool.values()
            )
        tables: dict[str, Mapping[str, OctaviaRecord]] = {
            "load_balancer": self.loadbalancers,
            "listener": self.listeners,
            "pool": self.pools,
            "health_monitor": self.healthmonitors,
        }
        records = tables[resource]
        return sum(r.project_id == project_id for r in records.values())
