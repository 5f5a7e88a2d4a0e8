"""Warden as an operator scales it out: several workers and several API replicas, each a
process of its own, on one Temporal and one database (PostgreSQL), with simcloud.

The API replicas share `WARDEN_PUBLIC_URL` (that of the first, standing for the load
balancer in front of them), so both answer with the same links.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import PYTHON, Proc, free_port, wait_http

#: simcloud's build time for the replicas: long enough to act while one builds.
BUILD_LATENCY_MS = 1500


@dataclass
class Replicas:
    """Handles on running replicas: `worker-<n>` and `api-<n>` in `procs`, n from 1."""

    env: dict[str, str]
    simcloud_url: str
    api_urls: list[str]
    worker_health_urls: list[str]
    procs: dict[str, Proc]

    @property
    def workers(self) -> list[Proc]:
        """The worker processes, in replica order."""
        return [self.procs[f"worker-{n + 1}"] for n in range(len(self.worker_health_urls))]

    def delete_requests(self) -> Counter[str]:
        """How many `DELETE /servers/<id>` simcloud answered, per server id (access log)."""
        counts: Counter[str] = Counter()
        for line in self.procs["simcloud"].log.read_text(errors="replace").splitlines():
            if '"DELETE /compute/v2.1/servers/' in line:
                counts[line.split('"DELETE /compute/v2.1/servers/', 1)[1].split(" ", 1)[0]] += 1
        return counts


def replica_env(session_env: dict[str, str], var: Path, database_url: str) -> dict[str, str]:
    """The session's settings (Temporal, tokens, codec…) on a task queue, simcloud and
    database of the replicas' own."""
    sim_port, api_port = free_port(), free_port()
    return {
        **session_env,
        "WARDEN_VAR_DIR": str(var),
        "WARDEN_TASK_QUEUE": f"warden-replicas-{uuid.uuid4()}",
        # A killed worker's workflows move to the survivor in 2 s, not Temporal's 10 s.
        "WARDEN_WORKER_STICKY_TIMEOUT_S": "2",
        "WARDEN_DATABASE_URL": database_url,
        "WARDEN_SIMCLOUD_PORT": str(sim_port),
        "WARDEN_KEYSTONE_URL": f"http://127.0.0.1:{sim_port}/identity/v3",
        "WARDEN_API_PORT": str(api_port),
        "WARDEN_PUBLIC_URL": f"http://127.0.0.1:{api_port}",
    }


def _api(env: dict[str, str], var: Path, n: int, port: int) -> Proc:
    argv = [PYTHON, "-m", "uvicorn", "api.app:create_app", "--factory", "--port", str(port)]
    argv += ["--timeout-keep-alive", "75"]  # as `warden dev`
    return Proc(f"api-{n}", argv, {**env, "WARDEN_API_PORT": str(port)}, var / f"api-{n}.log")


def _worker(env: dict[str, str], var: Path, n: int, port: int) -> Proc:
    health = {"WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{port}"}
    return Proc(f"worker-{n}", [PYTHON, "-m", "worker"], {**env, **health}, var / f"worker-{n}.log")


@contextmanager
def running_replicas(env: dict[str, str], var: Path, count: int = 2) -> Iterator[Replicas]:
    """simcloud, then `count` workers and `count` APIs, all started at once (they
    migrate the new database together); stopped at the end."""
    api_url = env["WARDEN_PUBLIC_URL"]
    sim_url = f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}"
    simcloud = [PYTHON, "-m", "simcloud", "--port", env["WARDEN_SIMCLOUD_PORT"]]
    simcloud += ["--notify-url", f"{api_url}/v1/notifications", "--warden-url", api_url]
    # Servers take a while to build, so a recovery can be caught waiting for one.
    simcloud += ["--build-latency-ms", str(BUILD_LATENCY_MS)]
    procs = {
        "simcloud": Proc(
            "simcloud",
            simcloud,
            # Unbuffered: `delete_requests` reads its access log while it runs.
            {**env, "WARDEN_SIMCLOUD_NOTIFY_TOKEN": "it-admin", "PYTHONUNBUFFERED": "1"},
            var / "simcloud.log",
        )
    }
    api_ports = [int(env["WARDEN_API_PORT"])] + [free_port() for _ in range(count - 1)]
    health_ports = [free_port() for _ in range(count)]
    for n in range(count):
        procs[f"worker-{n + 1}"] = _worker(env, var, n + 1, health_ports[n])
        procs[f"api-{n + 1}"] = _api(env, var, n + 1, api_ports[n])
    replicas = Replicas(
        env=env,
        simcloud_url=sim_url,
        api_urls=[f"http://127.0.0.1:{port}" for port in api_ports],
        worker_health_urls=[f"http://127.0.0.1:{port}/health" for port in health_ports],
        procs=procs,
    )
    try:
        for proc in procs.values():
            proc.start()
        wait_http(f"{sim_url}/sim/state", procs["simcloud"])
        for worker, url in zip(replicas.workers, replicas.worker_health_urls, strict=True):
            wait_http(url, worker)
        for n, url in enumerate(replicas.api_urls):
            wait_http(f"{url}/health", procs[f"api-{n + 1}"])
        yield replicas
    finally:
        for proc in reversed(list(procs.values())):
            proc.stop()
