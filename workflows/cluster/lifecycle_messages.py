"""What a node deletion's `describe` query shows: a leaf the API imports."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class LifecycleView(BaseModel):
    """What the `describe` query shows about a waiting victim."""

    token: str
    node_id: str
    node_name: str
    waiting: bool
    deadline: datetime | None
    heartbeats: int
    outcome: str
