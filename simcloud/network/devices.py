"""What Nova asks of Neutron for a server: its ports, their addresses, their release.

Nova's `allocate_for_instance` creates a port on each requested network (or binds a
port the user made), with `device_owner` `compute:nova`; on delete it removes the
ports it created and unbinds the others. `addresses_of_device` is the `addresses`
member of a Nova server: per network name, the fixed addresses, each followed by the
floating IPs associated with it. Errors are Neutron's (`SimError` with
`style="neutron"`); Nova turns them into its own answers.
"""

from __future__ import annotations

from typing import Any

from simcloud.network.exceptions import fault
from simcloud.network.ports import PortSpec, create_port, delete_port, set_device
from simcloud.network.records import detached, ensure_quota, find
from simcloud.network.security_groups import resolve_groups
from simcloud.network.state import Record
from simcloud.state import SimState

NOVA_OWNER = "compute:nova"


def create_port_for_server(
    state: SimState,
    device_id: str,
    *,
    network_id: str | None = None,
    port_id: str | None = None,
    fixed_ip: str | None = None,
    security_groups: list[str] | None = None,
    project_id: str | None = None,
) -> Record:
    """Give a server a port: a new one on `network_id`, or the existing `port_id`.

    Args:
        state: The simcloud.
        device_id: The server's id (the port's `device_id`).
        network_id: Network to make a port on (Nova's `networks: [{"uuid": ...}]`).
        port_id: A port the user made instead (`networks: [{"port": ...}]`).
        fixed_ip: The address wanted on the network (`fixed_ip`), if any.
        security_groups: Group names or ids for a new port; None gives the `default`
            group. A user's port keeps its own groups, as Nova leaves them.
        project_id: The server's project (default: the sim's own project).

    Returns:
        A copy of the bound port.

    Raises:
        SimError: NetworkNotFound/PortNotFound (404), PortInUse,
            IpAddressAlreadyAllocated, IpAddressGenerationFailure or OverQuota (409).
    """
    project = project_id or state.project_id
    if port_id is not None:
        port = find(state, "ports", port_id, project)
        if port["device_id"]:
            raise fault(
                "PortInUse",
                port_id=port_id,
                net_id=port["network_id"],
                device_id=port["device_id"],
            )
        set_device(state, port, device_id, NOVA_OWNER)
        return detached(port)
    if network_id is None:
        raise ValueError("create_port_for_server needs a network_id or a port_id")
    network = find(state, "networks", network_id, project)
    if network["project_id"] != project and not network["shared"]:
        raise fault("NetworkNotFound", net_id=network_id)
    groups = None if security_groups is None else resolve_groups(state, security_groups, project)
    ensure_quota(state, project, "port")
    spec = PortSpec(
        network_id=network_id,
        project_id=project,
        fixed_ips=None if fixed_ip is None else [{"ip_address": fixed_ip}],
        device_id=device_id,
        device_owner=NOVA_OWNER,
        security_groups=groups,
    )
    port = create_port(state, spec)
    state.network.nova_ports.add(port["id"])
    return detached(port)


def _ports(state: SimState, device_id: str) -> list[Record]:
    net = state.network
    ports = [net.ports[p] for p in net.device_ports.get(device_id, ())]
    return sorted(ports, key=lambda p: (p["created_at"], p["id"]))


def ports_of_device(state: SimState, device_id: str) -> list[Record]:
    """Copies of the ports a device (server) holds, oldest first."""
    return [detached(p) for p in _ports(state, device_id)]


def release_device_ports(state: SimState, device_id: str) -> None:
    """On server delete: remove the ports Nova made, unbind the ones the user made."""
    for port in _ports(state, device_id):
        if port["id"] in state.network.nova_ports:
            delete_port(state, port)
        else:
            set_device(state, port, "", "")


def addresses_of_device(state: SimState, device_id: str) -> dict[str, list[dict[str, Any]]]:
    """Nova's `addresses`: network name → fixed and floating addresses of the server."""
    net = state.network
    addresses: dict[str, list[dict[str, Any]]] = {}
    for port in _ports(state, device_id):
        entries = addresses.setdefault(net.networks[port["network_id"]]["name"], [])
        floating = [net.floatingips[f] for f in sorted(net.port_floatingips.get(port["id"], ()))]
        for fixed_ip in port["fixed_ips"]:
            address = fixed_ip["ip_address"]
            entries.append(_entry(address, "fixed", port["mac_address"]))
            entries.extend(
                _entry(f["floating_ip_address"], "floating", port["mac_address"])
                for f in floating
                if f["fixed_ip_address"] == address
            )
    return addresses


def _entry(address: str, kind: str, mac: str) -> dict[str, Any]:
    return {
        "addr": address,
        "version": 6 if ":" in address else 4,
        "OS-EXT-IPS:type": kind,
        "OS-EXT-IPS-MAC:mac_addr": mac,
    }
