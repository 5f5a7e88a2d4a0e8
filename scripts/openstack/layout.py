# ruff: noqa: S105 -- loopback-only lab secrets, on purpose.
"""Where the lab keeps its files, which ports it listens on, and its fixed secrets."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

#: The service releases the conformance stage targets; the rest is in constraints.txt.
SERVICES = (
    "keystone==30.0.0",
    "openstack-placement==16.0.0",
    "glance==33.0.0",
    "neutron==29.0.0",
    "nova==34.0.0",
)
#: pyroute2: Neutron 29 imports it in the server but its wheel no longer requires it.
EXTRAS = ("python-openstackclient", "psycopg2-binary", "uwsgi", "pyroute2")

#: Offsets from the base port (WARDEN_LAB_PORT_BASE, default 29100: below Linux's
#: ephemeral ports, 32768 and up, where a client socket in TIME_WAIT could hold one).
#: Fixed rather than random so that a warm start keeps the endpoints clouds.yaml names.
PORT_OFFSETS = {
    "postgres": 0,
    "amqp": 1,
    "epmd": 2,
    "rabbit_dist": 3,
    "keystone": 10,
    "placement": 11,
    "glance": 12,
    "neutron": 13,
    "nova": 14,
}

#: Loopback-only lab secrets: nothing here protects anything of value.
ADMIN_PASSWORD = "admin-secret"
SERVICE_PASSWORD = "service-secret"
MEMBER_USER = "warden"
MEMBER_PASSWORD = "warden-secret"
RABBIT_USER = "lab"
RABBIT_PASSWORD = "lab-secret"
DB_USER = "lab"
DB_PASSWORD = "lab-secret"
REGION = "RegionOne"
#: Nova's host name, fixed so a warm start on another machine name finds its node.
NOVA_HOST = "warden-lab"

#: Database per service; Nova needs its API database plus cell0 and cell1.
DATABASES = ("keystone", "placement", "glance", "neutron", "nova_api", "nova_cell0", "nova")


@dataclass(frozen=True)
class Layout:
    """Every path and port of one lab, derived from its root folder."""

    root: Path
    port_base: int

    @classmethod
    def default(cls) -> Layout:
        root = Path(os.environ.get("WARDEN_LAB_ROOT", REPO / "var" / "openstack"))
        base = int(os.environ.get("WARDEN_LAB_PORT_BASE", "29100"))
        return cls(root=root.resolve(), port_base=base)

    def port(self, name: str) -> int:
        return self.port_base + PORT_OFFSETS[name]

    @property
    def venv(self) -> Path:
        return Path(os.environ.get("WARDEN_LAB_VENV", self.root / "venv"))

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def log(self) -> Path:
        return self.root / "log"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.port(service)}"

    @property
    def auth_url(self) -> str:
        return f"{self.url('keystone')}/v3"

    def db_url(self, database: str) -> str:
        port = self.port("postgres")
        return f"postgresql+psycopg2://{DB_USER}:{DB_PASSWORD}@127.0.0.1:{port}/{database}"

    @property
    def transport_url(self) -> str:
        return f"rabbit://{RABBIT_USER}:{RABBIT_PASSWORD}@127.0.0.1:{self.port('amqp')}/"
