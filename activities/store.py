"""Store activities: the only way workflows write the database."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from temporalio import activity

from domain.events import Event
from domain.projection import ChangeSet
from healthcheck import healthcheck
from store.changes import apply_changes
from store.db import session_scope
from store.policies import get_policy_secret


class StoreActivities:
    """Idempotent projection writes; holds the process's engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @activity.defn(name="record_changes")
    @healthcheck("database", [SQLAlchemyError])
    def record_changes(self, changes: ChangeSet) -> None:
        """Apply a change set in one transaction (safe to retry)."""
        if changes.is_empty():
            return
        with session_scope(self._engine) as session:
            apply_changes(session, changes)

    # Plain methods (not activities) that other activity classes are given, so
    # the database stays behind this class.

    def policy_secret(self, policy_id: str) -> str | None:
        """A deletion policy's webhook secret (read by the hook activity, never logged)."""
        with session_scope(self._engine) as session:
            return get_policy_secret(session, policy_id)

    @healthcheck("database", [SQLAlchemyError])
    def record_event(self, event: Event) -> None:
        """Write one event (idempotent on its id): the change sets' own insert that skips
        known ids, one statement with no read first (0.17-0.26 ms against 0.59-0.71 ms
        for a read, then an ORM insert; docs/performance.md)."""
        with session_scope(self._engine) as session:
            apply_changes(session, ChangeSet(events=[event]))
