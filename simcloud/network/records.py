"""Neutron's standard attributes, and who may see and change which record.

Every record carries `id`, `project_id`/`tenant_id`, `created_at`, `updated_at` and
`revision_number` (bumped on each change, as the `standard-attr-revisions` extension
shows). Visibility follows Neutron's default policies for a member: own records, plus
shared and external networks (and their subnets), plus ports on one's own networks.
A record one may see but not change answers 403; one that one may not see, 404.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from simcloud.network.exceptions import fault, policy_denied
from simcloud.network.state import DEFAULT_QUOTAS, NetworkState, Record
from simcloud.state import SimState, isotime

#: Collection → (its not-found exception, that exception's id parameter).
NOT_FOUND = {
    "networks": ("NetworkNotFound", "net_id"),
    "subnets": ("SubnetNotFound", "subnet_id"),
    "ports": ("PortNotFound", "port_id"),
    "routers": ("RouterNotFound", "router_id"),
    "floatingips": ("FloatingIPNotFound", "floatingip_id"),
    "security_groups": ("SecurityGroupNotFound", "id"),
    "security_group_rules": ("SecurityGroupRuleNotFound", "id"),
    "trunks": ("TrunkNotFound", "trunk_id"),
}
#: Collection → the singular Neutron uses in policy rule names.
MEMBER_NAMES = {
    "networks": "network",
    "subnets": "subnet",
    "ports": "port",
    "routers": "router",
    "floatingips": "floatingip",
    "security_groups": "security_group",
    "security_group_rules": "security_group_rule",
    "trunks": "trunk",
}


def new_record(state: SimState, project_id: str, **fields: Any) -> Record:
    """A record with fresh standard attributes, then `fields`."""
    stamp = isotime(state.now())
    standard: Record = {
        "id": str(uuid.uuid4()),
        "project_id": project_id,
        "tenant_id": project_id,
        "description": "",
        "tags": [],
        "created_at": stamp,
        "updated_at": stamp,
        "revision_number": 1,
    }
    return standard | fields


def touch(state: SimState, record: Record) -> None:
    """Mark a record changed: a new `revision_number` and `updated_at`."""
    record["revision_number"] += 1
    record["updated_at"] = isotime(state.now())


def visible(net: NetworkState, collection: str, record: Record, project_id: str) -> bool:
    """Whether a member of `project_id` may see `record` (Neutron's default policy)."""
    # Neutron's own ports (router gateways, floating IPs) have no project: nobody's.
    if project_id and record["project_id"] == project_id:
        return True
    if collection == "networks":
        return bool(record["shared"] or record["router:external"])
    if collection == "subnets":
        network = net.networks[record["network_id"]]
        return bool(network["shared"] or network["router:external"])
    if collection == "ports":
        return bool(net.networks[record["network_id"]]["project_id"] == project_id)
    return False


def find(state: SimState, collection: str, record_id: str, project_id: str) -> Record:
    """The record the caller may see, or the collection's 404."""
    record = state.network.collection(collection).get(record_id)
    if record is None or not visible(state.network, collection, record, project_id):
        name, key = NOT_FOUND[collection]
        raise fault(name, **{key: record_id})
    return record


def owned(state: SimState, collection: str, record_id: str, project_id: str, action: str) -> Record:
    """The record the caller may change by `action` (`update`, `delete`), else 404/403."""
    record = find(state, collection, record_id, project_id)
    if record["project_id"] != project_id:
        raise policy_denied(f"{action}_{MEMBER_NAMES[collection]}")
    return record


def quota_limits(state: SimState) -> dict[str, int]:
    """Neutron's default quotas, with the ones the simcloud was configured with."""
    return DEFAULT_QUOTAS | {
        k: v for k, v in state.config.network_quotas.items() if k in DEFAULT_QUOTAS
    }


def ensure_quota(state: SimState, project_id: str, resource: str, count: int = 1) -> None:
    """409 OverQuota when `count` more records would exceed the project's quota."""
    limit = quota_limits(state)[resource]
    if limit >= 0 and state.network.used(project_id, resource) + count > limit:
        raise fault("OverQuota", overs=[resource])


def detached(record: Record) -> Record:
    """A deep copy, for callers outside this package who might change what they get."""
    return copy.deepcopy(record)
