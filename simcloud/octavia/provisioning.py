"""Provisioning statuses: what Octavia's controller worker does, without a worker.

A change to a load balancer, or to anything below it, sets the load balancer
PENDING_UPDATE (or PENDING_CREATE/PENDING_DELETE for its own create and delete) and
the changed objects PENDING_*, for `lb_latency_ms`; nothing runs in the background:
the operation completes when the load balancer is next read after its `done_at`
(`settle`), like a Nova task in `simcloud.servers`. While it is pending the load
balancer is immutable: a change answers 409, as Octavia's
`test_and_set_provisioning_status` refuses it.
"""

from __future__ import annotations

from simcloud.octavia.exceptions import fault
from simcloud.octavia.state import (
    ACTIVE,
    PENDING_DELETE,
    PENDING_UPDATE,
    HealthMonitorRecord,
    ListenerRecord,
    LoadBalancerRecord,
    MemberRecord,
    OctaviaRecord,
    OctaviaState,
    PoolRecord,
)
from simcloud.octavia.vip import release_vip
from simcloud.state import SimState

PENDING = frozenset({"PENDING_CREATE", PENDING_UPDATE, PENDING_DELETE})


def settle_all(state: SimState) -> None:
    """Complete every operation that is due (each Octavia request starts with this)."""
    for loadbalancer_id in list(state.octavia.busy):
        settle(state, loadbalancer_id)


def settle(state: SimState, loadbalancer_id: str) -> None:
    """Complete the load balancer's operation if it is due: PENDING_* objects turn
    ACTIVE, those PENDING_DELETE go (with what hangs off them)."""
    octavia = state.octavia
    loadbalancer = octavia.loadbalancers.get(loadbalancer_id)
    if loadbalancer is None or loadbalancer.done_at is None:
        octavia.busy.discard(loadbalancer_id)
        return
    if state.now() < loadbalancer.done_at:
        return
    loadbalancer.done_at = None
    octavia.busy.discard(loadbalancer_id)
    if loadbalancer.provisioning_status == PENDING_DELETE:
        drop_loadbalancer(state, loadbalancer)
        return
    for record in list(octavia.objects_of(loadbalancer_id)):
        if record.provisioning_status == PENDING_DELETE:
            drop(octavia, record)
        elif record.provisioning_status in PENDING:
            record.provisioning_status = ACTIVE
    loadbalancer.provisioning_status = ACTIVE


def begin(
    state: SimState,
    loadbalancer: LoadBalancerRecord,
    changed: tuple[OctaviaRecord, ...] = (),
    *,
    status: str = PENDING_UPDATE,
) -> None:
    """Start an operation on objects of an ACTIVE load balancer.

    Args:
        state: The simcloud.
        loadbalancer: The load balancer the objects belong to; it goes PENDING_UPDATE.
        changed: Objects whose provisioning_status becomes `status`.
        status: PENDING_CREATE, PENDING_UPDATE or PENDING_DELETE.

    Raises:
        SimError: 409 ImmutableObject while the load balancer is PENDING_*.
    """
    ensure_mutable(loadbalancer)
    now = state.now()
    for record in changed:
        record.provisioning_status = status
        if status == PENDING_UPDATE:
            record.updated_at = now
    _start(state, loadbalancer, PENDING_UPDATE)


def begin_own(state: SimState, loadbalancer: LoadBalancerRecord, status: str) -> None:
    """Start an update or delete of the load balancer itself (409 while pending)."""
    if loadbalancer.provisioning_status != ACTIVE:
        raise fault(
            "LBPendingStateError", state=loadbalancer.provisioning_status, id=loadbalancer.id
        )
    _start(state, loadbalancer, status)


def start_create(state: SimState, loadbalancer: LoadBalancerRecord) -> None:
    """A new load balancer is PENDING_CREATE until the latency has passed."""
    _start(state, loadbalancer, loadbalancer.provisioning_status)


def begin_pool_change(state: SimState, pool: PoolRecord) -> None:
    """Start a change of a pool's members or monitor: the pool, its listeners and its
    load balancer go PENDING_UPDATE (409 ImmutableObject unless all are ACTIVE)."""
    if pool.provisioning_status != ACTIVE:
        raise fault("ImmutableObject", resource="Pool", id=pool.id)
    loadbalancer = state.octavia.loadbalancers[pool.loadbalancer_id]
    begin(state, loadbalancer, (pool, *state.octavia.listeners_using(pool.id)))


def ensure_mutable(loadbalancer: LoadBalancerRecord) -> None:
    """409 ImmutableObject unless the load balancer is ACTIVE."""
    if loadbalancer.provisioning_status != ACTIVE:
        raise fault("ImmutableObject", resource="Load Balancer", id=loadbalancer.id)


def _start(state: SimState, loadbalancer: LoadBalancerRecord, status: str) -> None:
    loadbalancer.provisioning_status = status
    if status == PENDING_UPDATE:
        loadbalancer.updated_at = state.now()
    loadbalancer.done_at = state.now() + state.config.lb_latency_ms / 1000
    state.octavia.busy.add(loadbalancer.id)


def drop(octavia: OctaviaState, record: OctaviaRecord) -> None:
    """Forget a listener, pool, health monitor or member (it now answers 404).

    A pool takes its members and health monitor along and stops being a listener's
    default pool.
    """
    if isinstance(record, ListenerRecord):
        octavia.listeners.pop(record.id, None)
    elif isinstance(record, PoolRecord):
        octavia.pools.pop(record.id, None)
        octavia.members.pop(record.id, None)
        if record.healthmonitor_id is not None:
            octavia.healthmonitors.pop(record.healthmonitor_id, None)
        for listener in octavia.listeners_using(record.id):
            listener.default_pool_id = None
    elif isinstance(record, HealthMonitorRecord):
        octavia.healthmonitors.pop(record.id, None)
        pool = octavia.pools.get(record.pool_id)
        if pool is not None:
            pool.healthmonitor_id = None
    elif isinstance(record, MemberRecord):
        octavia.members.get(record.pool_id, {}).pop(record.id, None)


def drop_loadbalancer(state: SimState, loadbalancer: LoadBalancerRecord) -> None:
    """Forget a load balancer, everything below it, and the VIP port Octavia made."""
    octavia = state.octavia
    for pool in octavia.pools_of(loadbalancer.id):
        drop(octavia, pool)
    for listener in octavia.listeners_of(loadbalancer.id):
        drop(octavia, listener)
    release_vip(state, loadbalancer)
    del octavia.loadbalancers[loadbalancer.id]
    octavia.busy.discard(loadbalancer.id)
