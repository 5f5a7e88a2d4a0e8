"""A Warden of its own for fault tests: a Temporal dev server on a SQLite file (so it
can be killed and restarted with its state), simcloud, worker and API, each a `Proc`.

The session fixture's dev server keeps its state in memory and is shared by every
test, so nothing that kills it may run there.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

import yaml
from temporalio.client import Client

from cli.dev import search_attribute_args, store_args
from config import Settings
from config.temporal_client import connect_temporal
from tests.support.processes import PYTHON, Proc, free_port
from tests.support.temporal import binary


def own_env(var: Path, tokens: Mapping[str, object]) -> dict[str, str]:
    """The `WARDEN_*` environment of every process, on fresh ports under `var`."""
    tokens_file = var / "tokens.yaml"
    tokens_file.write_text(yaml.safe_dump({"tokens": dict(tokens)}))
    return {
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "WARDEN_VAR_DIR": str(var),
        "WARDEN_TASK_QUEUE": f"warden-faults-{uuid.uuid4()}",
        # The fault tests kill workers: their workflows move on in 2 s, not Temporal's 10 s.
        "WARDEN_WORKER_STICKY_TIMEOUT_S": "2",
        "WARDEN_TOKENS_FILE": str(tokens_file),
        "WARDEN_API_PORT": str(free_port()),
        "WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{free_port()}",
        "WARDEN_SIMCLOUD_PORT": str(free_port()),
        "WARDEN_SIMCLOUD_HOST": "127.0.0.1",
        "WARDEN_HEALTH_CHECK_INTERVAL_MIN": "1",
    }


def own_procs(
    env: dict[str, str], var: Path, *, notify_token: str, simcloud_args: list[str]
) -> dict[str, Proc]:
    """temporal, simcloud, worker and api, in start order (none started yet)."""
    port = env["TEMPORAL_ADDRESS"].rsplit(":", 1)[1]
    api = f"http://127.0.0.1:{env['WARDEN_API_PORT']}"
    temporal = [
        binary("temporal"),
        "server",
        "start-dev",
        "--db-filename",
        str(var / "temporal.db"),
        "--ip",
        "127.0.0.1",
        "--port",
        port,
        "--headless",
        "--namespace",
        "default",
        "--log-level",
        "warn",
        *search_attribute_args(),
        *store_args(),  # as `make run`: a SIGKILLed server must lose nothing in WAL mode
    ]
    simcloud = [PYTHON, "-m", "simcloud", "--port", env["WARDEN_SIMCLOUD_PORT"]]
    simcloud += ["--notify-url", f"{api}/v1/notifications", "--log-level", "warning"]
    uvicorn = [PYTHON, "-m", "uvicorn", "api.app:create_app", "--factory"]
    uvicorn += ["--port", env["WARDEN_API_PORT"], "--log-level", "warning"]
    uvicorn += ["--timeout-keep-alive", "75"]  # as `warden dev`
    return {
        "temporal": Proc("temporal", temporal, {}, var / "temporal.log"),
        "simcloud": Proc(
            "simcloud",
            [*simcloud, *simcloud_args],
            {**env, "WARDEN_SIMCLOUD_NOTIFY_TOKEN": notify_token},
            var / "simcloud.log",
        ),
        "worker": Proc("worker", [PYTHON, "-m", "worker"], env, var / "worker.log"),
        "api": Proc("api", uvicorn, env, var / "api.log"),
    }


async def wait_temporal(address: str, proc: Proc, timeout: float = 60) -> Client:
    """A client once the dev server answers health checks (fails if it exits)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.process is not None and proc.process.poll() is not None:
            raise RuntimeError(f"{proc.name} exited:\n{proc.tail()}")
        try:
            client = await connect_temporal(Settings(temporal_address=address))
            await client.service_client.check_health()
        except RuntimeError as err:
            last = err
            await asyncio.sleep(0.1)
            continue
        return client
    raise RuntimeError(f"{proc.name} not ready at {address} ({last}):\n{proc.tail()}")
