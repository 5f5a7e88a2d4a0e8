"""A throwaway RabbitMQ broker for the tests, from Debian's `rabbitmq-server` package.

The node gets a name, ports, a data directory, an Erlang cookie and an empty plugin
list of its own, so it never meets a broker the machine already runs (the real
OpenStack lab of scripts/openstack starts one too). `guest` may connect from loopback.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import free_port

SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
CTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"
INSTALL_HINT = (
    "The notification-bus tests need a RabbitMQ broker: `sudo apt-get install "
    "rabbitmq-server` (Debian, Ubuntu; .ci/run does this)."
)
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class RabbitBroker:
    """A running broker: its oslo.messaging transport URL and its node's name."""

    port: int
    node: str
    home: Path
    env: dict[str, str]

    @property
    def transport_url(self) -> str:
        """As Nova's `[oslo_messaging_notifications] transport_url` would name it."""
        return f"rabbit://guest:guest@127.0.0.1:{self.port}/"

    def ctl(self, *args: str) -> None:
        """`rabbitmqctl` on this node (`stop_app` closes every connection, `start_app`
        takes them again)."""
        subprocess.run([CTL, "-n", self.node, *args], env=self.env, capture_output=True, check=True)


@contextmanager
def running_rabbitmq() -> Iterator[RabbitBroker]:
    """Start a broker on free ports and stop it (and its data) when the block exits."""
    if not Path(SERVER).exists():
        raise RuntimeError(INSTALL_HINT)
    home = Path(tempfile.mkdtemp(prefix="warden-rabbit-"))
    port, dist = free_port(), free_port()
    node = f"warden-test-{port}@localhost"
    env = _environment(home, node, port, dist)
    broker = RabbitBroker(port=port, node=node, home=home, env=env)
    (home / "enabled_plugins").write_text("[].\n")
    (home / "rabbitmq.conf").write_text(f"listeners.tcp.default = 127.0.0.1:{port}\n")
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen([SERVER], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_listening(port, proc, home / "server.log")
        yield broker
    finally:
        subprocess.run([CTL, "-n", broker.node, "stop"], env=env, capture_output=True, check=False)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(home, ignore_errors=True)


def _environment(base: Path, node: str, port: int, dist_port: int) -> dict[str, str]:
    home = str(base)
    return os.environ | {
        "HOME": home,  # the Erlang cookie lives there
        "RABBITMQ_NODENAME": node,
        "RABBITMQ_NODE_PORT": str(port),
        "RABBITMQ_DIST_PORT": str(dist_port),
        "RABBITMQ_MNESIA_BASE": f"{home}/mnesia",
        "RABBITMQ_LOG_BASE": f"{home}/log",
        "RABBITMQ_ENABLED_PLUGINS_FILE": f"{home}/enabled_plugins",
        "RABBITMQ_CONFIG_FILE": f"{home}/rabbitmq",
        "RABBITMQ_PID_FILE": f"{home}/rabbitmq.pid",
    }


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"RabbitMQ exited at start: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"RabbitMQ not listening on {port} after {START_TIMEOUT_S} s")
