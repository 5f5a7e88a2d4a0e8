"""The one node-event factory and its level mapping."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from domain.cluster.nodes import NodeStatus
from domain.events import Event, EventLevel, node_event, node_event_level

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def event(status: str, **extra: Any) -> Event:
    return node_event(
        event_id="e1",
        at=AT,
        project_id="demo",
        cluster_id="c1",
        node_id="n1",
        node_name="web-1",
        action="NODE_MARK_UNHEALTHY",
        status=status,
        reason="Marked unhealthy by user",
        **extra,
    )


@pytest.mark.parametrize(
    ("status", "level"),
    [
        (NodeStatus.ERROR, EventLevel.ERROR),
        (NodeStatus.WARNING, EventLevel.INFO),
        (NodeStatus.ACTIVE, EventLevel.INFO),
        (NodeStatus.DELETING, EventLevel.INFO),
        ("WAITING_LIFECYCLE_COMPLETION", EventLevel.INFO),
    ],
)
def test_node_event_level_is_error_only_for_a_node_in_error(status: str, level: EventLevel) -> None:
    assert node_event_level(status) == level


def test_node_event_takes_its_level_from_the_status_unless_given() -> None:
    assert event(NodeStatus.ERROR).level == EventLevel.ERROR
    warned = event(NodeStatus.ERROR, level=EventLevel.WARNING)
    assert warned.level == EventLevel.WARNING


def test_node_event_describes_the_node_of_its_cluster() -> None:
    built = event(NodeStatus.ERROR, action_id="a1", meta={"attempt": 2})
    assert built.model_dump() == {
        "event_id": "e1",
        "project_id": "demo",
        "obj_type": "node",
        "obj_id": "n1",
        "obj_name": "web-1",
        "cluster_id": "c1",
        "stack_id": None,
        "action": "NODE_MARK_UNHEALTHY",
        "status": "ERROR",
        "status_reason": "Marked unhealthy by user",
        "level": EventLevel.ERROR,
        "action_id": "a1",
        "meta": {"attempt": 2},
        "at": AT,
    }
