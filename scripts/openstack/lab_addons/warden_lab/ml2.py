"""Binds every port on its first segment and marks it ACTIVE at once.

A lab runs no L2 agent, so nothing would ever report a port's device as up: the
driver itself sets the status when it binds, which is what an agent does once the
tap device is wired. Nova's fake virt driver plugs nothing, so `other` is the honest
VIF type.
"""

from __future__ import annotations

from typing import Any

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api

VIF_DETAILS = {portbindings.CAP_PORT_FILTER: False, "connectivity": "l2"}


class AgentlessMechanismDriver(api.MechanismDriver):  # type: ignore[misc]
    """Bind any host, any network type, any VNIC type."""

    def initialize(self) -> None:
        """Nothing to connect to."""

    @property
    def connectivity(self) -> str:
        return str(portbindings.CONNECTIVITY_L2)

    def bind_port(self, context: Any) -> None:
        """Bind the first segment offered; ML2 calls this once a host is set."""
        for segment in context.segments_to_bind:
            context.set_binding(
                segment[api.ID],
                portbindings.VIF_TYPE_OTHER,
                dict(VIF_DETAILS),
                status=constants.PORT_STATUS_ACTIVE,
            )
            return
