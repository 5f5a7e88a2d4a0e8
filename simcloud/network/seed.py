"""The project network devstack makes: `private` with `private-subnet`.

A server created with `networks: auto` (or none given) gets its port there, as on a
devstack cloud; templates and profiles that name `private` find it.
"""

from __future__ import annotations

from typing import Any

from simcloud.network.networks import NetworkCreate, create_network
from simcloud.network.subnets import SubnetCreate, create_subnet
from simcloud.state import SimState


def seed_private_network(state: SimState) -> None:
    """Make the configured project network and its subnet (none when not configured)."""
    name = state.config.private_network
    if not name:
        return
    network = create_network(state, state.project_id, NetworkCreate(name=name))
    subnet: dict[str, Any] = {
        "network_id": network["id"],
        "ip_version": 4,
        "cidr": state.config.private_cidr,
        "name": f"{name}-subnet",
    }
    create_subnet(state, state.project_id, SubnetCreate.model_validate(subnet))
