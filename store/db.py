"""Engine, sessions and migrations (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: Arbitrary constant naming Warden's migration lock in PostgreSQL.
_PG_MIGRATION_LOCK = 0x57A4DE


#: The dialects' INSERTs, which know ON CONFLICT (settings admit no other database).
_INSERTS: dict[str, Any] = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}


def insert_for(dialect: str) -> Any:
    """The INSERT construct (with `on_conflict_do_*`) of the dialect named `dialect`."""
    return _INSERTS[dialect]


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and foreign keys."""
    if url.startswith("sqlite"):
        database = sa.engine.make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    _use_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _use_wal(cursor: Any) -> None:
    # Two processes opening a new file at once both try to switch it to WAL, and
    # SQLite fails the loser at once instead of waiting its busy_timeout: retry.
    for _ in range(50):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            time.sleep(0.1)
        else:
            return
    cursor.execute("PRAGMA journal_mode=WAL")


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision.

    Safe when several processes start at once: PostgreSQL takes an advisory lock,
    SQLite the database's write lock before Alembic reads the schema version.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(
                sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK}
            )
        elif connection.dialect.name == "sqlite":
            # pysqlite opens no transaction before DDL, so two processes would both
            # find no schema and both create it; the loser waits here (busy_timeout).
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    logger.info("database schema is at the newest revision")


def lock_for_write(session: Session, keys: Iterable[str]) -> None:
    """Hold off other writers of the same rows until this transaction ends.

    Projection writes read a row, then write it (an upsert, links that only grow, the
    newer snapshot wins): two workers doing so at once would fail on the insert or
    lose a write. PostgreSQL takes one advisory lock per key, in sorted order so that
    writers never deadlock; SQLite takes its write lock before the first read (pysqlite
    alone would take it only at the first write).

    Args:
        session: the session about to write; call this before it reads those rows.
        keys: names of the rows, e.g. `nodes:<id>`.
    """
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        for key in sorted(set(keys)):
            connection.execute(
                sa.text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key}
            )
    elif connection.dialect.name == "sqlite" and not _in_transaction(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _in_transaction(connection: sa.Connection) -> bool:
    """Whether pysqlite has begun a transaction (it does so at the first write)."""
    driver_connection: sqlite3.Connection = connection.connection.driver_connection  # type: ignore[assignment]
    return driver_connection.in_transaction


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session that commits on success and rolls back on error."""
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
