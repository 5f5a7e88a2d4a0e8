"""Column types shared by the tables: aware UTC datetimes and JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Stores aware datetimes as UTC and gives them back aware (SQLite drops tz)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_column(*, nullable: bool = False, index: bool = False) -> Any:
    """A UTC datetime column for SQLModel's `sa_column`."""
    return sa.Column(UTCDateTime(), nullable=nullable, index=index)


def json_column(*, nullable: bool = False) -> Any:
    """A JSON column for SQLModel's `sa_column`."""
    return sa.Column(sa.JSON(), nullable=nullable)


def now_utc() -> datetime:
    """The current time, aware (for records written outside workflows)."""
    return datetime.now(UTC)
