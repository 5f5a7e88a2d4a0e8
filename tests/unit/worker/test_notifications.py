"""The notification listener's pure parts: oslo.messaging's envelope and transport URLs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from worker.notifications import amqp_urls, read_oslo_message

MESSAGE = {
    "message_id": "m-1",
    "publisher_id": "nova-compute:host-1",
    "event_type": "instance.power_off.end",
    "priority": "INFO",
    "payload": {"nova_object.data": {"uuid": "s-1"}},
    "timestamp": "2026-12-01 21:30:00.123456",
}


def test_the_2_0_envelope_and_the_bare_1_0_message_are_read_alike() -> None:
    envelope = json.dumps({"oslo.version": "2.0", "oslo.message": json.dumps(MESSAGE)})
    for body in (envelope.encode(), json.dumps(MESSAGE).encode()):
        note = read_oslo_message(body)
        assert note is not None
        assert note.event_type == "instance.power_off.end"
        assert note.payload == {"nova_object.data": {"uuid": "s-1"}}
        assert note.timestamp == datetime(2026, 12, 1, 21, 30, 0, 123456, tzinfo=UTC)


@pytest.mark.parametrize(
    "body",
    [b"", b"\xff", b"[]", b'{"oslo.version": "2.0", "oslo.message": "{"}', b'{"payload": {}}'],
)
def test_anything_else_is_not_a_notification(body: bytes) -> None:
    assert read_oslo_message(body) is None


def test_oslo_transport_urls_become_amqp_urls() -> None:
    assert amqp_urls("rabbit://nova:s3cret@mq-1:5672/") == ["amqp://nova:s3cret@mq-1:5672/"]
    assert amqp_urls("rabbit://u:p@mq-1:5672,v:q@mq-2:5672/nova") == [
        "amqp://u:p@mq-1:5672/nova",
        "amqp://v:q@mq-2:5672/nova",
    ]
    assert amqp_urls("amqps://u:p@mq:5671/") == ["amqps://u:p@mq:5671/"]
    with pytest.raises(ValueError, match="not RabbitMQ"):
        amqp_urls("kafka://broker:9092")
