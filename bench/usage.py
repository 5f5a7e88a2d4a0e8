"""What the stack's processes used and said: CPU time and memory from Linux's `/proc`,
warnings and errors from their logs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_of(stat: str) -> float:
    """User + system CPU seconds from a `/proc/…/stat` line."""
    fields = stat.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time a process has used so far (Linux `/proc`), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return _cpu_of(stat)


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
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        role = "main" if task.name == str(pid) else thread_role(name)
        seconds[role] = seconds.get(role, 0.0) + _cpu_of(stat)
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


def children_named(prefix: str) -> list[int]:
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


def log_problems(path: Path) -> dict[str, Any]:
    """WARNING/ERROR lines of a process log: how many, and the first distinct ones."""
    if not path.exists():
        return {"count": 0, "first": []}
    lines = [
        line
        for line in path.read_text(errors="replace").splitlines()
        if " WARNING " in line or " ERROR " in line or "Traceback" in line
    ]
    distinct: list[str] = []
    for line in lines:
        text = line.split(" ", 3)[-1][:300]
        if text not in distinct:
            distinct.append(text)
    return {"count": len(lines), "first": distinct[:8]}
