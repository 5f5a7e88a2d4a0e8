"""Background processes with pid files, and waiting for them to answer."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from scripts.openstack.layout import Layout


class LabError(RuntimeError):
    """Something in the lab did not come up; the message names the log to read."""


def pid_file(layout: Layout, name: str) -> Path:
    return layout.run / f"{name}.pid"


def spawn(layout: Layout, name: str, argv: list[str], env: Mapping[str, str]) -> int:
    """Start `argv` in its own session, output to log/NAME.log, pid to run/NAME.pid."""
    layout.log.mkdir(parents=True, exist_ok=True)
    layout.run.mkdir(parents=True, exist_ok=True)
    with (layout.log / f"{name}.log").open("ab") as log:
        # A session of its own: it outlives this command, and `down` can signal the
        # whole group (uWSGI's workers, Erlang's helpers) at once.
        process = subprocess.Popen(  # noqa: S603
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
            cwd=layout.root,
        )
    pid_file(layout, name).write_text(f"{process.pid}\n")
    return process.pid


def running_pid(layout: Layout, name: str) -> int | None:
    """The pid from run/NAME.pid if that process is still alive (and no zombie)."""
    try:
        pid = int(pid_file(layout, name).read_text().split()[0])
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError, IndexError):
        return None
    state = stat.rsplit(")", 1)[1].split()[0]
    return None if state in {"Z", "X"} else pid


def stop(layout: Layout, name: str, timeout: float = 15.0) -> bool:
    """SIGTERM the process group, SIGKILL it after `timeout`; True if it was running."""
    pid = running_pid(layout, name)
    if pid is None:
        pid_file(layout, name).unlink(missing_ok=True)
        return False
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and running_pid(layout, name) is not None:
        time.sleep(0.2)
    if running_pid(layout, name) is not None:
        _signal_group(pid, signal.SIGKILL)
        time.sleep(0.5)
    pid_file(layout, name).unlink(missing_ok=True)
    return True


def stop_all(layout: Layout, names: list[str], timeout: float = 15.0) -> None:
    """`stop` for many at once: signal all first, so their grace periods overlap."""
    pids = {name: running_pid(layout, name) for name in names}
    for pid in pids.values():
        if pid is not None:
            _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(running_pid(layout, n) for n in names):
        time.sleep(0.2)
    for name in names:
        stop(layout, name, timeout=2.0)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return
    except PermissionError:
        os.kill(pid, sig)


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def http_answers(url: str) -> bool:
    """True once anything answers HTTP at `url`, an error status included."""
    try:
        with urllib.request.urlopen(url, timeout=5):  # noqa: S310
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def wait_for(what: str, check: Callable[[], bool], timeout: float, log: Path | None) -> None:
    """Poll `check` until it holds; raise LabError naming `log` when time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    hint = f"; see {log}" if log else ""
    raise LabError(f"{what} not ready after {timeout:.0f} s{hint}")
