"""`neutron-db-manage` that runs on PostgreSQL too.

Neutron's 2025.2 migration d553edeb540f makes tags case sensitive with MySQL-only
DDL (`CONVERT TO CHARACTER SET utf8mb4`). PostgreSQL compares text case-sensitively
already, so on any other database those statements are skipped, nothing else.
"""

from __future__ import annotations

from typing import Any

from alembic.operations import Operations

_execute = Operations.execute


def _execute_portably(self: Operations, sqltext: Any, *args: Any, **kwargs: Any) -> Any:
    mysql_only = isinstance(sqltext, str) and "utf8mb4" in sqltext
    if mysql_only and self.get_bind().dialect.name != "mysql":
        return None
    return _execute(self, sqltext, *args, **kwargs)


def main() -> Any:
    Operations.execute = _execute_portably  # type: ignore[method-assign]
    from neutron.db.migration import cli

    return cli.main()
