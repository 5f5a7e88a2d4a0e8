"""Node activities: remove a cluster member (its server, then its record) in one call."""

from __future__ import annotations

import asyncio
import re

from sqlalchemy.engine import Engine
from temporalio import activity

from activities.cloud.collections import CollectionClient
from activities.cloud.compute import ComputeClient
from activities.cloud.reads import read
from activities.errors import application_error
from activities.server_networking import release_owned
from domain.errors import BackendNotFound, WardenError
from domain.projection import ChangeSet, NodeRemoval
from domain.servers import NODE_KEY
from store.changes import apply_changes
from store.db import session_scope

#: How often the server is looked at while it goes away.
POLL_INTERVAL_S = 0.25
MAX_POLL_INTERVAL_S = 2.0


class NodeActivities:
    """Activities that need both the compute API and the database."""

    def __init__(self, compute: ComputeClient, objects: CollectionClient, engine: Engine) -> None:
        self._compute = compute
        self._objects = objects
        self._engine = engine

    @activity.defn(name="remove_node")
    async def remove_node(self, removal: NodeRemoval) -> None:
        """Delete the server and wait for it to vanish (heartbeating), then project.

        One activity instead of delete + poll + record keeps a node's deletion at
        three history events; every step is idempotent, so a retry after a worker
        crash repeats no deletion (a server already gone counts as deleted).
        """
        try:
            if removal.destroy and removal.physical_id:
                await self._delete_and_wait(removal.physical_id)
            if removal.name:
                await self._delete_leftovers(removal)
        except WardenError as err:
            raise application_error(err) from err
        await asyncio.to_thread(self._write, removal.changes)

    async def _delete_leftovers(self, removal: NodeRemoval) -> None:
        """Delete the node's other servers: one a RECREATE could not delete, or the
        duplicate a create made when its answer came after the client's timeout."""
        assert removal.name is not None
        name = f"^{re.escape(removal.name)}$"
        servers = await read(
            lambda: self._compute.list_servers(name=name, metadata={NODE_KEY: removal.node_id})
        )
        leftovers = [
            s.id for s in servers if s.id != removal.physical_id and s.status.upper() != "DELETED"
        ]
        if leftovers:
            activity.logger.warning(
                "Node %s: deleting %d leftover server(s) %s",
                removal.node_id,
                len(leftovers),
                leftovers,
            )
            await asyncio.gather(*(self._delete_and_wait(pid) for pid in leftovers))

    async def _delete_and_wait(self, physical_id: str) -> None:
        await self._compute.delete_server(physical_id)
        await release_owned(self._objects, physical_id)
        interval = POLL_INTERVAL_S
        while True:
            try:
                server = await read(lambda: self._compute.get_server(physical_id))
            except BackendNotFound:
                return
            if server.status.upper() == "DELETED":
                return
            activity.heartbeat(server.status)
            await asyncio.sleep(interval)
            interval = min(interval * 2, MAX_POLL_INTERVAL_S)

    def _write(self, changes: ChangeSet) -> None:
        if changes.is_empty():
            return
        with session_scope(self._engine) as session:
            apply_changes(session, changes)
