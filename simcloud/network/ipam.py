"""Neutron's in-tree IPAM with the stdlib `ipaddress`: pools, gateways, allocation.

A subnet's addresses come from its allocation pools (by default the CIDR less the
network, broadcast and gateway addresses, `neutron.ipam.utils.generate_pools`).
Allocation takes the next free address after the last one given, wrapping around,
so a run of creates costs O(1) each rather than a scan from the pool's start; a
specific address may be any host address of the CIDR, inside the pools or not.
"""

from __future__ import annotations

import ipaddress
import itertools
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

from simcloud.network.exceptions import fault, invalid_input
from simcloud.network.state import NetworkState, Record

Network = IPv4Network | IPv6Network
Address = IPv4Address | IPv6Address


def parse_cidr(cidr: str, ip_version: int) -> Network:
    """The subnet's network (host bits dropped, as Neutron stores it), checked."""
    net = ipaddress.ip_network(cidr, strict=False)
    if net.version != ip_version:
        raise invalid_input(f"cidr '{cidr}' does not match the ip_version '{ip_version}'")
    if net.prefixlen == 0:
        raise invalid_input("0 is not allowed as CIDR prefix length")
    return net


def _bounds(net: Network) -> tuple[int, int]:
    """First and last addresses a pool may hold (`validate_allocation_pools`)."""
    first, last = int(net.network_address), int(net.broadcast_address)
    if net.version == 6:
        return first + 1, last
    if net.prefixlen <= 30:
        return first + 1, last - 1
    return first, last


def default_gateway(net: Network) -> str:
    """The first host address (Neutron's default `gateway_ip`)."""
    return str(net.network_address + 1) if net.num_addresses > 1 else str(net.network_address)


def default_pools(net: Network, gateway_ip: str | None) -> list[dict[str, str]]:
    """The CIDR's host addresses less the gateway, as `allocation_pools`."""
    low, high = _bounds(net)
    if low > high:
        return []
    ranges = [(low, high)]
    if gateway_ip is not None:
        gateway = int(ipaddress.ip_address(gateway_ip))
        if low <= gateway <= high:
            ranges = [(low, gateway - 1), (gateway + 1, high)]
    return [_pool(net, lo, hi) for lo, hi in ranges if lo <= hi]


def _pool(net: Network, low: int, high: int) -> dict[str, str]:
    return {"start": str(_address(net, low)), "end": str(_address(net, high))}


def _address(net: Network, value: int) -> Address:
    return IPv4Address(value) if net.version == 4 else IPv6Address(value)


def check_pools(net: Network, pools: list[dict[str, str]], gateway_ip: str | None) -> None:
    """Neutron's pool checks: ordered, inside the CIDR, disjoint, clear of the gateway."""
    low, high = _bounds(net)
    ranges: list[tuple[int, int, str]] = []
    for pool in pools:
        start, end = ipaddress.ip_address(pool["start"]), ipaddress.ip_address(pool["end"])
        text = f"{start}-{end}"
        if start.version != net.version or end.version != net.version or int(start) > int(end):
            raise fault("InvalidAllocationPool", pool=text)
        if int(start) < low or int(end) > high:
            raise fault("OutOfBoundsAllocationPool", pool=text, subnet_cidr=str(net))
        ranges.append((int(start), int(end), text))
    ranges.sort()
    for (_, end_1, text_1), (start_2, _, text_2) in itertools.pairwise(ranges):
        if start_2 <= end_1:
            raise fault(
                "OverlappingAllocationPools", pool_1=text_1, pool_2=text_2, subnet_cidr=str(net)
            )
    if gateway_ip is not None:
        gateway = int(ipaddress.ip_address(gateway_ip))
        for first, last, text in ranges:
            if first <= gateway <= last:
                raise fault("GatewayConflictWithAllocationPools", ip_address=gateway_ip, pool=text)


def check_gateway(net: Network, gateway_ip: str) -> None:
    """A gateway may not be the network or (IPv4) broadcast address."""
    gateway = ipaddress.ip_address(gateway_ip)
    if gateway.version != net.version:
        raise invalid_input(
            f"gateway_ip '{gateway_ip}' does not match the ip_version '{net.version}'"
        )
    if net.version == 4 and gateway in (net.network_address, net.broadcast_address):
        raise invalid_input("Gateway is not valid on subnet")


def is_host(subnet: Record, ip_address: str) -> bool:
    """Whether a port may hold `ip_address` on `subnet` (`ipam.utils.check_subnet_ip`)."""
    net = ipaddress.ip_network(subnet["cidr"])
    ip = ipaddress.ip_address(ip_address)
    if ip.version != net.version or ip not in net:
        return False
    if net.version == 6:
        return ip != net.network_address
    return net.prefixlen >= 31 or ip not in (net.network_address, net.broadcast_address)


def take(net_state: NetworkState, subnet: Record, port_id: str, ip_address: str | None) -> str:
    """Allocate `ip_address` (or the next free pool address) on `subnet` to a port."""
    allocated = net_state.allocations.setdefault(subnet["id"], {})
    if ip_address is not None:
        if allocated.get(ip_address, port_id) != port_id:
            raise fault("IpAddressAlreadyAllocated", ip=ip_address, subnet_id=subnet["id"])
        if not is_host(subnet, ip_address):
            raise fault("InvalidIpForSubnet", ip_address=ip_address)
        allocated[ip_address] = port_id
        return ip_address
    found = _next_free(subnet, allocated, net_state.cursors.get(subnet["id"], -1))
    if found is None:
        raise fault("IpAddressGenerationFailure", net_id=subnet["network_id"])
    net_state.cursors[subnet["id"]] = int(found)
    allocated[str(found)] = port_id
    return str(found)


def _next_free(subnet: Record, allocated: dict[str, str], cursor: int) -> Address | None:
    net = ipaddress.ip_network(subnet["cidr"])
    ranges = sorted(
        (int(ipaddress.ip_address(p["start"])), int(ipaddress.ip_address(p["end"])))
        for p in subnet["allocation_pools"]
    )
    # After the cursor first, then from the start up to it: one lap at most.
    laps = [(max(lo, cursor + 1), hi) for lo, hi in ranges]
    laps += [(lo, min(hi, cursor)) for lo, hi in ranges]
    for low, high in laps:
        for value in range(low, high + 1):
            address = _address(net, value)
            if str(address) not in allocated:
                return address
    return None
