"""`GET /v2/lbaas/loadbalancers/{id}/status`: the operating and provisioning statuses of
a load balancer and everything below it, as Octavia's `StatusController` shows them.

The tree follows the listeners: each shows its default pool (if any) with its health
monitor (key `health_monitor`, absent without one) and members; pools no listener
uses are not in the tree, though their statuses weigh on the load balancer's.
"""

from __future__ import annotations

from typing import Any

from simcloud.octavia.members import member_json, pool_members
from simcloud.octavia.operating import (
    listener_status,
    loadbalancer_status,
    monitor_of,
    monitor_status,
)
from simcloud.octavia.pools import pool_operating_status
from simcloud.octavia.state import ListenerRecord, LoadBalancerRecord, OctaviaRecord, PoolRecord
from simcloud.state import SimState


def status_tree(state: SimState, loadbalancer: LoadBalancerRecord) -> dict[str, Any]:
    """`GET .../status`: the load balancer, its listeners, their pools and members."""
    pools = state.octavia.pools_of(loadbalancer.id)
    statuses = {p.id: pool_operating_status(state, p) for p in pools}
    listeners = [
        _listener_tree(state, listener, statuses)
        for listener in state.octavia.listeners_of(loadbalancer.id)
    ]
    status = loadbalancer_status(loadbalancer, statuses.values())
    return {"loadbalancer": _status(loadbalancer, status) | {"listeners": listeners}}


def _listener_tree(
    state: SimState, listener: ListenerRecord, statuses: dict[str, str]
) -> dict[str, Any]:
    tree = _status(listener, listener_status(state, listener))
    pool = state.octavia.pools.get(listener.default_pool_id or "")
    tree["pools"] = [] if pool is None else [_pool_tree(state, pool, statuses)]
    return tree


def _status(record: OctaviaRecord, operating_status: str) -> dict[str, Any]:
    return {
        "id": record.id,
        "name": record.name,
        "provisioning_status": record.provisioning_status,
        "operating_status": operating_status,
    }


def _pool_tree(state: SimState, pool: PoolRecord, statuses: dict[str, str]) -> dict[str, Any]:
    tree = _status(pool, statuses[pool.id])
    monitor = monitor_of(state, pool)
    if monitor is not None:
        tree["health_monitor"] = _status(monitor, monitor_status(monitor)) | {"type": monitor.type}
    members = [member_json(state, m) for m in pool_members(state, pool.id)]
    keys = ("id", "name", "operating_status", "provisioning_status", "address", "protocol_port")
    tree["members"] = [{k: m[k] for k in keys} for m in members]
    return tree
