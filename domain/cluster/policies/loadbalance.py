"""`senlin.policy.loadbalance` 1.0/1.1: a cluster's nodes as members of an Octavia pool.

Upstream Senlin (`senlin/policies/lb_policy.py`, `senlin/drivers/os/lbaas.py`): attaching
the policy creates a load balancer on the VIP's subnet or network, a listener, a pool
and (if given) a health monitor, waiting for the load balancer to be ACTIVE after each
(`lb_status_timeout`); or it uses the `loadbalancer` and `pool.id` named. Every node
then becomes a member, at its address on `pool.subnet`'s network, and keeps the
member's id in `node.data['lb_member']`. Nodes created later (scale out, node create,
a RECREATE recovery) join; nodes deleted leave first. Detaching deletes what the
attach created, or removes the members from a pool that existed before.

Unlike Senlin, whose member leaves only when the node's own deletion starts (after a
lifecycle hook was answered), a node leaves the pool *before* its hook fires: the
application gets the message for a node that no longer receives traffic, as AWS
deregisters an instance before its Terminating:Wait.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from domain.cluster.policies.base import MAX_SECONDS, FieldError, SpecModel
from domain.cluster.state import AttachedPolicy
from domain.errors import InvalidRequest

#: Where a node keeps its member id (Senlin's key).
LB_MEMBER: Final = "lb_member"
#: The policy type, as Senlin names it.
POLICY_TYPE: Final = "senlin.policy.loadbalance"
#: The one profile type Senlin's policy works with.
PROFILE_TYPES: Final = ("os.nova.server",)


class Protocol(StrEnum):
    HTTP = "HTTP"
    HTTPS = "HTTPS"
    TCP = "TCP"


class LbMethod(StrEnum):
    ROUND_ROBIN = "ROUND_ROBIN"
    LEAST_CONNECTIONS = "LEAST_CONNECTIONS"
    SOURCE_IP = "SOURCE_IP"


class MonitorType(StrEnum):
    PING = "PING"
    TCP = "TCP"
    HTTP = "HTTP"
    HTTPS = "HTTPS"


class HttpMethod(StrEnum):
    GET = "GET"
    POST = "POST"
    PUT = "PUT"
    DELETE = "DELETE"


class PersistenceType(StrEnum):
    SOURCE_IP = "SOURCE_IP"
    HTTP_COOKIE = "HTTP_COOKIE"
    APP_COOKIE = "APP_COOKIE"
    NONE = "NONE"


class SessionPersistence(SpecModel):
    type: PersistenceType | None = None
    cookie_name: str | None = None


class PoolSpec(SpecModel):
    """`pool`: the members' protocol and port, and the subnet their addresses are on."""

    protocol: Protocol = Protocol.HTTP
    protocol_port: int = Field(80, ge=1, le=65535)
    subnet: str = Field(min_length=1)
    lb_method: LbMethod = LbMethod.ROUND_ROBIN
    admin_state_up: bool = True
    session_persistence: SessionPersistence = SessionPersistence()
    #: An existing pool (with `loadbalancer`): members go there, nothing is created.
    id: str | None = None


class VipSpec(SpecModel):
    """`vip`: where the load balancer listens."""

    subnet: str | None = None
    network: str | None = None
    address: str | None = None
    connection_limit: int = Field(-1, ge=-1)
    protocol: Protocol = Protocol.HTTP
    protocol_port: int = Field(80, ge=1, le=65535)
    admin_state_up: bool = True


class HealthMonitorSpec(SpecModel):
    """`health_monitor`: how Octavia probes the members (seconds, as Octavia reads them)."""

    type: MonitorType = MonitorType.PING
    delay: int = Field(10, ge=0)
    timeout: int = Field(5, ge=0)
    max_retries: int = Field(3, ge=1, le=10)
    admin_state_up: bool = True
    http_method: HttpMethod | None = None
    url_path: str | None = None
    expected_codes: str | None = None
    id: str | None = None


class LoadBalancePolicyProperties(SpecModel):
    """`senlin.policy.loadbalance` properties (Senlin's defaults)."""

    pool: PoolSpec
    vip: VipSpec = VipSpec()
    health_monitor: HealthMonitorSpec | None = None
    lb_status_timeout: int = Field(300, ge=1, le=MAX_SECONDS)
    loadbalancer: str | None = None
    availability_zone: str | None = None
    flavor_id: str | None = None

    @model_validator(mode="after")
    def _vip_has_a_place(self) -> Self:
        if not self.vip.subnet and not self.vip.network:
            # Senlin's `validate`: "At least one of VIP Subnet or Network must be defined."
            raise FieldError("vip", "At least one of VIP Subnet or Network must be defined.")
        return self


class LbResources(BaseModel):
    """What the attach made or found (Senlin's cluster-policy `data`)."""

    model_config = ConfigDict(frozen=True)

    loadbalancer: str
    pool: str
    listener: str | None = None
    healthmonitor: str | None = None
    vip_address: str | None = None
    #: The load balancer was named by the policy: detach only removes the members.
    preexisting: bool = False


class LbBinding(BaseModel):
    """A bound load-balancing policy as the children that change members see it."""

    model_config = ConfigDict(frozen=True)

    policy_id: str
    properties: LoadBalancePolicyProperties
    resources: LbResources | None = None

    @property
    def timeout_s(self) -> int:
        """How long each wait for the load balancer to be ACTIVE may take."""
        return self.properties.lb_status_timeout


def lb_names(cluster_name: str) -> dict[str, str]:
    """The names Senlin gives what the attach creates."""
    return {
        "loadbalancer": f"senlin-lb-{cluster_name}",
        "listener": f"senlin-listener-{cluster_name}",
        "pool": f"senlin-pool-{cluster_name}",
    }


def member_address(addresses: Any, network_name: str, ip_version: int) -> str:
    """The node's address on the pool's network of the subnet's IP version (Senlin's
    `member_add`); InvalidRequest naming why there is none."""
    if not isinstance(addresses, dict) or network_name not in addresses:
        raise InvalidRequest(f"Node is not in subnet's network {network_name}")
    for entry in addresses[network_name] or ():
        if isinstance(entry, dict) and int(entry.get("version", 4)) == ip_version:
            return str(entry.get("addr"))
    raise InvalidRequest(f"Node has no IPv{ip_version} address on network {network_name}")


def member_name(node_name: str) -> str:
    """A member is named after its node's server (Senlin: the server's name)."""
    return node_name


def with_member(data: dict[str, Any], member_id: str | None) -> dict[str, Any]:
    """A node's data with (or, given None, without) its member id."""
    kept = {k: v for k, v in data.items() if k != LB_MEMBER}
    return kept if member_id is None else {**kept, LB_MEMBER: member_id}


def lb_binding(policies: list[AttachedPolicy]) -> LbBinding | None:
    """The enabled load-balancing policy among a cluster's bindings, once its attach has
    made (or found) the load balancer."""
    for bound in policies:
        if bound.type == POLICY_TYPE and bound.enabled and bound.data:
            return binding_of(bound)
    return None


def binding_of(bound: AttachedPolicy) -> LbBinding:
    """A bound load-balancing policy with what its attach made (none yet: `resources`
    is None)."""
    return LbBinding(
        policy_id=bound.policy_id,
        properties=LoadBalancePolicyProperties.model_validate(bound.properties),
        resources=LbResources.model_validate(bound.data) if bound.data else None,
    )
