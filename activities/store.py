"""Store activities: the only way workflows write the database."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from temporalio import activity

from domain.projection import ChangeSet
from healthcheck import healthcheck
from store.changes import apply_changes
from store.db import session_scope


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
