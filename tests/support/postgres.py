"""A throwaway PostgreSQL server for the tests, from the distribution's server binaries.

pytest-postgresql's executor runs `pg_ctl initdb`, `start` and `stop` on a data
directory of our own. initdb and postgres refuse to run as root (CI runs the tests as
root), so there every `pg_ctl` goes through `runuser -u postgres`: the account
Debian's `postgresql` package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import stat
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pytest_postgresql.executors import PostgreSQLExecutor
from pytest_postgresql.janitor import DatabaseJanitor

from tests.support.processes import free_port

INSTALL_HINT = (
    "The tests run the store on PostgreSQL too, and need its server binaries (pg_ctl, "
    "initdb, postgres). Install them with `sudo apt-get install postgresql` (Debian, "
    "Ubuntu; .ci/run does this), or point WARDEN_TEST_PG_CTL at a pg_ctl."
)
#: The server's only user; the tests connect over 127.0.0.1 with `trust` auth.
SUPERUSER = "warden"
#: Durability is of no use to a server deleted at the end of the session.
FAST_SETTINGS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def find_pg_ctl() -> str:
    """pg_ctl from WARDEN_TEST_PG_CTL, the PATH or Debian's /usr/lib/postgresql/<v>/bin."""
    configured = os.environ.get("WARDEN_TEST_PG_CTL")
    if configured:
        return configured
    on_path = shutil.which("pg_ctl")
    if on_path:
        return on_path
    debian = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if debian:
        return debian[-1]
    raise RuntimeError(f"pg_ctl not found. {INSTALL_HINT}")


def check_can_run(pg_ctl: str) -> None:
    """Raise with the install hint if this user cannot run a server with `pg_ctl`."""
    if not os.access(pg_ctl, os.X_OK):
        raise RuntimeError(f"{pg_ctl} is not an executable. {INSTALL_HINT}")
    if os.geteuid() == 0 and (shutil.which("runuser") is None or not _account_exists("postgres")):
        raise RuntimeError(
            "Running as root: initdb refuses root, and there is no `postgres` account "
            f"(or no runuser) to run it as. {INSTALL_HINT}"
        )


def _account_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _pg_ctl_for_this_user(pg_ctl: str, workdir: Path) -> str:
    """`pg_ctl` itself, or as root a script running it as the `postgres` account."""
    if os.geteuid() != 0:
        return pg_ctl
    shutil.chown(workdir, user="postgres")
    script = workdir / "pg_ctl-as-postgres"
    # cd /: the account may not be allowed into the directory pytest runs in.
    script.write_text(f'#!/bin/sh\ncd / && exec runuser -u postgres -- "{pg_ctl}" "$@"\n')
    script.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return str(script)


@dataclass
class PostgresServer:
    """A running server; each caller gets databases of its own."""

    executor: PostgreSQLExecutor

    @property
    def port(self) -> int:
        """The TCP port it listens on (127.0.0.1)."""
        port: int = self.executor.port
        return port

    def new_database(self, prefix: str = "warden") -> str:
        """Create an empty database; its SQLAlchemy URL (psycopg 3)."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        DatabaseJanitor(user=SUPERUSER, host="127.0.0.1", port=self.port, dbname=name).init()
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{name}"


@contextmanager
def running_postgres(pg_ctl: str) -> Iterator[PostgresServer]:
    """Start a server in a fresh directory under /tmp; stop and remove it afterwards."""
    # Not under pytest's basetemp: that is private to the user running pytest.
    workdir = Path(tempfile.mkdtemp(prefix="warden-pg-"))
    try:
        executor = PostgreSQLExecutor(
            executable=_pg_ctl_for_this_user(pg_ctl, workdir),
            host="127.0.0.1",
            port=free_port(),
            datadir=str(workdir / "data"),
            unixsocketdir=str(workdir),
            logfile=str(workdir / "postgresql.log"),
            startparams="-w",
            dbname="warden",
            user=SUPERUSER,
            postgres_options=FAST_SETTINGS,
        )
        executor.start()
        try:
            yield PostgresServer(executor)
        finally:
            executor.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
