"""A small process supervisor: start in order, restart what dies, stop everything."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

#: A process that stayed up this long gets its restart back-off reset.
HEALTHY_AFTER_S = 60.0
MAX_BACKOFF_S = 30.0
STOP_GRACE_S = 10.0


@dataclass
class ProcessSpec:
    """One supervised process."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    log_file: Path | None = None
    ready: Callable[[], Awaitable[bool]] | None = None
    ready_timeout_s: float = 60.0


@dataclass
class _Running:
    spec: ProcessSpec
    process: asyncio.subprocess.Process
    started: float
    backoff: float = 1.0
    restarts: int = 0
    pump: asyncio.Task[None] | None = None


class Supervisor:
    """Starts processes in their own process groups and keeps them running."""

    def __init__(
        self, specs: list[ProcessSpec], echo: Callable[[str], None], pid_file: Path | None = None
    ) -> None:
        self._specs = specs
        self._echo = echo
        self._pid_file = pid_file
        self._running: dict[str, _Running] = {}
        self._stopping = False

    async def start_all(self) -> None:
        """Start each process in order, waiting for it to be ready before the next."""
        for spec in self._specs:
            self._running[spec.name] = await self._spawn(spec)
            if spec.ready is not None:
                await self._wait_ready(spec)

    async def _spawn(self, spec: ProcessSpec, previous: _Running | None = None) -> _Running:
        out = open(spec.log_file, "ab") if spec.log_file else None  # noqa: SIM115, ASYNC230 - tiny, child owns it
        process = await asyncio.create_subprocess_exec(
            *spec.argv,
            env={**os.environ, **spec.env},
            start_new_session=True,
            stdout=out or asyncio.subprocess.PIPE,
            stderr=out or asyncio.subprocess.STDOUT,
        )
        if out:
            out.close()
        running = _Running(spec, process, time.monotonic())
        if previous is not None:
            running.backoff, running.restarts = previous.backoff, previous.restarts + 1
        if process.stdout is not None:
            running.pump = asyncio.create_task(self._pump(spec.name, process.stdout))
        logger.info("started %s (pid %s)", spec.name, process.pid)
        self._running[spec.name] = running
        self._write_pids()
        return running

    async def _pump(self, name: str, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self._echo(f"[{name}] {line.decode(errors='replace').rstrip()}")

    async def _wait_ready(self, spec: ProcessSpec) -> None:
        assert spec.ready is not None
        deadline = time.monotonic() + spec.ready_timeout_s
        while time.monotonic() < deadline:
            if self._running[spec.name].process.returncode is not None:
                raise RuntimeError(f"{spec.name} exited during start-up (see its log)")
            if await spec.ready():
                logger.info("%s is ready", spec.name)
                return
            await asyncio.sleep(0.2)
        raise RuntimeError(f"{spec.name} was not ready within {spec.ready_timeout_s:.0f}s")

    async def watch(self, stop: asyncio.Event) -> None:
        """Restart any process that exits, with back-off, until `stop` is set."""
        while not stop.is_set():
            for name, running in list(self._running.items()):
                code = running.process.returncode
                if code is None:
                    if time.monotonic() - running.started > HEALTHY_AFTER_S:
                        running.backoff = 1.0
                    continue
                self._echo(
                    f"warden dev: {name} exited with code {code}; restarting in "
                    f"{running.backoff:.0f}s (restart #{running.restarts + 1})"
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), running.backoff)
                if stop.is_set():
                    return
                new = await self._spawn(running.spec, running)
                new.backoff = min(running.backoff * 2, MAX_BACKOFF_S)
                self._running[name] = new
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)

    async def stop_all(self) -> None:
        """SIGTERM every process group (newest first), SIGKILL what outlives the grace."""
        self._stopping = True
        for running in reversed(list(self._running.values())):
            await self._stop_one(running)

    async def _stop_one(self, running: _Running) -> None:
        process = running.process
        if process.returncode is None:
            _signal_group(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), STOP_GRACE_S)
            except TimeoutError:
                logger.warning("%s ignored SIGTERM; killing it", running.spec.name)
                _signal_group(process.pid, signal.SIGKILL)
                await process.wait()
        _signal_group(process.pid, signal.SIGKILL)  # stragglers in the group, if any
        if running.pump is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await running.pump

    def pids(self) -> dict[str, int]:
        """Current pid of each process (for tests and status lines)."""
        return {name: r.process.pid for name, r in self._running.items()}

    def _write_pids(self) -> None:
        # Operators (and tests) find the current pids here after restarts. Written
        # beside it and renamed over it: a reader never sees the file half-written.
        if self._pid_file is not None:
            fresh = self._pid_file.with_name(f".{self._pid_file.name}.tmp")
            fresh.write_text(json.dumps(self.pids(), indent=2) + "\n")
            os.replace(fresh, self._pid_file)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
