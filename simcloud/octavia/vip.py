"""A load balancer's VIP: where it lives in simcloud's Neutron, and its port.

`resolve_vip` checks the request the way `LoadBalancersController` does (a port, a
network or a subnet must be named, and exist) and works out the network, subnet and
address; `allocate_vip` then makes the port as Octavia's allowed-address-pairs driver
does (`octavia-lb-<id>`, `device_owner` `Octavia`, `device_id` `lb-<id>`, admin down),
unless the user brought a port of their own, which Octavia neither changes nor deletes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from simcloud.errors import SimError
from simcloud.network.ports import PortSpec, create_port, delete_port
from simcloud.network.records import ensure_quota, find
from simcloud.network.state import Record
from simcloud.octavia.exceptions import fault, validation
from simcloud.octavia.state import LoadBalancerRecord
from simcloud.state import SimState

OCTAVIA_OWNER = "Octavia"


@dataclass(frozen=True)
class VipRequest:
    """The VIP attributes of a load balancer create."""

    port_id: str | None = None
    subnet_id: str | None = None
    network_id: str | None = None
    address: str | None = None
    qos_policy_id: str | None = None
    sg_ids: tuple[str, ...] = ()
    #: `additional_vips`: (subnet id, wanted address or None)
    additional: tuple[tuple[str, str | None], ...] = ()


@dataclass
class Vip:
    """Where a VIP lives; `port_id` and `address` are known once it is allocated."""

    network_id: str
    subnet_id: str
    address: str | None = None
    port_id: str | None = None
    additional: list[dict[str, Any]] = field(default_factory=list)
    sg_ids: list[str] = field(default_factory=list)


def resolve_vip(state: SimState, project_id: str, request: VipRequest) -> Vip:
    """The VIP a create asks for, checked against Neutron; 400 when it cannot be."""
    if not (request.port_id or request.network_id or request.subnet_id):
        raise fault("VIPValidationException", objects="vip_port_id, vip_network_id, vip_subnet_id")
    if request.port_id:
        vip = _from_port(state, project_id, request)
    elif request.network_id:
        vip = _from_network(state, project_id, request)
    else:
        subnet = _lookup(state, "subnets", str(request.subnet_id), project_id, "Subnet")
        vip = Vip(subnet["network_id"], subnet["id"], request.address)
    if request.qos_policy_id:
        raise validation("VIP QoS policy is not allowed in this deployment.")
    vip.additional = _additional(state, vip, request.additional)
    check_security_groups(state, project_id, request.sg_ids)
    vip.sg_ids = list(request.sg_ids)
    return vip


def check_security_groups(state: SimState, project_id: str, group_ids: Iterable[str]) -> None:
    """400 InvalidSubresource for a `vip_sg_ids` group that does not exist."""
    for group in group_ids:
        _lookup(state, "security_groups", group, project_id, "Security Group")


def _lookup(state: SimState, collection: str, record_id: str, project: str, kind: str) -> Record:
    try:
        return find(state, collection, record_id, project)
    except SimError as exc:
        raise fault("InvalidSubresource", resource=kind, id=record_id) from exc


def _from_port(state: SimState, project_id: str, request: VipRequest) -> Vip:
    port_id = str(request.port_id)
    port = _lookup(state, "ports", port_id, project_id, "Port")
    if port["device_id"]:
        raise validation(f"Port {port_id} is already used by device {port['device_id']} ")
    fixed = [(f["subnet_id"], f["ip_address"]) for f in port["fixed_ips"]]
    if request.subnet_id:
        _lookup(state, "subnets", request.subnet_id, project_id, "Subnet")
        found = [ip for subnet, ip in fixed if subnet == request.subnet_id]
        if not found:
            raise validation(
                "No VIP address found on the specified VIP port within the specified subnet."
            )
        return Vip(port["network_id"], request.subnet_id, found[0], port_id)
    if request.address:
        wanted = ipaddress.ip_address(request.address)
        subnets = [s for s, ip in fixed if ipaddress.ip_address(ip) == wanted]
        if not subnets:
            raise validation("Specified VIP address not found on the specified VIP port.")
        return Vip(port["network_id"], subnets[0], request.address, port_id)
    if len(fixed) != 1:
        raise validation(
            "VIP port's subnet could not be determined. Please specify either a VIP "
            "subnet or address."
        )
    return Vip(port["network_id"], fixed[0][0], fixed[0][1], port_id)


def _from_network(state: SimState, project_id: str, request: VipRequest) -> Vip:
    network = _lookup(state, "networks", str(request.network_id), project_id, "Network")
    subnet_ids: list[str] = network["subnets"]
    if request.subnet_id:
        if request.subnet_id not in subnet_ids:
            raise fault("InvalidSubresource", resource="Subnet", id=request.subnet_id)
        return Vip(network["id"], request.subnet_id, request.address)
    subnets = [state.network.subnets[s] for s in subnet_ids]
    if request.address:
        wanted = ipaddress.ip_address(request.address)
        holding = [s for s in subnets if wanted in ipaddress.ip_network(s["cidr"])]
        if not holding:
            raise validation(
                "Supplied network does not contain a subnet for VIP address specified."
            )
        return Vip(network["id"], holding[0]["id"], request.address)
    if not subnets:
        raise validation("Supplied network does not contain a subnet.")
    # Octavia takes the first subnet, preferring IPv4
    chosen = next((s for s in subnets if s["ip_version"] == 4), subnets[0])
    return Vip(network["id"], chosen["id"])


def _additional(
    state: SimState, vip: Vip, wanted: tuple[tuple[str, str | None], ...]
) -> list[dict[str, Any]]:
    used = [vip.subnet_id, *(subnet for subnet, _ in wanted)]
    if len(set(used)) != len(used):
        raise validation("Duplicate VIP subnet(s) specified. Only one IP can be bound per subnet.")
    for subnet_id, _ in wanted:
        subnet = state.network.subnets.get(subnet_id)
        if subnet is None:
            raise validation(f"Subnet {subnet_id} not found")
        if subnet["network_id"] != vip.network_id:
            raise validation("All VIP subnets must belong to the same network.")
    return [{"subnet_id": s, "ip_address": ip} for s, ip in wanted]


def allocate_vip(state: SimState, loadbalancer_id: str, project_id: str, vip: Vip) -> bool:
    """Give the VIP its port and addresses; True when Octavia made (and owns) the port.

    Raises:
        SimError: Neutron's refusal (an address in use, a port quota met), with its
            status and message in Octavia's body, as Octavia passes them on.
    """
    if vip.port_id is not None:
        port = state.network.ports[vip.port_id]
        _fill_addresses(vip, port)
        return False
    wanted = [{"subnet_id": vip.subnet_id} | ({"ip_address": vip.address} if vip.address else {})]
    wanted += [{k: v for k, v in extra.items() if v is not None} for extra in vip.additional]
    spec = PortSpec(
        network_id=vip.network_id,
        project_id=project_id,
        name=f"octavia-lb-{loadbalancer_id}",
        admin_state_up=False,
        fixed_ips=wanted,
        device_id=f"lb-{loadbalancer_id}",
        device_owner=OCTAVIA_OWNER,
        security_groups=vip.sg_ids or None,
        status="DOWN",
    )
    try:
        ensure_quota(state, project_id, "port")
        port = create_port(state, spec)
    except SimError as exc:
        raise SimError(exc.status, exc.message, style="octavia") from exc
    vip.port_id = port["id"]
    _fill_addresses(vip, port)
    return True


def _fill_addresses(vip: Vip, port: Record) -> None:
    by_subnet = {f["subnet_id"]: f["ip_address"] for f in port["fixed_ips"]}
    vip.address = by_subnet.get(vip.subnet_id, vip.address)
    for extra in vip.additional:
        extra["ip_address"] = by_subnet.get(extra["subnet_id"], extra["ip_address"])


def release_vip(state: SimState, loadbalancer: LoadBalancerRecord) -> None:
    """On delete: remove the VIP port Octavia made; a user's port is left alone."""
    port = state.network.ports.get(loadbalancer.vip_port_id)
    if loadbalancer.vip_port_owned and port is not None:
        delete_port(state, port)
