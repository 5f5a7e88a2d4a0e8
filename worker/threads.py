"""The worker's thread pools, each thread named for the operating system too.

Python names its threads (`activity_3`), but Linux sees only the process name, so
`top -H`, `ps -L` and `/proc/<pid>/task/*/comm` show every thread as `python`. Each pool
here names its threads at their start, so an operator, and the benchmarks, can tell
where a busy worker's CPU goes (docs/operating.md §Worker tuning):

| OS name prefix | pool | runs |
|---|---|---|
| (the process's) | the event loop | async activities (cloud calls, webhooks), the SDK's dispatch |
| `workflow_` | `workflow_pool` | workflow code, one activation at a time per workflow |
| `activity_` | `activity_pool` | sync activities (`record_changes`) |
| `blocking_` | `blocking_pool` | async activities' database calls (`asyncio.to_thread`) |
| `tokio-rt-worker` | the SDK's Rust core | polling, gRPC, history state machines |

Each pool is sized as it was before it had names: the workflow pool as the SDK sizes its
own (one thread per workflow task slot), the blocking pool as asyncio sizes its default.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

#: Linux keeps 15 bytes of a thread's name (16 with the terminating NUL).
OS_NAME_BYTES = 15
_PR_SET_NAME = 15


@functools.cache
def _libc() -> ctypes.CDLL:
    # The process's own symbols, libc's among them: no library search, no subprocess.
    return ctypes.CDLL(None)


def _set_os_name(name: str) -> None:
    """Give the calling thread `name` (truncated) as its Linux name; elsewhere nothing."""
    if sys.platform.startswith("linux"):
        _libc().prctl(_PR_SET_NAME, name.encode()[:OS_NAME_BYTES], 0, 0, 0)


def name_this_thread() -> None:
    """A pool initializer: the thread's Python name becomes its OS name."""
    _set_os_name(threading.current_thread().name)


def named_pool(prefix: str, max_workers: int) -> ThreadPoolExecutor:
    """A thread pool whose threads are `{prefix}_{n}` to Python and to the OS alike."""
    return ThreadPoolExecutor(
        max_workers=max_workers, thread_name_prefix=prefix, initializer=name_this_thread
    )


def workflow_pool(max_concurrent_workflow_tasks: int) -> ThreadPoolExecutor:
    """The pool that runs workflow activations, as large as the SDK's own default."""
    return named_pool("workflow", max_concurrent_workflow_tasks)


def activity_pool(threads: int) -> ThreadPoolExecutor:
    """The pool of sync activities (`WARDEN_WORKER_ACTIVITY_THREADS`)."""
    return named_pool("activity", threads)


def blocking_pool() -> ThreadPoolExecutor:
    """The event loop's default pool (`asyncio.to_thread`), sized as asyncio's own."""
    return named_pool("blocking", min(32, (os.cpu_count() or 1) + 4))
