"""Workers polling the task queue, as Heat's and Senlin's service lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.engine_services import UP_WITHIN, Poller, engine_services

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def test_one_service_per_worker_up_or_down_by_its_last_poll() -> None:
    pollers = [
        Poller(identity="41@node-a", last_access=NOW - timedelta(seconds=3), kind="workflow"),
        Poller(identity="41@node-a", last_access=NOW - timedelta(seconds=70), kind="activity"),
        Poller(
            identity="7@node-b", last_access=NOW - UP_WITHIN - timedelta(seconds=1), kind="workflow"
        ),
    ]
    a, b = engine_services(pollers, NOW)
    assert (a.identity, a.up, a.polls, a.last_seen) == (
        "41@node-a",
        True,
        ("activity", "workflow"),
        NOW - timedelta(seconds=3),
    )
    assert (b.identity, b.up, b.host) == ("7@node-b", False, "node-b")
    assert a.service_id == engine_services(pollers[:1], NOW)[0].service_id != b.service_id


def test_heat_and_senlin_fields() -> None:
    [worker] = engine_services(
        [Poller(identity="41@node-a", last_access=NOW, kind="workflow")], NOW
    )
    heat = worker.as_heat("warden")
    assert (heat["binary"], heat["host"], heat["hostname"], heat["status"]) == (
        "warden-worker",
        "41@node-a",
        "node-a",
        "up",
    )
    assert heat["engine_id"] == heat["id"] and heat["updated_at"] == NOW.isoformat()
    senlin = worker.as_senlin("warden")
    assert (senlin["host"], senlin["state"], senlin["status"]) == ("node-a", "up", "enabled")


def test_an_identity_without_a_host_is_its_own_host() -> None:
    [worker] = engine_services([Poller(identity="custom", last_access=NOW, kind="activity")], NOW)
    assert worker.host == "custom"
