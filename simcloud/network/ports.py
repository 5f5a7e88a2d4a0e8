"""Ports: how one is made, bound to a device and removed (the routes are in `port_routes`).

Routers, floating IPs and Nova make their ports through `create_port` as Neutron's L3
plugin goes through the core plugin. A port is DOWN until a device holds it, then
ACTIVE; ports that Neutron owns (`network:*`) get no security groups; ports of routers
and floating IPs go only with their router interface or floating IP.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from simcloud.errors import SimError
from simcloud.network.exceptions import fault
from simcloud.network.fixed_ips import assign_ips, release
from simcloud.network.records import new_record, touch
from simcloud.network.security_groups import default_group
from simcloud.network.state import Record
from simcloud.state import SimState

#: Ports the L3 plugin owns: only their router or floating IP may delete them.
ROUTER_OWNERS = frozenset(
    {
        "network:router_interface",
        "network:router_interface_distributed",
        "network:ha_router_replicated_interface",
        "network:router_gateway",
        "network:router_centralized_snat",
        "network:floatingip",
    }
)
#: Ports deleted along with their network (`AUTO_DELETE_PORT_OWNERS`).
AUTO_DELETE_OWNERS = frozenset(
    {"network:dhcp", "network:distributed", "network:floatingip_agent_gateway"}
)


@dataclass
class PortSpec:
    """What a new port should be; `None` means Neutron's default."""

    network_id: str
    project_id: str
    name: str = ""
    description: str = ""
    admin_state_up: bool = True
    mac_address: str | None = None
    #: Requested `fixed_ips` entries (`subnet_id` and/or `ip_address`).
    fixed_ips: list[dict[str, Any]] | None = None
    device_id: str = ""
    device_owner: str = ""
    #: Group ids, already resolved; None gives the project's `default` group.
    security_groups: list[str] | None = None
    allowed_address_pairs: list[dict[str, str]] = field(default_factory=list)
    port_security_enabled: bool | None = None
    vnic_type: str = "normal"
    tags: list[str] = field(default_factory=list)
    status: str | None = None


def status_for(device_id: str) -> str:
    """ACTIVE once a device holds the port (simcloud binds at once), else DOWN."""
    return "ACTIVE" if device_id else "DOWN"


def create_port(state: SimState, spec: PortSpec) -> Record:
    """Make and index a port, allocating its addresses and MAC."""
    net = state.network
    network = net.networks[spec.network_id]
    security = spec.port_security_enabled
    if security is None:
        security = bool(network["port_security_enabled"])
    if spec.allowed_address_pairs and not security:
        raise fault("AddressPairAndPortSecurityRequired")
    mac = spec.mac_address or net.new_mac()
    if spec.mac_address is not None and _mac_taken(state, network["id"], mac):
        raise fault("MacAddressInUse", net_id=network["id"], mac=mac)
    port_id = str(uuid.uuid4())
    fixed_ips = assign_ips(net, network, spec.fixed_ips, port_id)
    try:
        groups = _groups(state, spec, security, has_ip=bool(fixed_ips))
    except SimError:
        release(net, fixed_ips, port_id)
        raise
    port = new_record(
        state,
        spec.project_id,
        id=port_id,
        name=spec.name,
        description=spec.description,
        network_id=network["id"],
        mac_address=mac,
        admin_state_up=spec.admin_state_up,
        status=spec.status or status_for(spec.device_id),
        device_id=spec.device_id,
        device_owner=spec.device_owner,
        fixed_ips=fixed_ips,
        security_groups=groups,
        allowed_address_pairs=list(spec.allowed_address_pairs),
        port_security_enabled=security,
        tags=list(spec.tags),
        **{"binding:vnic_type": spec.vnic_type},
    )
    net.add("ports", port)
    net.index_port(port)
    return port


def _groups(state: SimState, spec: PortSpec, security: bool, *, has_ip: bool) -> list[str]:
    if spec.device_owner.startswith("network:"):
        return []  # Neutron's own ports are trusted
    if spec.security_groups is None:
        return [default_group(state, spec.project_id)["id"]] if security and has_ip else []
    if spec.security_groups and not (security and has_ip):
        raise fault("PortSecurityAndIPRequiredForSecurityGroups")
    return list(spec.security_groups)


def _mac_taken(state: SimState, network_id: str, mac: str) -> bool:
    ports = state.network.ports
    return any(
        ports[p]["mac_address"] == mac for p in state.network.network_ports.get(network_id, ())
    )


def set_device(state: SimState, port: Record, device_id: str, device_owner: str) -> None:
    """Attach a port to a device (or detach it with empty strings)."""
    net = state.network
    net.unindex_port(port)
    port["device_id"], port["device_owner"] = device_id, device_owner
    if port["status"] in ("ACTIVE", "DOWN"):
        port["status"] = status_for(device_id)
    net.index_port(port)
    touch(state, port)


def check_deletable(state: SimState, port: Record) -> None:
    """A router's or floating IP's port answers 409 to a direct delete."""
    owner, device = port["device_owner"], port["device_id"]
    if owner not in ROUTER_OWNERS:
        return
    holder = state.network.floatingips if owner == "network:floatingip" else state.network.routers
    if device in holder:
        raise fault("ServicePortInUse", port_id=port["id"], reason=f"has device owner {owner}")


def delete_port(state: SimState, port: Record) -> None:
    """Remove a port: its addresses go back and its floating IPs are disassociated."""
    net = state.network
    detach_floating_ips(state, port["id"])
    net.unindex_port(port)
    net.nova_ports.discard(port["id"])
    net.drop("ports", port["id"])


def detach_floating_ips(state: SimState, port_id: str) -> None:
    """Disassociate the floating IPs of a port that goes (`disassociate_floatingips`)."""
    net = state.network
    for fip_id in net.port_floatingips.pop(port_id, set()):
        fip = net.floatingips[fip_id]
        fip.update(port_id=None, fixed_ip_address=None, router_id=None, status="DOWN")
        touch(state, fip)
