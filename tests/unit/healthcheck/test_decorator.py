"""`@healthcheck` on sync and async functions (docs/api-contract.md §Process health)."""

from __future__ import annotations

import asyncio

import pytest

from healthcheck import HealthManager, HealthStatus, configure, get_manager, healthcheck


class DatabaseError(Exception):
    """Stands in for SQLAlchemyError."""


@pytest.fixture
def manager() -> HealthManager:
    return HealthManager("svc", "test", host="h", failure_threshold=2)


def status_of(manager: HealthManager, key: str) -> HealthStatus | None:
    items = {item.key: item for item in manager.report().checks}
    return items[key].status if key in items else None


def test_sync_return_records_pass_and_keeps_result(manager: HealthManager) -> None:
    @healthcheck("database", [DatabaseError], manager=manager)
    def load(row_id: int, *, table: str = "t") -> str:
        return f"{table}:{row_id}"

    assert load(3, table="nodes") == "nodes:3"
    assert status_of(manager, "database:connection") is HealthStatus.PASS


def test_sync_listed_exception_is_recorded_then_reraised(manager: HealthManager) -> None:
    @healthcheck("database", [DatabaseError], manager=manager)
    def load() -> None:
        raise DatabaseError("could not connect to server\n[SQL: SELECT secret]")

    with pytest.raises(DatabaseError):
        load()
    assert status_of(manager, "database:connection") is HealthStatus.WARN
    with pytest.raises(DatabaseError):
        load()
    [item] = manager.report().checks
    assert item.status is HealthStatus.FAIL
    # Only the first line: later lines of driver errors carry SQL and parameters.
    assert item.output == "DatabaseError: could not connect to server"


def test_sync_unlisted_exception_propagates_unrecorded(manager: HealthManager) -> None:
    @healthcheck("database", [DatabaseError], manager=manager)
    def load() -> None:
        raise KeyError("not a health problem")

    with pytest.raises(KeyError):
        load()
    assert manager.report().checks == ()


def test_default_exception_list_catches_any_exception(manager: HealthManager) -> None:
    @healthcheck("cloud:api", manager=manager)
    def call() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        call()
    assert status_of(manager, "cloud:api") is HealthStatus.WARN


def test_cancellation_is_not_a_health_failure(manager: HealthManager) -> None:
    @healthcheck("cloud:api", manager=manager)
    def call() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        call()
    assert manager.report().checks == ()


async def test_async_return_records_pass(manager: HealthManager) -> None:
    @healthcheck("temporal", [ConnectionError], manager=manager, component_type="component")
    async def ping(value: int) -> int:
        await asyncio.sleep(0)
        return value + 1

    assert asyncio.iscoroutinefunction(ping)
    assert await ping(1) == 2
    assert status_of(manager, "temporal:connection") is HealthStatus.PASS


async def test_async_listed_exception_is_recorded_then_reraised(manager: HealthManager) -> None:
    @healthcheck("temporal", [ConnectionError], manager=manager)
    async def ping() -> None:
        raise ConnectionRefusedError("refused")

    for _ in range(2):
        with pytest.raises(ConnectionRefusedError):
            await ping()
    [item] = manager.report().checks
    assert item.status is HealthStatus.FAIL
    assert item.output == "ConnectionRefusedError: refused"


async def test_async_unlisted_exception_propagates_unrecorded(manager: HealthManager) -> None:
    @healthcheck("temporal", [ConnectionError], manager=manager)
    async def ping() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        await ping()
    assert manager.report().checks == ()


async def test_async_pass_after_failure_resets_to_pass(manager: HealthManager) -> None:
    fail = True

    @healthcheck("temporal", [ConnectionError], manager=manager)
    async def ping() -> None:
        if fail:
            raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        await ping()
    fail = False
    await ping()
    assert manager.summary() is HealthStatus.PASS


def test_methods_keep_working_and_metadata_is_preserved(manager: HealthManager) -> None:
    class Store:
        @healthcheck("database", [DatabaseError], manager=manager)
        def count(self, table: str) -> int:
            """Count rows."""
            return len(table)

    assert Store().count("abc") == 3
    assert Store.count.__name__ == "count"
    assert Store.count.__doc__ == "Count rows."


def test_without_manager_records_on_the_current_default() -> None:
    before = get_manager()

    @healthcheck("database")
    def load() -> None:
        raise OSError("disk")

    try:
        # Configured after decoration: the decorator must follow the new default.
        configured = configure("svc", "test", host="h", failure_threshold=1)
        with pytest.raises(OSError, match="disk"):
            load()
        assert configured.summary() is HealthStatus.FAIL
    finally:
        configure(before.service_id, before.description, host=before.host)


def test_invalid_name_fails_at_decoration_time() -> None:
    with pytest.raises(ValueError, match="invalid check name"):
        healthcheck("a:b:c")
