"""What the health manager receives and shows: a leaf the API imports.

The API forwards Nova notifications as `LifecycleEvent`s and reads the manager's
`describe` query as a `HealthSummary`, without importing the workflow (and, with it,
the activities it calls).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from domain.cluster.health import NodeHealth


class LifecycleEvent(BaseModel):
    """A Nova notification about one of the cluster's servers (from `/v1/notifications`)."""

    node_id: str
    event_type: str
    at: datetime | None = None


class RecoveryRecord(BaseModel):
    """One recovery the manager asked for (shown by `describe`)."""

    node_id: str
    name: str
    attempt: int
    reason: str
    at: datetime


class HealthSummary(BaseModel):
    """The `describe` query: per-node state, last probes, recovery history."""

    cluster_id: str
    paused: bool
    locked: bool
    warning: str
    last_round: datetime | None
    nodes: list[NodeHealth]
    recoveries: list[RecoveryRecord]
