"""`POST /v1/notifications`: Nova notifications → the cluster's health manager."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from api.auth import Caller
from api.deps import Database
from api.temporal import TemporalGateway
from domain.cluster.notifications import failure_event, instance_uuid
from domain.errors import NotFound
from store.clusters import NodeRecord, get_node_by_physical_id
from workflows import ids
from workflows.health.messages import LifecycleEvent


class Notification(BaseModel):
    """The parts of a Nova notification Warden reads (the rest is ignored)."""

    model_config = ConfigDict(extra="ignore")

    event_type: str = Field(min_length=1, max_length=255)
    payload: dict[str, Any] = Field(default_factory=dict)


class NotificationAccepted(BaseModel):
    """What Warden did with a notification."""

    accepted: bool
    node_id: str | None = None
    reason: str = ""


async def ingest(
    db: Database, temporal: TemporalGateway, caller: Caller, note: Notification
) -> NotificationAccepted:
    """Signal the node's health manager when the event is one detection cares about."""
    event_type = failure_event(note.event_type)
    if event_type is None:
        return NotificationAccepted(accepted=False, reason="event type not used by Warden")
    server_id = instance_uuid(note.payload)
    if server_id is None:
        return NotificationAccepted(accepted=False, reason="no instance uuid in the payload")
    node: NodeRecord | None = await db.run(get_node_by_physical_id, caller.project_id, server_id)
    if node is None:
        return NotificationAccepted(accepted=False, reason="no node runs on this server")
    client = await temporal.client()
    handle = client.get_workflow_handle(ids.health_manager(node.cluster_id))
    try:
        await temporal.call(
            handle.signal(
                "lifecycle_event",
                LifecycleEvent(node_id=node.id, event_type=event_type),
                rpc_timeout=temporal.rpc_timeout,
            ),
            subject=f"Health manager of cluster {node.cluster_id}",
        )
    except NotFound:
        return NotificationAccepted(
            accepted=False, node_id=node.id, reason="the cluster has no health policy"
        )
    return NotificationAccepted(accepted=True, node_id=node.id)
