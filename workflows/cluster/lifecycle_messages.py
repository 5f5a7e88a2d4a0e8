"""What a waiting victim (`node-delete:{token}`) takes and shows: a leaf the API imports."""

from __future__ import annotations

from datetime import datetime
from typing import Final

from pydantic import BaseModel

#: The signals an app sends a waiting victim, under their upstream (AWS, Senlin) names:
#: delete the node now, or move its deadline. The API's cluster action of the same name
#: sends them; an app talking to Temporal directly sends them itself.
COMPLETE_LIFECYCLE: Final = "complete_lifecycle"
HEARTBEAT_LIFECYCLE: Final = "heartbeat_lifecycle"
LIFECYCLE_SIGNALS: Final = frozenset({COMPLETE_LIFECYCLE, HEARTBEAT_LIFECYCLE})


class LifecycleView(BaseModel):
    """What the `describe` query shows about a waiting victim."""

    token: str
    node_id: str
    node_name: str
    waiting: bool
    deadline: datetime | None
    heartbeats: int
    outcome: str
