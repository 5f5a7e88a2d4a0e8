"""The store on SQLite and on PostgreSQL: migrations, and projection writes from several
workers at once (`record_changes` called from threads, each with its own connection,
as activities of several worker processes would).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, func, select

import store.tables  # noqa: F401  (registers every table on SQLModel.metadata)
from activities.store import StoreActivities
from domain.actions import ActionChange, ActionName, ActionStatus
from domain.events import Event
from domain.projection import ChangeSet, NodeSnapshot, ResourceSnapshot
from store.actions import ActionRecord
from store.changes import _insert_new_statement, _newer_wins_statement
from store.clusters import NodeRecord
from store.db import make_engine, migrate, session_scope
from store.events import EventRecord
from store.stacks import StackResourceRecord

AT = datetime(2026, 11, 21, tzinfo=UTC)
#: Writers at once: more than the connections a 2-core machine runs in parallel.
WRITERS = 8


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """A migrated database (SQLite or PostgreSQL)."""
    engine = make_engine(database_url)
    migrate(engine)
    yield engine
    engine.dispose()


def all_at_once(writes: list[Callable[[], None]]) -> None:
    """Run the writes in threads released together; re-raise the first failure."""
    barrier = threading.Barrier(len(writes))

    def run(write: Callable[[], None]) -> None:
        barrier.wait(timeout=10)
        write()

    with ThreadPoolExecutor(len(writes)) as pool:
        for future in [pool.submit(run, write) for write in writes]:
            future.result(timeout=60)


def test_migrations_build_the_schema_the_models_declare(engine: Engine) -> None:
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    assert differences == []


def test_migrating_again_changes_nothing(database_url: str) -> None:
    engine = make_engine(database_url)
    migrate(engine)
    migrate(engine)  # a second process starting later
    with engine.connect() as connection:
        assert MigrationContext.configure(connection).get_current_heads()
    engine.dispose()


def scale_in_shard(token: str) -> ChangeSet:
    """What one scale-in shard writes: its token linked to the parent action."""
    return ChangeSet(
        actions=[
            ActionChange(
                action_id="parent",
                project_id="p",
                name=ActionName.CLUSTER_SCALE_IN,
                target="c",
                status=ActionStatus.WAITING,
                depended_by=[token],
                at=AT,
            )
        ]
    )


def test_shards_linking_to_one_new_action_at_once_lose_no_link(engine: Engine) -> None:
    """The first writes race to create the record, the rest to extend its links."""
    store = StoreActivities(engine)
    tokens = [f"t{n}" for n in range(WRITERS)]
    all_at_once([functools.partial(store.record_changes, scale_in_shard(t)) for t in tokens])
    with session_scope(engine) as session:
        record = session.get(ActionRecord, "parent")
        assert record is not None and sorted(record.depended_by) == tokens


def node_snapshot(minute: int) -> NodeSnapshot:
    return NodeSnapshot(
        node_id="n1",
        project_id="p",
        cluster_id="c",
        name="web-1",
        index=1,
        profile_id="small",
        physical_id=f"server-{minute}",
        status="ACTIVE",
        created_at=AT,
        updated_at=AT + timedelta(minutes=minute),
    )


def test_one_event_written_by_racing_retries_is_stored_once(engine: Engine) -> None:
    store = StoreActivities(engine)
    event = Event(event_id="e1", project_id="p", obj_type="node", obj_id="n1", at=AT)
    all_at_once([lambda: store.record_event(event)] * WRITERS)
    with session_scope(engine) as session:
        count = session.exec(select(func.count()).select_from(EventRecord)).one()
        assert count == 1


def resource_snapshot(minute: int, status: str = "COMPLETE") -> ResourceSnapshot:
    return ResourceSnapshot(
        stack_id="s1",
        name="web",
        project_id="p",
        resource_id="r1",
        type="OS::Nova::Server",
        physical_id=f"server-{minute}",
        action="CREATE",
        status=status,
        created_at=AT,
        updated_at=AT + timedelta(minutes=minute),
    )


@pytest.mark.parametrize(
    ("changes_at", "stored"),
    [
        (lambda m: ChangeSet(nodes=[node_snapshot(m)]), lambda s: s.get(NodeRecord, "n1")),
        (
            lambda m: ChangeSet(resources=[resource_snapshot(m)]),
            lambda s: s.get(StackResourceRecord, ("s1", "web")),
        ),
    ],
    ids=["node", "resource"],
)
def test_snapshots_of_one_row_written_at_once_keep_the_newest(
    engine: Engine,
    changes_at: Callable[[int], ChangeSet],
    stored: Callable[[Session], NodeRecord | StackResourceRecord | None],
) -> None:
    """A late retry of an older snapshot never overwrites a newer one."""
    store = StoreActivities(engine)
    minutes = list(range(WRITERS))
    all_at_once([functools.partial(store.record_changes, changes_at(m)) for m in minutes])
    with session_scope(engine) as session:
        record = stored(session)
        assert record is not None and record.physical_id == f"server-{max(minutes)}"


def test_one_change_set_may_hold_a_row_twice_and_the_newest_wins(engine: Engine) -> None:
    """One statement writes every snapshot of a table: repeats in it are settled first
    (newest, and at the same time the later one), then older retries are refused."""
    store = StoreActivities(engine)
    store.record_changes(
        ChangeSet(resources=[resource_snapshot(2), resource_snapshot(1), resource_snapshot(2, "X")])
    )
    store.record_changes(ChangeSet(resources=[resource_snapshot(1, "OLD")]))
    with session_scope(engine) as session:
        record = session.get(StackResourceRecord, ("s1", "web"))
        assert record is not None
        assert (record.physical_id, record.status) == ("server-2", "X")
        assert record.updated_at == AT + timedelta(minutes=2)


def test_events_of_racing_change_sets_are_stored_once_in_order(engine: Engine) -> None:
    store = StoreActivities(engine)
    events = [
        Event(event_id=f"e{i}", project_id="p", obj_type="node", obj_id="n1", at=AT)
        for i in range(5)
    ]
    all_at_once([lambda: store.record_changes(ChangeSet(events=events))] * WRITERS)
    with session_scope(engine) as session:
        stored = session.exec(select(EventRecord).order_by(EventRecord.seq)).all()  # type: ignore[arg-type]
        assert [e.id for e in stored] == [e.event_id for e in events]


def test_writes_reuse_the_statements_built_for_the_first(engine: Engine) -> None:
    """Building an upsert cost more CPU than running it (about half of a one-resource
    write): each statement is built once per dialect, table and column set, and every
    later write, of other rows, runs the same statement object (docs/performance.md)."""
    store = StoreActivities(engine)

    def write(minute: int) -> None:
        event = Event(
            event_id=f"e{minute}", project_id="p", obj_type="resource", obj_id="web", at=AT
        )
        store.record_changes(ChangeSet(resources=[resource_snapshot(minute)], events=[event]))

    write(1)
    built = (_newer_wins_statement.cache_info(), _insert_new_statement.cache_info())
    write(2)
    write(3)
    after = (_newer_wins_statement.cache_info(), _insert_new_statement.cache_info())
    assert [a.misses for a in after] == [b.misses for b in built]
    assert [a.hits - b.hits for a, b in zip(after, built, strict=True)] == [2, 2]
    with session_scope(engine) as session:
        record = session.get(StackResourceRecord, ("s1", "web"))
        assert record is not None and record.physical_id == "server-3"
        assert session.exec(select(func.count()).select_from(EventRecord)).one() == 3


def creating_write(status: ActionStatus, *, links: list[str], minute: int = 0) -> ChangeSet:
    """An action's first write: it carries the inputs (store/actions.py inserts it)."""
    return ChangeSet(
        actions=[
            ActionChange(
                action_id="a1",
                project_id="p",
                name=ActionName.NODE_DELETE,
                target="n1",
                status=status,
                status_reason=f"{status.value} reason",
                inputs={"cluster_id": "c"},
                depends_on=links,
                workflow_id="node-delete:a1",
                at=AT + timedelta(minutes=minute),
            )
        ]
    )


def stored_action(engine: Engine) -> ActionRecord:
    with session_scope(engine) as session:
        record = session.get(ActionRecord, "a1")
        assert record is not None
        session.expunge(record)
        return record


@pytest.mark.parametrize(
    ("status", "started", "ended"),
    [
        (ActionStatus.WAITING_LIFECYCLE_COMPLETION, False, False),
        (ActionStatus.RUNNING, True, False),
        (ActionStatus.SUCCEEDED, False, True),
    ],
)
def test_an_actions_creating_write_stores_the_whole_record(
    engine: Engine, status: ActionStatus, started: bool, ended: bool
) -> None:
    StoreActivities(engine).record_changes(creating_write(status, links=["p1", "p1", "p2"]))
    record = stored_action(engine)
    assert (record.status, record.status_reason, record.inputs, record.outputs) == (
        status.value,
        f"{status.value} reason",
        {"cluster_id": "c"},
        {},
    )
    assert (record.depends_on, record.depended_by, record.workflow_id) == (
        ["p1", "p2"],
        [],
        "node-delete:a1",
    )
    assert record.created_at == record.updated_at == AT
    assert (record.started_at, record.ended_at) == (
        AT if started else None,
        AT if ended else None,
    )


def test_a_late_retry_of_an_actions_creating_write_does_not_move_it_back(
    engine: Engine,
) -> None:
    store = StoreActivities(engine)
    store.record_changes(creating_write(ActionStatus.RUNNING, links=["p1"]))
    finished = creating_write(ActionStatus.SUCCEEDED, links=[], minute=5)
    store.record_changes(
        finished.model_copy(
            update={"actions": [finished.actions[0].model_copy(update={"inputs": None})]}
        )
    )
    store.record_changes(creating_write(ActionStatus.RUNNING, links=["p1"]))
    record = stored_action(engine)
    assert (record.status, record.started_at, record.ended_at) == (
        "SUCCEEDED",
        AT,
        AT + timedelta(minutes=5),
    )


def test_racing_creating_writes_of_one_action_store_one_row_with_every_link(
    engine: Engine,
) -> None:
    store = StoreActivities(engine)
    links = [f"parent{n}" for n in range(WRITERS)]
    all_at_once(
        [
            functools.partial(store.record_changes, creating_write(ActionStatus.RUNNING, links=[p]))
            for p in links
        ]
    )
    with session_scope(engine) as session:
        count = session.exec(select(func.count()).select_from(ActionRecord)).one()
    assert count == 1
    assert sorted(stored_action(engine).depends_on) == links
