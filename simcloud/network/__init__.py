"""Neutron v2.0 (networks, subnets, ports, security groups, floating IPs, routers).

Other layers use `router` (the FastAPI routes under `/networking`) and, for Nova:

- `create_port_for_server(state, device_id, *, network_id=None, port_id=None,
  fixed_ip=None, security_groups=None, project_id=None) -> dict`: a new port on a
  network, or a user's port bound to the server (`device_owner` `compute:nova`).
- `ports_of_device(state, device_id) -> list[dict]`: the server's ports, oldest first.
- `release_device_ports(state, device_id) -> None`: on server delete, ports Nova made
  are deleted and pre-made ones unbound.
- `addresses_of_device(state, device_id) -> dict[str, list[dict]]`: Nova's
  `addresses` (network name → `addr`, `version`, `OS-EXT-IPS:type`,
  `OS-EXT-IPS-MAC:mac_addr`), fixed addresses each followed by its floating IPs.
- `find_network(state, name_or_id, project_id=None) -> dict`: by id, else by unique
  name; 404 `NetworkNotFound`, 409 when the name is ambiguous.
- `PUBLIC_NETWORK_ID`: devstack's external `public` network, seeded in every sim.

Records returned are copies; errors are `SimError(style="neutron")`. The names are
resolved on first use: the routes import `simcloud.state`, which imports this
package's `state` module, so importing them eagerly here would be circular whenever
`simcloud.state` is imported first.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "PUBLIC_NETWORK_ID",
    "addresses_of_device",
    "create_port_for_server",
    "find_network",
    "ports_of_device",
    "release_device_ports",
    "router",
]

_SOURCES = {
    "router": "simcloud.network.routes",
    "create_port_for_server": "simcloud.network.devices",
    "ports_of_device": "simcloud.network.devices",
    "release_device_ports": "simcloud.network.devices",
    "addresses_of_device": "simcloud.network.devices",
    "find_network": "simcloud.network.networks",
    "PUBLIC_NETWORK_ID": "simcloud.network.state",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_SOURCES[name]), name)
