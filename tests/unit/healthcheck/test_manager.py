"""Status rules, TTL, Cache-Control and body shape of the health manager.

The contract: docs/api-contract.md §Process health.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from healthcheck import HealthManager, HealthStatus, configure, get_manager

START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def make_manager(
    clock: FakeClock | None = None,
    *,
    ttl: int = 300,
    cache_control: int | None = None,
    failure_threshold: int = 2,
) -> HealthManager:
    return HealthManager(
        "svc-1",
        "warden-worker",
        ttl=ttl,
        cache_control=cache_control,
        failure_threshold=failure_threshold,
        clock=clock or FakeClock(),
        host="node-1",
    )


def body_of(manager: HealthManager) -> dict[str, object]:
    data = json.loads(manager.response().body)
    assert isinstance(data, dict)
    return data


def check_entry(manager: HealthManager, key: str) -> dict[str, object]:
    checks = body_of(manager)["checks"]
    assert isinstance(checks, dict)
    [entry] = checks[key]
    assert isinstance(entry, dict)
    return entry


def test_no_checks_yet_is_pass_with_200() -> None:
    manager = make_manager()
    assert manager.summary() is HealthStatus.PASS
    assert manager.response().status_code == 200
    assert body_of(manager)["checks"] == {}


def test_all_passing_checks_are_pass() -> None:
    manager = make_manager()
    manager.record_pass("database")
    manager.record_pass("temporal:connection")
    assert manager.summary() is HealthStatus.PASS


def test_first_failure_is_transient_warn_with_200() -> None:
    manager = make_manager()
    manager.record_pass("message_bus")
    item = manager.record_failure("message_bus", "connection lost")
    assert item.status is HealthStatus.WARN
    assert manager.summary() is HealthStatus.WARN
    assert manager.response().status_code == 200


def test_second_consecutive_failure_is_persistent_fail_with_503() -> None:
    manager = make_manager()
    manager.record_failure("message_bus", "connection lost")
    item = manager.record_failure("message_bus", "reconnect refused")
    assert item.status is HealthStatus.FAIL
    assert manager.summary() is HealthStatus.FAIL
    assert manager.response().status_code == 503
    entry = check_entry(manager, "message_bus:connection")
    assert entry["output"] == "reconnect refused"


def test_failures_beyond_threshold_stay_fail() -> None:
    manager = make_manager(failure_threshold=3)
    statuses = [manager.record_failure("db", "down").status for _ in range(5)]
    assert statuses == ["warn", "warn", "fail", "fail", "fail"]


def test_failure_threshold_one_fails_at_once() -> None:
    manager = make_manager(failure_threshold=1)
    assert manager.record_failure("db", "down").status is HealthStatus.FAIL


def test_pass_resets_the_failure_count() -> None:
    manager = make_manager()
    manager.record_failure("db", "down")
    manager.record_pass("db")
    assert manager.record_failure("db", "down again").status is HealthStatus.WARN


def test_failure_counts_are_per_check() -> None:
    manager = make_manager()
    manager.record_failure("db", "down")
    assert manager.record_failure("cloud:api", "timeout").status is HealthStatus.WARN


def test_any_fail_among_passes_is_fail() -> None:
    manager = make_manager(failure_threshold=1)
    manager.record_pass("temporal")
    manager.record_failure("db", "down")
    assert manager.summary() is HealthStatus.FAIL


def test_explicit_record_sets_status_and_requires_output_for_warn() -> None:
    manager = make_manager()
    manager.record("cloud:api", HealthStatus.FAIL, output="401 from identity")
    assert manager.summary() is HealthStatus.FAIL
    with pytest.raises(ValueError, match="needs an output"):
        manager.record("cloud:api", HealthStatus.WARN)
    manager.record("cloud:api", HealthStatus.PASS)
    assert manager.summary() is HealthStatus.PASS


def test_expired_result_is_reported_as_warn_with_output() -> None:
    clock = FakeClock()
    manager = make_manager(clock, ttl=60)
    manager.record_pass("db")
    clock.advance(30)
    manager.record_pass("temporal")
    clock.advance(31)  # db is 61 s old, temporal 31 s
    assert manager.summary() is HealthStatus.WARN
    assert manager.response().status_code == 200
    entry = check_entry(manager, "db:connection")
    assert entry["status"] == "warn"
    assert "expired" in str(entry["output"])
    assert check_entry(manager, "temporal:connection")["status"] == "pass"


def test_result_exactly_ttl_old_is_still_valid() -> None:
    clock = FakeClock()
    manager = make_manager(clock, ttl=60)
    manager.record_pass("db")
    clock.advance(60)
    assert manager.summary() is HealthStatus.PASS


def test_all_results_expired_is_fail() -> None:
    clock = FakeClock()
    manager = make_manager(clock, ttl=60)
    manager.record_pass("db")
    manager.record_pass("temporal")
    clock.advance(61)
    assert manager.summary() is HealthStatus.FAIL
    assert manager.response().status_code == 503


def test_expired_failure_counts_as_warn_while_another_check_is_fresh() -> None:
    clock = FakeClock()
    manager = make_manager(clock, ttl=60, failure_threshold=1)
    manager.record_failure("db", "down")
    clock.advance(61)
    manager.record_pass("temporal")
    assert manager.summary() is HealthStatus.WARN


def test_fresh_record_after_expiry_restores_pass() -> None:
    clock = FakeClock()
    manager = make_manager(clock, ttl=60)
    manager.record_pass("db")
    clock.advance(120)
    manager.record_pass("db")
    assert manager.summary() is HealthStatus.PASS


def test_ttl_zero_keeps_results_forever() -> None:
    clock = FakeClock()
    manager = make_manager(clock, ttl=0)
    manager.record_pass("db")
    clock.advance(10 * 365 * 24 * 3600)
    assert manager.summary() is HealthStatus.PASS


@pytest.mark.parametrize(
    ("ttl", "cache_control", "expected"),
    [
        (300, None, "max-age=300"),
        (300, 30, "max-age=30"),
        (300, -1, "no-cache"),
        (300, 0, None),
        (0, None, None),
    ],
)
def test_cache_control_header(ttl: int, cache_control: int | None, expected: str | None) -> None:
    manager = make_manager(ttl=ttl, cache_control=cache_control)
    assert manager.response().headers.get("Cache-Control") == expected


def test_response_content_type_is_health_json_even_on_fail() -> None:
    manager = make_manager(failure_threshold=1)
    assert manager.response().headers["Content-Type"] == "application/health+json"
    manager.record_failure("db", "down")
    assert manager.response().headers["Content-Type"] == "application/health+json"


def test_body_has_ietf_draft_shape() -> None:
    manager = make_manager()
    manager.record_pass("database", component_type="datastore", observed_value=12)
    manager.record_failure("cloud:api", "ConnectTimeout: timed out")
    assert body_of(manager) == {
        "status": "warn",
        "version": "1.0",
        "serviceId": "svc-1",
        "description": "warden-worker",
        "notes": ["node-1"],
        "checks": {
            "cloud:api": [
                {
                    "status": "warn",
                    "time": "2026-01-02T03:04:05+00:00",
                    "output": "ConnectTimeout: timed out",
                    "componentType": "component",
                }
            ],
            "database:connection": [
                {
                    "status": "pass",
                    "time": "2026-01-02T03:04:05+00:00",
                    "componentType": "datastore",
                    "observedValue": 12,
                }
            ],
        },
    }


def test_pass_item_never_carries_output() -> None:
    manager = make_manager()
    manager.record("db", HealthStatus.PASS, output="all good")
    assert "output" not in check_entry(manager, "db:connection")


def test_component_type_is_kept_when_a_later_recorder_omits_it() -> None:
    manager = make_manager()
    manager.record_pass("database", component_type="datastore")
    manager.record_failure("database", "OperationalError: gone")
    assert check_entry(manager, "database:connection")["componentType"] == "datastore"


def test_body_leaks_no_platform_or_version_strings() -> None:
    manager = HealthManager("svc", "warden-api", host="node-1")
    manager.record_failure("db", "down")
    text = manager.response().body.decode().lower()
    for leak in ("python", "linux", "glibc", "gcc", "platform", "3.11", "temporalio"):
        assert leak not in text
    assert set(body_of(manager)) == {
        "status",
        "version",
        "serviceId",
        "description",
        "notes",
        "checks",
    }


def test_long_output_is_truncated() -> None:
    manager = make_manager()
    item = manager.record_failure("db", "x" * 10_000)
    assert item.output is not None
    assert len(item.output) == 1024


@pytest.mark.parametrize("name", ["", ":x", "db:", "a:b:c"])
def test_invalid_check_names_are_rejected(name: str) -> None:
    with pytest.raises(ValueError, match="invalid check name"):
        make_manager().record_pass(name)


@pytest.mark.parametrize(
    ("ttl", "cache_control", "failure_threshold"),
    [(-1, None, 2), (300, -2, 2), (300, None, 0)],
)
def test_invalid_settings_are_rejected(
    ttl: int, cache_control: int | None, failure_threshold: int
) -> None:
    with pytest.raises(ValueError, match=">="):
        make_manager(ttl=ttl, cache_control=cache_control, failure_threshold=failure_threshold)


def test_naive_clock_is_rejected() -> None:
    manager = HealthManager("s", "d", clock=lambda: datetime(2026, 1, 1), host="h")  # noqa: DTZ001
    with pytest.raises(ValueError, match="timezone-aware"):
        manager.record_pass("db")


def test_concurrent_failures_from_threads_are_all_counted() -> None:
    manager = make_manager(failure_threshold=400)
    threads = [
        threading.Thread(target=lambda: [manager.record_failure("db", "x") for _ in range(100)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 400 recordings reach the threshold exactly once the count is not lost to races.
    assert manager.summary() is HealthStatus.FAIL


def test_clear_forgets_results() -> None:
    manager = make_manager(failure_threshold=1)
    manager.record_failure("db", "down")
    manager.clear()
    assert manager.summary() is HealthStatus.PASS


def test_configure_replaces_the_default_manager() -> None:
    before = get_manager()
    assert get_manager() is before
    try:
        configured = configure("svc-9", "warden-api", ttl=10, host="h")
        assert get_manager() is configured
        assert configured.cache_control == 10
    finally:
        configure(before.service_id, before.description, host=before.host)
