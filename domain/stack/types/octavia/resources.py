"""The five Octavia types: bodies, lookups and attributes (Heat's schemas)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.stack.types.api_object import ApiObjectType, Request, fields_of, given
from domain.stack.types.heat_schema import heat_type
from domain.stack.types.neutron.subnet import references

LOAD_BALANCER: Final = "OS::Octavia::LoadBalancer"
LISTENER: Final = "OS::Octavia::Listener"
POOL: Final = "OS::Octavia::Pool"
POOL_MEMBER: Final = "OS::Octavia::PoolMember"
HEALTH_MONITOR: Final = "OS::Octavia::HealthMonitor"

#: Octavia's statuses: each part waits for its own ACTIVE.
READY: Final = ("ACTIVE",)
FAILED: Final = ("ERROR",)
COMMON: Final = {"name": "name", "description": "description", "admin_state_up": "admin_state_up"}


def _builder(
    renames: Mapping[str, str], refs: Mapping[str, tuple[str, str]], named: bool = True
) -> Any:
    def body(props: Mapping[str, Any], name: str) -> Request:
        found = references(props, refs)
        own = given(props, renames)
        if named:
            own["name"] = props.get("name") or name
        return Request(own | found.body, found.lookups)

    return body


_LB_FIELDS: Final = COMMON | {
    "provider": "provider",
    "vip_address": "vip_address",
    "availability_zone": "availability_zone",
    "tenant_id": "project_id",
}
_LISTENER_FIELDS: Final = COMMON | {
    "protocol": "protocol",
    "protocol_port": "protocol_port",
    "connection_limit": "connection_limit",
    "allowed_cidrs": "allowed_cidrs",
    "default_tls_container_ref": "default_tls_container_ref",
    "sni_container_refs": "sni_container_refs",
    "tenant_id": "project_id",
}
_POOL_FIELDS: Final = COMMON | {
    "protocol": "protocol",
    "lb_algorithm": "lb_algorithm",
    "session_persistence": "session_persistence",
    "tls_enabled": "tls_enabled",
}
_MEMBER_FIELDS: Final = {
    "address": "address",
    "protocol_port": "protocol_port",
    "weight": "weight",
    "admin_state_up": "admin_state_up",
    "monitor_address": "monitor_address",
    "monitor_port": "monitor_port",
    "tags": "tags",
}
_MONITOR_FIELDS: Final = {
    "type": "type",
    "delay": "delay",
    "timeout": "timeout",
    "max_retries": "max_retries",
    "http_method": "http_method",
    "url_path": "url_path",
    "expected_codes": "expected_codes",
    "admin_state_up": "admin_state_up",
    "tenant_id": "project_id",
}


def _octavia(
    name: str,
    kind: str,
    fields: Mapping[str, str],
    refs: Mapping[str, tuple[str, str]],
    *,
    named: bool = True,
    **options: Any,
) -> ApiObjectType:
    """An Octavia type: Heat's schema, waiting on `provisioning_status` ACTIVE."""
    return ApiObjectType(
        rtype=heat_type(name),
        kind=kind,
        body=_builder(fields, refs, named),
        fields=fields_of(fields, **{p: (api,) for p, (api, _) in refs.items()}),
        ready=READY,
        failed=FAILED,
        status_field="provisioning_status",
        **options,
    )


LOAD_BALANCER_API: Final = _octavia(
    LOAD_BALANCER,
    "loadbalancer",
    _LB_FIELDS,
    {"vip_subnet": ("vip_subnet_id", "subnet"), "flavor": ("flavor_id", "lb_flavor")},
)
LISTENER_API: Final = _octavia(
    LISTENER,
    "listener",
    _LISTENER_FIELDS,
    {
        "loadbalancer": ("loadbalancer_id", "loadbalancer"),
        "default_pool": ("default_pool_id", "pool"),
    },
)
POOL_API: Final = _octavia(
    POOL,
    "pool",
    _POOL_FIELDS,
    {"listener": ("listener_id", "listener"), "loadbalancer": ("loadbalancer_id", "loadbalancer")},
)
#: A member lives under its pool: `parent` names the pool property.
POOL_MEMBER_API: Final = _octavia(
    POOL_MEMBER,
    "member",
    _MEMBER_FIELDS,
    {"subnet": ("subnet_id", "subnet")},
    named=False,
    parent=("pool", "pool"),
)
HEALTH_MONITOR_API: Final = _octavia(
    HEALTH_MONITOR, "healthmonitor", _MONITOR_FIELDS, {"pool": ("pool_id", "pool")}, named=False
)
ALL: Final = (LOAD_BALANCER_API, LISTENER_API, POOL_API, POOL_MEMBER_API, HEALTH_MONITOR_API)
