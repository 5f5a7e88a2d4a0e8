"""The worker's capacity comes from settings (docs/operating.md §Worker tuning)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from config.settings import Settings
from worker.main import worker_tuning


def test_the_defaults_are_temporals_and_the_documented_ones() -> None:
    tuning = worker_tuning(Settings())
    assert tuning["max_cached_workflows"] == 1000
    assert tuning["max_concurrent_activities"] == 100
    assert tuning["max_concurrent_workflow_tasks"] == 100
    assert tuning["sticky_queue_schedule_to_start_timeout"] == timedelta(seconds=10)


def test_the_environment_sets_the_worker_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDEN_WORKER_MAX_CACHED_WORKFLOWS", "4000")
    monkeypatch.setenv("WARDEN_WORKER_MAX_CONCURRENT_ACTIVITIES", "250")
    monkeypatch.setenv("WARDEN_WORKER_MAX_CONCURRENT_WORKFLOW_TASKS", "20")
    monkeypatch.setenv("WARDEN_WORKER_ACTIVITY_THREADS", "4")
    settings = Settings()
    tuning = worker_tuning(settings)
    assert (
        tuning["max_cached_workflows"],
        tuning["max_concurrent_activities"],
        tuning["max_concurrent_workflow_tasks"],
        settings.worker_activity_threads,
    ) == (4000, 250, 20, 4)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("worker_max_concurrent_activities", 0),
        ("worker_max_concurrent_workflow_tasks", 0),
        ("worker_activity_threads", 0),
        ("worker_max_cached_workflows", -1),
    ],
)
def test_a_worker_without_capacity_is_refused_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, value: int
) -> None:
    monkeypatch.setenv(f"WARDEN_{name.upper()}", str(value))
    with pytest.raises(ValidationError, match=name):
        Settings()


def test_a_database_warden_cannot_write_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WARDEN_DATABASE_URL", "mysql://warden@db/warden")
    with pytest.raises(ValidationError, match="database_url"):
        Settings()
    for url in ("sqlite:///var/w.db", "postgresql://w@db/w", "postgresql+psycopg://w@db/w"):
        monkeypatch.setenv("WARDEN_DATABASE_URL", url)
        assert Settings().resolved_database_url == url
