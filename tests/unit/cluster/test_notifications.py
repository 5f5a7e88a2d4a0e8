"""Nova's notifications as LIFECYCLE_EVENTS detection reads them, legacy and versioned."""

from __future__ import annotations

import pytest

from domain.cluster.notifications import failure_event, instance_uuid


@pytest.mark.parametrize(
    ("event_type", "expected"),
    [
        ("compute.instance.power_off.end", "compute.instance.power_off.end"),
        ("instance.power_off.end", "compute.instance.power_off.end"),
        ("instance.pause.end", "compute.instance.pause.end"),
        ("instance.shutdown.end", "compute.instance.shutdown.end"),
        ("instance.soft_delete.end", "compute.instance.soft_delete.end"),
        ("compute.instance.rebuild.error", "compute.instance.rebuild.error"),
        ("instance.rebuild.error", "compute.instance.rebuild.error"),
        ("compute.instance.pause.error", "compute.instance.pause.error"),
        ("instance.rebuild.end", None),
        ("instance.power_on.end", None),
        ("compute.instance.update", None),
        ("orchestration.stack.delete.end", None),
        ("compute.instance.rebuild.error.end", None),
    ],
)
def test_failure_events_are_named_the_legacy_way(event_type: str, expected: str | None) -> None:
    assert failure_event(event_type) == expected


def test_the_server_is_read_from_either_payload() -> None:
    versioned = {"nova_object.name": "InstanceActionPayload", "nova_object.data": {"uuid": "s-1"}}
    assert instance_uuid(versioned) == "s-1"
    assert instance_uuid({"instance_id": "s-2", "state": "stopped"}) == "s-2"
    assert instance_uuid({"nova_object.data": "not an object"}) is None
    assert instance_uuid({}) is None
