"""The in-memory world of one simcloud: servers, tokens, queues, pools, faults.

Nothing here sleeps or runs in the background: a server's transitional status is a
`Task` with a completion time, settled lazily whenever the server is read, so ten
thousand idle servers cost nothing.
"""

from __future__ import annotations

import random
import re
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request

from config.settings import simulated_project_id
from simcloud.config import SimConfig
from simcloud.flavor_catalog import FLAVORS, Flavor
from simcloud.image.state import ImageState
from simcloud.network.state import NetworkState
from simcloud.octavia.state import OctaviaState
from simcloud.volume.state import VolumeState


def isotime(epoch: float) -> str:
    """Nova's timestamp format (`2024-05-01T12:00:00Z`)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Fault:
    """An injected failure that persists until one of `cured_by` is applied."""

    kind: str
    cured_by: tuple[str, ...]


@dataclass(slots=True)
class Task:
    """A transition in progress: shown as `status` until `done_at`, then `vm_state`."""

    task_state: str
    status: str
    done_at: float
    vm_state: str
    #: Notification to emit when the task completes (fired by the notifier's timer).
    event: str | None = None


@dataclass(slots=True)
class ServerRecord:
    """One server, in Nova's words (vm_state, task_state, power_state)."""

    id: str
    name: str
    image_ref: str
    flavor_ref: str
    metadata: dict[str, str]
    project_id: str
    user_id: str
    address: str
    created_at: float
    updated_at: float
    vm_state: str = "building"
    task: Task | None = None
    locked: bool = False
    locked_reason: str | None = None
    fault: Fault | None = None
    #: The flavor as it was at create (Nova embeds it; a deleted flavor still shows).
    flavor: Flavor | None = None
    deleted_until: float | None = None
    #: When it first became ACTIVE; None for a build that failed (Nova then refuses
    #: reboot, rebuild, stop and the rest: `must_have_launched`).
    launched_at: float | None = None
    #: Nova's `fault.message` while the server is in ERROR.
    fault_message: str = "Simulated fault"
    #: The flavor (id, embedded) before a resize, kept until it is confirmed or reverted.
    old_flavor: tuple[str, Flavor | None] | None = None
    #: The vm_state a confirmed or reverted resize goes back to (active or stopped).
    before_resize: str = "active"
    #: The last password set by `changePassword` (Nova keeps it in the guest only).
    admin_pass: str | None = None
    #: The server's tags (Nova 2.26).
    tags: list[str] = field(default_factory=list)
    #: JSON members that never change, built once (cheap `detail` lists).
    static: dict[str, Any] = field(default_factory=dict)
    #: Nova's `addresses` as its ports have them now (None: the static private address).
    addresses: Callable[[], dict[str, list[dict[str, Any]]]] | None = None
    #: (fields it was built from, metadata object, JSON text) of the last serialization.
    cached_json: tuple[tuple[Any, ...], dict[str, str], str] | None = None
    #: The nova-compute host the scheduler put it on (None: not scheduled).
    host: str | None = None


@dataclass(slots=True)
class ServerGroup:
    """One of Nova's server groups (`os-server-groups`) and the servers in it."""

    id: str
    name: str
    policy: str
    rules: dict[str, Any]
    project_id: str
    user_id: str
    members: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ComputeService:
    """One of Nova's services (`os-services`): one conductor and scheduler, and a
    nova-compute on each of simcloud's hosts."""

    id: str
    binary: str
    host: str
    zone: str
    updated_at: float
    status: str = "enabled"
    disabled_reason: str | None = None
    forced_down: bool = False


def default_compute_services(
    now: float, hosts: Sequence[str] = ("simcloud",)
) -> list[ComputeService]:
    """The services of a devstack: conductor and scheduler on the first host, a compute
    on each (one host, `simcloud`, unless configured otherwise)."""

    def service(binary: str, host: str, zone: str) -> ComputeService:
        key = f"{binary}.simcloud" if host == "simcloud" else f"{binary}.{host}.simcloud"
        return ComputeService(str(uuid.uuid5(uuid.NAMESPACE_DNS, key)), binary, host, zone, now)

    first = hosts[0]
    return [
        service("nova-conductor", first, "internal"),
        service("nova-scheduler", first, "internal"),
        *(service("nova-compute", host, "nova") for host in hosts),
    ]


@dataclass(slots=True)
class Token:
    """An issued Keystone token."""

    value: str
    user_id: str
    project_id: str
    expires_at: float
    methods: tuple[str, ...]
    #: The user's name and its roles on the project (`member`; the admin user's `admin`
    #: and `member`, as devstack's admin has).
    username: str = ""
    roles: tuple[str, ...] = ("member",)


@dataclass(slots=True)
class QueuedMessage:
    """A Zaqar message; it disappears once `age >= ttl`."""

    seq: int
    id: str
    body: Any
    ttl: int
    client_id: str
    created_at: float


@dataclass(slots=True)
class KeypairRecord:
    """One user's key pair."""

    id: int
    name: str
    user_id: str
    type: str
    public_key: str
    fingerprint: str
    created_at: float


@dataclass(slots=True)
class KeypairBook:
    """The key pairs of one simcloud, by name (one user: the configured one)."""

    keypairs: dict[str, KeypairRecord] = field(default_factory=dict)
    next_id: int = 1


@dataclass(slots=True)
class ApiFaults:
    """Flaky-API settings applied to the OpenStack routes (not to `/sim/*`)."""

    error_rate: float = 0.0
    status: int = 503
    latency_ms: int = 0
    #: Share of the injected errors sent after the call was carried out: the cloud did
    #: the work but the caller never hears of it (a gateway timing out, a reset).
    lost_response_rate: float = 0.0
    #: Injected faults hold the call this long, then carry it out and answer (ms).
    hold_ms: int = 0
    #: Only calls whose `"METHOD /path"` this matches get errors (every call when None).
    match: re.Pattern[str] | None = None
    #: Errors still to inject before the API heals itself (no limit when None).
    errors_left: int | None = None


class SimState:
    """Everything one simcloud knows; reset between tests with `reset()`."""

    def __init__(
        self, config: SimConfig, seeders: Sequence[Callable[[SimState], None]] = ()
    ) -> None:
        """Args:
        config: Latencies, credentials and limits.
        seeders: What every reset makes again after emptying the world (the project's
            network, as devstack makes it), in order.
        """
        self.config = config
        self.seeders = tuple(seeders)
        self.project_id = simulated_project_id(config.project_name)
        self.user_id = uuid.uuid5(uuid.NAMESPACE_DNS, f"{config.username}.user").hex
        self.admin_user_id = uuid.uuid5(uuid.NAMESPACE_DNS, f"{config.admin_username}.user").hex
        self.rng = random.Random(config.seed)
        self.clock_offset = 0.0
        self.reset()

    def reset(self) -> None:
        """Forget every server, token, message, member and fault."""
        self.servers: dict[str, ServerRecord] = {}
        self.by_name: dict[str, set[str]] = {}
        self.by_address: dict[str, str] = {}
        self.tokens: dict[str, Token] = {}
        self.queues: dict[str, deque[QueuedMessage]] = {}
        self.octavia = OctaviaState()
        self.api_faults = ApiFaults()
        self.network = NetworkState()
        self.images = ImageState(self.config)
        self.keypairs = KeypairBook()
        self.volumes = VolumeState(self.config)
        #: Nova's instances / cores / ram limits (-1: none; simcloud starts with none).
        self.compute_quotas: dict[str, int] = {"instances": -1, "cores": -1, "ram": -1}
        #: Nova's services (`os-services`): id → record; no enabled nova-compute, no host.
        self.compute_services: dict[str, ComputeService] = {
            svc.id: svc for svc in default_compute_services(self.now(), self.config.compute_hosts)
        }
        #: Nova's server groups by id.
        self.server_groups: dict[str, ServerGroup] = {}
        #: Nova's flavors: id → flavor, devstack's at every reset.
        self.flavors: dict[str, Flavor] = {f.id: f for f in FLAVORS}
        self.address_seq = 10
        self.message_seq = 0
        self.clock_offset = 0.0
        for seed in self.seeders:
            seed(self)

    def now(self) -> float:
        """Simulated wall clock (epoch seconds); `/sim/clock` moves it forward."""
        return time.time() + self.clock_offset

    def next_address(self) -> str:
        """A fresh fixed IPv4 address in 10.0.0.0/8."""
        n = self.address_seq
        self.address_seq += 1
        return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"

    def add_server(self, record: ServerRecord) -> None:
        """Index a new server by id, name and address."""
        self.servers[record.id] = record
        self.by_name.setdefault(record.name, set()).add(record.id)
        self.by_address[record.address] = record.id

    def drop_server(self, server_id: str) -> None:
        """Remove a server from every index (it now answers 404)."""
        record = self.servers.pop(server_id, None)
        if record is None:
            return
        ids = self.by_name.get(record.name)
        if ids is not None:
            ids.discard(server_id)
            if not ids:
                del self.by_name[record.name]
        if self.by_address.get(record.address) == server_id:
            del self.by_address[record.address]
        for group in self.server_groups.values():
            if server_id in group.members:
                group.members.remove(server_id)

    def rename(self, record: ServerRecord, name: str) -> None:
        """Change a server's name, keeping the name index right."""
        ids = self.by_name.get(record.name)
        if ids is not None:
            ids.discard(record.id)
            if not ids:
                del self.by_name[record.name]
        record.name = name
        self.by_name.setdefault(name, set()).add(record.id)

    def pool_ids(self) -> set[str]:
        """Pools that exist: Octavia's, those with API members, those named in metadata."""
        pools = set(self.octavia.pools) | set(self.octavia.members)
        pools.update(
            s.metadata["lb_pool_id"] for s in self.servers.values() if "lb_pool_id" in s.metadata
        )
        return pools


def state_of(request: Request) -> SimState:
    """The simcloud state of the app serving `request`."""
    state: SimState = request.app.state.sim
    return state
