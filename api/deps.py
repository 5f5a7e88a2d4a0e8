"""Request-scoped access to the database and Temporal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from api.remote_stacks import RemoteHeat
from api.temporal import TemporalGateway
from config import Settings
from domain.errors import BackendUnavailable
from healthcheck import healthcheck
from store.db import session_scope

T = TypeVar("T")


class Database:
    """Runs store queries in a worker thread (they are synchronous) and records health."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def run(self, query: Callable[..., T], *args: object, **kwargs: object) -> T:
        """`query(session, *args, **kwargs)` in one transaction, off the event loop."""
        try:
            return await run_in_threadpool(self._run, query, *args, **kwargs)
        except SQLAlchemyError as err:
            raise BackendUnavailable("The database is not available; try again.") from err

    @healthcheck("database", [SQLAlchemyError])
    def _run(self, query: Callable[..., T], *args: object, **kwargs: object) -> T:
        with session_scope(self.engine) as session:
            return query(session, *args, **kwargs)


# The dependencies below are `async def` although they never wait: FastAPI runs a plain
# `def` dependency in its thread pool, a thread hop per dependency per request, queued
# behind the database's queries under load (docs/performance.md).


async def _database(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def _gateway(request: Request) -> TemporalGateway:
    gateway: TemporalGateway = request.app.state.temporal
    return gateway


async def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def _remote_heat(request: Request) -> RemoteHeat:
    remote: RemoteHeat = request.app.state.remote_heat
    return remote


DbDep = Annotated[Database, Depends(_database)]
RemoteHeatDep = Annotated[RemoteHeat, Depends(_remote_heat)]
SettingsDep = Annotated[Settings, Depends(_settings)]
TemporalDep = Annotated[TemporalGateway, Depends(_gateway)]
