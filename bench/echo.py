"""The bare echo workflow: the floor of an update, a written update and a signal.

`scale_in` and `stacks` hold Warden's calls to these, timed on the same dev server
from a worker in the benchmark's own process (`echo_worker`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

#: Calls timed of each bare baseline, after `WARMUP_CALLS` untimed ones.
BASELINE_CALLS = 300
WARMUP_CALLS = 20


@workflow.defn(name="BenchEchoWorkflow")
class BenchEchoWorkflow:
    """A trivial entity: an update that answers at once, a signal that counts."""

    def __init__(self) -> None:
        self.count = 0
        self.done = False

    @workflow.run
    async def run(self) -> int:
        await workflow.wait_condition(lambda: self.done)
        return self.count

    @workflow.update(name="bump")
    def bump(self, n: int) -> int:
        """Add `n`; the answer is the new count."""
        self.count += n
        return self.count

    @workflow.update(name="bump_written")
    async def bump_written(self, n: int) -> int:
        """`bump`, answered only once a local activity has committed it to a database:
        the floor of an update with read-your-writes (`BareWrites`)."""
        self.count += n
        await workflow.execute_local_activity(
            "bench_write", self.count, start_to_close_timeout=timedelta(seconds=30)
        )
        return self.count

    @workflow.signal(name="poke")
    def poke(self) -> None:
        """Count one."""
        self.count += 1

    @workflow.signal(name="finish")
    def finish(self) -> None:
        """Let the run return."""
        self.done = True


class BareWrites:
    """The write of `BenchEchoWorkflow.bump_written`: one row committed to a SQLite file
    in WAL mode with `synchronous=NORMAL` (Warden's default database, `store/db.py`), with
    the standard library and no ORM, from a sync activity on a thread pool as Warden's
    `record_changes` runs."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS counts (n INTEGER PRIMARY KEY, at REAL)")

    @activity.defn(name="bench_write")
    def write(self, n: int) -> None:
        """Commit one row (idempotent on `n`)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO counts VALUES (?, ?)", (n, time.time()))

    def close(self) -> None:
        """Close the database."""
        self._db.close()


@contextlib.contextmanager
def echo_worker(client: Client, queue: str, **more: Any) -> Iterator[Worker]:
    """A worker here for the baselines: `BenchEchoWorkflow` and its write, plus `more`
    workflows and activities; a sandbox like Warden's with every module passed through."""
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules()
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-writes-") as tmp,
        ThreadPoolExecutor(max_workers=4) as executor,
    ):
        writes = BareWrites(Path(tmp) / "writes.db")
        try:
            yield Worker(
                client,
                task_queue=queue,
                workflows=[BenchEchoWorkflow, *more.get("workflows", [])],
                activities=[writes.write, *more.get("activities", [])],
                activity_executor=executor,
                workflow_runner=runner,
            )
        finally:
            writes.close()
