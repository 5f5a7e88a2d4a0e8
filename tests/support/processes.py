"""Real Warden processes for integration tests: free ports, env, clean stop."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


#: Ports handed out below the kernel's ephemeral range. A port the kernel picked for
#: `bind(0)` can be taken again by anyone's `bind(0)` before our process binds it:
#: Temporal's dev server binds its internal services that way as it starts.
_FREE_PORTS = range(15000, min(_ephemeral_low(), 32768))
_random = random.SystemRandom()


def free_port() -> int:
    """A port nothing listens on right now, outside the range the kernel hands out."""
    if len(_FREE_PORTS) < 1000:  # a kernel configured to hand out nearly every port
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            chosen: int = sock.getsockname()[1]
            return chosen
    for _ in range(200):
        port = _random.choice(_FREE_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_FREE_PORTS}")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on the port."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


@dataclass
class Proc:
    """A child process in its own group, its output in a log file."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> Proc:
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
        """Signal the group and wait; SIGKILL if it will not go."""
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


def wait_http(url: str, proc: Proc, timeout: float = 60) -> None:
    """Block until `url` answers below 500 or the process dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.process is not None and proc.process.poll() is not None:
            raise RuntimeError(f"{proc.name} exited:\n{proc.tail()}")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} not ready at {url}:\n{proc.tail()}")


PYTHON = sys.executable
