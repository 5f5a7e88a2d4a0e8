"""Warden's engines as Heat's and Senlin's service lists show them.

Heat lists its `heat-engine` processes (`openstack orchestration service list`) and
Senlin its engines (`openstack cluster service list`), each up or down by its last
report. Warden's engines are its workers, and Temporal already knows them: every worker
polling the task queue is a poller, with an identity (`<pid>@<host>`) and the time of
its last poll. An idle worker polls again at least every minute (a long poll lasts at
most 60 s), so one not seen for `UP_WITHIN` is down; Temporal forgets it a few minutes
later.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

#: A worker seen polling this recently is up (two long polls and some slack).
UP_WITHIN: Final = timedelta(seconds=150)
BINARY: Final = "warden-worker"
#: Heat's `report_interval`: how often a live engine shows it is alive, in seconds.
REPORT_INTERVAL_S: Final = 60


class Poller(BaseModel):
    """One worker polling one kind of task on the task queue, as Temporal last saw it."""

    model_config = ConfigDict(frozen=True)

    identity: str
    last_access: datetime
    kind: Literal["workflow", "activity"]


class EngineService(BaseModel):
    """One worker process: every kind of task it polls, and when it was last seen."""

    model_config = ConfigDict(frozen=True)

    identity: str
    last_seen: datetime
    polls: tuple[str, ...]
    up: bool

    @property
    def host(self) -> str:
        """The host part of the SDK's default identity (`<pid>@<host>`)."""
        return self.identity.rpartition("@")[2] or self.identity

    @property
    def service_id(self) -> str:
        """A stable id for the identity (Heat and Senlin show ids)."""
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"warden-worker:{self.identity}"))

    def as_heat(self, topic: str) -> dict[str, Any]:
        """Heat's service fields (`GET /v1/{project_id}/services`)."""
        seen = self.last_seen.isoformat()
        return {
            "id": self.service_id,
            "engine_id": self.service_id,
            "binary": BINARY,
            "host": self.identity,
            "hostname": self.host,
            "topic": topic,
            "report_interval": REPORT_INTERVAL_S,
            "status": "up" if self.up else "down",
            "created_at": seen,
            "updated_at": seen,
            "deleted_at": None,
        }

    def as_senlin(self, topic: str) -> dict[str, Any]:
        """Senlin's service fields (`GET /v1/services`)."""
        return {
            "id": self.service_id,
            "binary": BINARY,
            "host": self.host,
            "topic": topic,
            "status": "enabled",
            "state": "up" if self.up else "down",
            "disabled_reason": None,
            "updated_at": self.last_seen.isoformat(),
        }


def engine_services(pollers: Iterable[Poller], now: datetime) -> list[EngineService]:
    """One service per worker identity, most recently seen first."""
    by_identity: dict[str, list[Poller]] = {}
    for poller in pollers:
        by_identity.setdefault(poller.identity, []).append(poller)
    services = []
    for identity, seen in by_identity.items():
        last = max(p.last_access for p in seen)
        services.append(
            EngineService(
                identity=identity,
                last_seen=last,
                polls=tuple(sorted({p.kind for p in seen})),
                up=now - last <= UP_WITHIN,
            )
        )
    return sorted(services, key=lambda s: (-s.last_seen.timestamp(), s.identity))
