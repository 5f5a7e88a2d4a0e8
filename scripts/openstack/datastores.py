# ruff: noqa: S603, S607, S608 -- fixed argv and SQL built from our own constants.
"""PostgreSQL and RabbitMQ from Debian, each with its data under the lab's root."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

from scripts.openstack.layout import (
    DATABASES,
    DB_PASSWORD,
    DB_USER,
    RABBIT_PASSWORD,
    RABBIT_USER,
    Layout,
)
from scripts.openstack.procs import LabError, running_pid, spawn, stop, wait_for

RABBIT_BIN = Path("/usr/lib/rabbitmq/bin")
#: The lab's data is throwaway: no fsync, and room for every service's pool.
PG_OPTIONS = "-c fsync=off -c synchronous_commit=off -c max_connections=300"


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    on_path = shutil.which(name)
    if on_path is None:
        raise LabError(f"{name} not found: apt-get install -y postgresql")
    return on_path


def _as_postgres(argv: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root; Debian's package made this account.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _pg_dirs(layout: Layout) -> tuple[Path, Path]:
    return layout.data / "postgres", layout.run / "pgsock"


def postgres_up(layout: Layout) -> None:
    """initdb on first use, then start on 127.0.0.1 and create the service databases."""
    data, sock = _pg_dirs(layout)
    log = layout.log / "postgres.log"
    for path in (data, sock):
        path.mkdir(parents=True, exist_ok=True)
    layout.log.mkdir(parents=True, exist_ok=True)
    log.touch()
    if os.geteuid() == 0:
        for path in (data, sock, log):
            shutil.chown(path, user="postgres", group="postgres")
        data.chmod(0o700)
    if not (data / "PG_VERSION").exists():
        initdb = [
            _pg_bin("initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
        ]
        subprocess.run(_as_postgres(initdb), check=True, stdout=subprocess.DEVNULL)
    if not postgres_running(layout):
        options = (
            f"-p {layout.port('postgres')} -k {sock} -c listen_addresses=127.0.0.1 {PG_OPTIONS}"
        )
        start = [_pg_bin("pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o", options, "start"]
        subprocess.run(_as_postgres(start), check=True, stdout=subprocess.DEVNULL)
    _create_databases(layout)


def postgres_running(layout: Layout) -> bool:
    data, _ = _pg_dirs(layout)
    if not (data / "postmaster.pid").exists():
        return False
    status = subprocess.run(
        _as_postgres([_pg_bin("pg_ctl"), "-D", str(data), "status"]),
        capture_output=True,
        check=False,
    )
    return status.returncode == 0


def postgres_down(layout: Layout) -> None:
    data, _ = _pg_dirs(layout)
    if postgres_running(layout):
        stop_cmd = [_pg_bin("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
        subprocess.run(_as_postgres(stop_cmd), check=True, stdout=subprocess.DEVNULL)


def psql(layout: Layout, sql: str, database: str = "postgres") -> str:
    _, sock = _pg_dirs(layout)
    argv = ["psql", "-X", "-q", "-t", "-A", "-h", str(sock), "-p", str(layout.port("postgres"))]
    argv += ["-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-c", sql]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def _create_databases(layout: Layout) -> None:
    roles = psql(layout, f"SELECT 1 FROM pg_roles WHERE rolname = '{DB_USER}'")
    if not roles.strip():
        psql(layout, f"CREATE ROLE {DB_USER} LOGIN PASSWORD '{DB_PASSWORD}'")
    existing = set(psql(layout, "SELECT datname FROM pg_database").split())
    for name in DATABASES:
        if name not in existing:
            psql(layout, f"CREATE DATABASE {name} OWNER {DB_USER} ENCODING 'UTF8'")


def _rabbit_env(layout: Layout) -> dict[str, str]:
    home = layout.data / "rabbitmq"
    return {
        # HOME holds the Erlang cookie that rabbitmqctl must share with the node.
        "HOME": str(home),
        "RABBITMQ_NODENAME": "lab@localhost",
        "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
        "RABBITMQ_NODE_PORT": str(layout.port("amqp")),
        "RABBITMQ_DIST_PORT": str(layout.port("rabbit_dist")),
        "ERL_EPMD_PORT": str(layout.port("epmd")),
        "ERL_EPMD_ADDRESS": "127.0.0.1",
        "RABBITMQ_MNESIA_BASE": str(home / "mnesia"),
        "RABBITMQ_LOG_BASE": str(layout.log / "rabbitmq"),
        "RABBITMQ_CONFIG_FILE": str(layout.etc / "rabbitmq" / "rabbitmq.conf"),
        "RABBITMQ_ENABLED_PLUGINS_FILE": str(layout.etc / "rabbitmq" / "enabled_plugins"),
        "RABBITMQ_CONF_ENV_FILE": str(layout.etc / "rabbitmq" / "rabbitmq-env.conf"),
        "RABBITMQ_PID_FILE": str(layout.run / "rabbitmq-node.pid"),
    }


def rabbitmqctl(layout: Layout, *args: str) -> str:
    argv = [str(RABBIT_BIN / "rabbitmqctl"), "-n", "lab@localhost", *args]
    env = {**os.environ, **_rabbit_env(layout)}
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout


def rabbit_up(layout: Layout) -> None:
    """Start the node, then make sure the lab user and the notification cap exist."""
    if not RABBIT_BIN.exists():
        raise LabError("RabbitMQ not found: apt-get install -y rabbitmq-server")
    conf = layout.etc / "rabbitmq"
    conf.mkdir(parents=True, exist_ok=True)
    (layout.data / "rabbitmq").mkdir(parents=True, exist_ok=True)
    (conf / "rabbitmq.conf").write_text("loopback_users = none\nlog.console = false\n")
    (conf / "enabled_plugins").write_text("[].\n")
    (conf / "rabbitmq-env.conf").write_text("")
    if running_pid(layout, "rabbitmq") is None:
        spawn(layout, "rabbitmq", [str(RABBIT_BIN / "rabbitmq-server")], _rabbit_env(layout))
    wait_for("RabbitMQ", lambda: _rabbit_answers(layout), 90, layout.log / "rabbitmq.log")
    users = rabbitmqctl(layout, "list_users", "--quiet")
    if RABBIT_USER not in users.split():
        rabbitmqctl(layout, "add_user", RABBIT_USER, RABBIT_PASSWORD)
        rabbitmqctl(layout, "set_user_tags", RABBIT_USER, "administrator")
        rabbitmqctl(layout, "set_permissions", "-p", "/", RABBIT_USER, ".*", ".*", ".*")
    # Nobody may consume the notifications: cap their queues so they cannot grow forever.
    rabbitmqctl(
        layout,
        "set_policy",
        "--apply-to",
        "queues",
        "notifications-cap",
        r"^(versioned_)?notifications\.",
        '{"max-length": 10000}',
    )


def _rabbit_answers(layout: Layout) -> bool:
    if running_pid(layout, "rabbitmq") is None:
        raise LabError(f"RabbitMQ exited; see {layout.log / 'rabbitmq.log'}")
    try:
        rabbitmqctl(layout, "await_startup", "--timeout", "5")
    except subprocess.CalledProcessError:
        return False
    return True


def rabbit_down(layout: Layout) -> None:
    if running_pid(layout, "rabbitmq") is not None:
        try:
            rabbitmqctl(layout, "stop")
        except subprocess.CalledProcessError:
            stop(layout, "rabbitmq")
    stop(layout, "rabbitmq", timeout=30)
    # Erlang left its port mapper daemon behind, on the lab's own port.
    env = {**os.environ, **_rabbit_env(layout)}
    subprocess.run(["epmd", "-kill"], env=env, capture_output=True, check=False)
