"""Nova's side of a server's networking: ports on Neutron for each requested NIC.

`networks: auto` takes the one network the project may use (409 when there are
several, as Nova's `NetworkAmbiguous`), `none` gives no port, a list makes a port per
`uuid` (with its `fixed_ip`) or binds the user's `port`. Neutron's refusals come back
in Nova's words and codes.
"""

from __future__ import annotations

from typing import Any

from simcloud.errors import SimError
from simcloud.network.devices import create_port_for_server, release_device_ports
from simcloud.state import SimState

#: Neutron's refusal → Nova's status for it (a missing network or port is a 400 in Nova).
_NOVA_STATUS = {404: 400}


def _available_networks(state: SimState) -> list[dict[str, Any]]:
    """Networks a server may be plugged into without naming one (Nova's rule)."""
    return [
        n
        for n in state.network.networks.values()
        if (n["project_id"] == state.project_id or n["shared"]) and not n["router:external"]
    ]


def _requested(state: SimState, networks: Any) -> list[dict[str, Any]]:
    if networks == "none":
        return []
    if networks in (None, "auto"):
        found = _available_networks(state)
        if len(found) > 1:
            raise SimError(
                409, "Multiple possible networks found, use a Network ID to be more specific."
            )
        if not found:
            raise SimError(400, "Unable to automatically allocate a network for project")
        return [{"uuid": found[0]["id"]}]
    return list(networks)


def plug_server(
    state: SimState, server_id: str, networks: Any, security_groups: list[str] | None
) -> list[dict[str, Any]]:
    """Make (or bind) the server's ports; on any refusal none is left behind."""
    made: list[dict[str, Any]] = []
    try:
        for nic in _requested(state, networks):
            made.append(
                create_port_for_server(
                    state,
                    server_id,
                    network_id=nic.get("uuid"),
                    port_id=nic.get("port"),
                    fixed_ip=nic.get("fixed_ip"),
                    security_groups=security_groups if nic.get("uuid") else None,
                )
            )
    except SimError as err:
        release_device_ports(state, server_id)
        if err.style != "neutron":
            raise
        raise SimError(_NOVA_STATUS.get(err.status, err.status), err.message) from err
    return made
