"""Operating statuses: what Octavia's health manager would report, derived when read.

A member is linked to the server holding its address: with a health monitor on its
pool it is ONLINE while that server is ACTIVE, OFFLINE when disabled or when the
server carries the `lb_offline` fault, ERROR otherwise. Without a monitor Octavia
cannot tell and says NO_MONITOR. Members of a pool simcloud knows only from its
members (server metadata `lb_pool_id`, or a member added to an unknown pool id) follow
their server as if monitored, as simcloud always did.

Pools and load balancers roll their members up as the amphora heartbeat does: some
members in ERROR make the pool and its load balancer DEGRADED, all of them ERROR.
Anything still PENDING_CREATE, disabled, or (for a pool) behind no listener is OFFLINE.
"""

from __future__ import annotations

from collections.abc import Iterable

from simcloud.octavia.state import (
    PENDING_CREATE,
    HealthMonitorRecord,
    ListenerRecord,
    LoadBalancerRecord,
    MemberRecord,
    PoolRecord,
)
from simcloud.servers import settle, status_of
from simcloud.state import SimState

ONLINE = "ONLINE"
OFFLINE = "OFFLINE"
ERROR = "ERROR"
DEGRADED = "DEGRADED"
NO_MONITOR = "NO_MONITOR"


def server_status(state: SimState, address: str, admin_state_up: bool) -> str:
    """ONLINE for an ACTIVE server; OFFLINE when administratively or fault-wise offline."""
    server_id = state.by_address.get(address)
    record = state.servers.get(server_id) if server_id else None
    if record is None or not settle(state, record, state.now()):
        return ERROR
    if not admin_state_up or (record.fault is not None and record.fault.kind == "lb_offline"):
        return OFFLINE
    return ONLINE if status_of(record) == "ACTIVE" else ERROR


def member_status(state: SimState, member: MemberRecord) -> str:
    """The member's operating_status (see the module docstring)."""
    pool = state.octavia.pools.get(member.pool_id)
    if pool is None:
        return server_status(state, member.address, member.admin_state_up)
    monitor = monitor_of(state, pool)
    if not member.admin_state_up:
        return OFFLINE
    # A disabled monitor checks nothing: haproxy reports the member "no check".
    if monitor is None or not monitor.admin_state_up:
        return NO_MONITOR
    if PENDING_CREATE in (member.provisioning_status, monitor.provisioning_status):
        return OFFLINE
    if not serving(state, pool):
        return OFFLINE
    return server_status(state, member.address, member.admin_state_up)


def monitor_of(state: SimState, pool: PoolRecord) -> HealthMonitorRecord | None:
    """The pool's health monitor, if it has one."""
    if pool.healthmonitor_id is None:
        return None
    return state.octavia.healthmonitors.get(pool.healthmonitor_id)


def serving(state: SimState, pool: PoolRecord) -> bool:
    """Whether haproxy runs the pool: enabled, built, and some enabled listener uses it."""
    loadbalancer = state.octavia.loadbalancers[pool.loadbalancer_id]
    if not pool.admin_state_up or pool.provisioning_status == PENDING_CREATE:
        return False
    if not up(loadbalancer):
        return False
    return any(up(listener) for listener in state.octavia.listeners_using(pool.id))


def up(record: LoadBalancerRecord | ListenerRecord) -> bool:
    """Enabled and built (no longer PENDING_CREATE)."""
    return record.admin_state_up and record.provisioning_status != PENDING_CREATE


def pool_status(state: SimState, pool: PoolRecord, member_statuses: Iterable[str]) -> str:
    """ONLINE, DEGRADED (some members in ERROR), ERROR (all of them) or OFFLINE."""
    if not serving(state, pool):
        return OFFLINE
    statuses = list(member_statuses)
    if ERROR in statuses:
        return DEGRADED if ONLINE in statuses else ERROR
    return ONLINE


def listener_status(state: SimState, listener: ListenerRecord) -> str:
    """ONLINE once built and enabled, on a load balancer that is too."""
    loadbalancer = state.octavia.loadbalancers[listener.loadbalancer_id]
    return ONLINE if up(listener) and up(loadbalancer) else OFFLINE


def loadbalancer_status(loadbalancer: LoadBalancerRecord, pool_statuses: Iterable[str]) -> str:
    """OFFLINE until built or when disabled; else the worst of its pools'."""
    if not up(loadbalancer):
        return OFFLINE
    statuses = set(pool_statuses)
    for status in (ERROR, DEGRADED):
        if status in statuses:
            return status
    return ONLINE


def monitor_status(monitor: HealthMonitorRecord) -> str:
    """ONLINE once built and enabled."""
    built = monitor.provisioning_status != PENDING_CREATE
    return ONLINE if built and monitor.admin_state_up else OFFLINE
