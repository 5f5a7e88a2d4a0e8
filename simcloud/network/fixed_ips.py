"""A port's `fixed_ips`: which subnet each requested address comes from, and changes.

As `neutron.db.ipam_pluggable_backend` does: a port created without `fixed_ips` gets
one IPv4 address from the first IPv4 subnet with room (and one IPv6 likewise); an
entry may name a `subnet_id`, an `ip_address`, or both; specific addresses are
claimed before automatic ones, and a failure gives back whatever the call claimed.
"""

from __future__ import annotations

from typing import Any

from simcloud.errors import SimError
from simcloud.network import ipam
from simcloud.network.exceptions import bad_request, fault, invalid_input
from simcloud.network.state import NetworkState, Record

FixedIp = dict[str, str]


def assign_ips(
    net: NetworkState, network: Record, requests: list[dict[str, Any]] | None, port_id: str
) -> list[FixedIp]:
    """Claim addresses for a port: the requested ones, or one per IP version."""
    taken: list[FixedIp] = []
    try:
        if requests is None:
            for version in (4, 6):
                _take_any(net, network, version, port_id, taken)
        else:
            # Specific addresses first: an automatic one might otherwise take them.
            for request in sorted(requests, key=lambda r: r.get("ip_address") is None):
                _take_requested(net, network, request, port_id, taken)
    except SimError:
        release(net, taken, port_id)
        raise
    return taken


def _take_any(
    net: NetworkState, network: Record, version: int, port_id: str, taken: list[FixedIp]
) -> None:
    subnets = [
        net.subnets[s] for s in network["subnets"] if net.subnets[s]["ip_version"] == version
    ]
    for subnet in subnets:
        try:
            address = ipam.take(net, subnet, port_id, None)
        except SimError as exc:
            if exc.error_type != "IpAddressGenerationFailure":
                raise
            continue
        taken.append({"subnet_id": subnet["id"], "ip_address": address})
        return
    if subnets:
        raise fault("IpAddressGenerationFailure", net_id=network["id"])


def _take_requested(
    net: NetworkState,
    network: Record,
    request: dict[str, Any],
    port_id: str,
    taken: list[FixedIp],
) -> None:
    subnet_id, ip_address = request.get("subnet_id"), request.get("ip_address")
    if subnet_id is not None:
        subnet = net.subnets.get(subnet_id)
        if subnet is None:
            raise fault("SubnetNotFound", subnet_id=subnet_id)
        if subnet["network_id"] != network["id"]:
            raise invalid_input(
                f"Failed to create port on network {network['id']}, because fixed_ips "
                f"included invalid subnet {subnet_id}"
            )
    elif ip_address is not None:
        subnet = _subnet_holding(net, network, ip_address)
    else:
        raise invalid_input("IP allocation requires subnet_id or ip_address")
    address = ipam.take(net, subnet, port_id, ip_address)
    taken.append({"subnet_id": subnet["id"], "ip_address": address})


def _subnet_holding(net: NetworkState, network: Record, ip_address: str) -> Record:
    for subnet_id in network["subnets"]:
        subnet = net.subnets[subnet_id]
        if ipam.is_host(subnet, ip_address):
            return subnet
    raise fault("InvalidIpForNetwork", ip_address=ip_address)


def release(net: NetworkState, fixed_ips: list[FixedIp], port_id: str) -> None:
    """Give addresses back to their subnets (those the port still holds)."""
    for fixed_ip in fixed_ips:
        allocated = net.allocations.get(fixed_ip["subnet_id"], {})
        if allocated.get(fixed_ip["ip_address"]) == port_id:
            del allocated[fixed_ip["ip_address"]]


def replace_ips(net: NetworkState, port: Record, requests: list[dict[str, Any]]) -> None:
    """Set a port's `fixed_ips` to `requests`, keeping the addresses asked for again.

    An entry naming only a subnet on which the port has an address keeps that address
    (`_get_changed_ips_for_port`); an address a floating IP uses may not go.
    """
    remaining = list(port["fixed_ips"])
    kept: list[FixedIp] = []
    added: list[dict[str, Any]] = []
    for request in requests:
        match = next((ip for ip in remaining if _fits(ip, request)), None)
        if match is None:
            added.append(request)
        else:
            remaining.remove(match)
            kept.append(match)
    _check_not_floating(net, port, remaining)
    release(net, remaining, port["id"])
    try:
        new = assign_ips(net, net.networks[port["network_id"]], added, port["id"])
    except SimError:
        for fixed_ip in remaining:
            net.allocations[fixed_ip["subnet_id"]][fixed_ip["ip_address"]] = port["id"]
        raise
    port["fixed_ips"] = kept + new


def _fits(fixed_ip: FixedIp, request: dict[str, Any]) -> bool:
    subnet_id, ip_address = request.get("subnet_id"), request.get("ip_address")
    if subnet_id is None and ip_address is None:
        return False
    return (subnet_id is None or fixed_ip["subnet_id"] == subnet_id) and (
        ip_address is None or fixed_ip["ip_address"] == ip_address
    )


def _check_not_floating(net: NetworkState, port: Record, leaving: list[FixedIp]) -> None:
    addresses = {ip["ip_address"] for ip in leaving}
    for fip_id in net.port_floatingips.get(port["id"], set()):
        if net.floatingips[fip_id]["fixed_ip_address"] in addresses:
            raise bad_request(
                "port",
                f"Cannot update the fixed_ips of the port {port['id']}, because its "
                "original fixed_ip has been associated to a floating ip",
            )
