"""The worker's thread pools name their threads for the OS too (worker/threads.py)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from bench.scale_in import cpu_cell
from bench.stack import thread_cpu_seconds, thread_role
from worker.threads import OS_NAME_BYTES, blocking_pool, named_pool, workflow_pool

linux_only = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")


def _os_name(native_id: int) -> str:
    return Path(f"/proc/self/task/{native_id}/comm").read_text().strip()


@linux_only
def test_a_pool_thread_carries_its_python_name_as_its_os_name() -> None:
    with named_pool("activity", 2) as pool:
        python_name, native_id = pool.submit(
            lambda: (threading.current_thread().name, threading.get_native_id())
        ).result()
        assert python_name == "activity_0"
        assert _os_name(native_id) == "activity_0"


@linux_only
def test_a_long_name_is_cut_to_what_linux_keeps() -> None:
    with named_pool("a-very-long-pool-name", 1) as pool:
        native_id = pool.submit(threading.get_native_id).result()
        assert _os_name(native_id) == "a-very-long-pool-name_0"[:OS_NAME_BYTES]


def test_the_pools_keep_the_sizes_they_had_before_they_had_names() -> None:
    with workflow_pool(100) as workflows, blocking_pool() as blocking:
        assert workflows._max_workers == 100
        # asyncio's default executor: ThreadPoolExecutor() sizes itself so.
        assert blocking._max_workers == min(32, (os.cpu_count() or 1) + 4)


@linux_only
def test_asyncio_to_thread_runs_in_the_blocking_pool_once_it_is_the_default() -> None:
    async def main() -> str:
        asyncio.get_running_loop().set_default_executor(blocking_pool())
        # Read while the thread lives: asyncio.run shuts the default pool down.
        return await asyncio.to_thread(lambda: _os_name(threading.get_native_id()))

    assert asyncio.run(main()).startswith("blocking_")


@pytest.mark.parametrize(
    ("os_name", "role"),
    [
        ("workflow_12", "workflow"),
        ("activity_0", "activity"),
        ("tokio-rt-worker", "tokio-rt-worker"),
        ("python", "python"),
        ("42", "42"),
        ("_7", "_"),
    ],
)
def test_a_thread_role_is_its_os_name_without_the_number(os_name: str, role: str) -> None:
    assert thread_role(os_name) == role


@linux_only
def test_this_process_cpu_is_summed_by_pool_with_its_main_thread_named_main() -> None:
    with named_pool("busy", 1) as pool:
        pool.submit(lambda: sum(i * i for i in range(300_000))).result()
        seconds = thread_cpu_seconds(os.getpid())
    assert {"main", "busy"} <= seconds.keys()
    assert all(value >= 0 for value in seconds.values())


def test_cpu_cells_show_processes_as_measured_and_pools_largest_first() -> None:
    assert cpu_cell({"simcloud": 3.5, "worker": 25.4}) == "simcloud 4, worker 25"
    pools = {"tokio-rt-worker": 4.0, "main": 8.32, "activity": 0.04, "workflow": 3.9}
    assert cpu_cell(pools, breakdown=True) == "main 8.3, tokio-rt-worker 4.0, workflow 3.9"
    assert cpu_cell(None) == "—" and cpu_cell({}, breakdown=True) == "—"
