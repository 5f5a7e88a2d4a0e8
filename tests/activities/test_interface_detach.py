"""Waiting for Nova to unplug a detached port, or unbind a deleted server's, before
Warden deletes it.

Real Nova unplugs after its 202 (the conformance scenarios on the lab found ports
still bound, and Neutron's 403 for their delete); simcloud unplugs at once. So the waits
are proven here against fakes that lag by a scripted number of calls, and end to end
on the lab.
"""

from __future__ import annotations

from typing import Any

import pytest

from activities.server_networking import detached, release_owned
from domain.errors import BackendUnavailable


class LaggingCompute:
    """A compute whose interface list still shows `port` for `lag` more calls."""

    def __init__(self, port: str, lag: int) -> None:
        self.port, self.lag, self.calls = port, lag, 0

    async def interfaces(self, server_id: str) -> list[dict[str, Any]]:
        self.calls += 1
        still = self.calls <= self.lag
        return [{"port_id": "kept"}] + ([{"port_id": self.port}] if still else [])


async def test_the_wait_ends_once_the_port_is_gone_from_the_server() -> None:
    compute = LaggingCompute("p1", lag=2)

    await detached(compute, "s1", {"p1"}, wait_s=5)  # type: ignore[arg-type]

    assert compute.calls == 3


async def test_a_port_nova_never_unplugs_is_a_retryable_error() -> None:
    compute = LaggingCompute("p1", lag=10_000)

    with pytest.raises(BackendUnavailable, match=r"has not detached port\(s\) p1 from server s1"):
        await detached(compute, "s1", {"p1"}, wait_s=0.3)  # type: ignore[arg-type]

    assert BackendUnavailable.retryable


async def test_nothing_detached_asks_nothing() -> None:
    compute = LaggingCompute("p1", lag=1)

    await detached(compute, "s1", set())  # type: ignore[arg-type]

    assert compute.calls == 0


class LaggingPorts:
    """A port collection whose port `p1` stays bound to `s1` for `lag` more shows."""

    def __init__(self, lag: int) -> None:
        self.lag, self.shows, self.deleted = lag, 0, list[str]()

    async def list(self, coll: Any, filters: dict[str, str]) -> list[dict[str, Any]]:
        if coll.kind == "floating_ip":
            return []
        return [{"id": "p1", "device_id": "s1"}, {"id": "p2", "device_id": ""}]

    async def show(self, coll: Any, port_id: str) -> dict[str, Any]:
        self.shows += 1
        return {"id": port_id, "device_id": "s1" if self.shows <= self.lag else ""}

    async def delete(self, coll: Any, port_id: str) -> None:
        self.deleted.append(port_id)


async def test_a_deleted_servers_port_is_deleted_once_nova_unbinds_it() -> None:
    ports = LaggingPorts(lag=2)

    await release_owned(ports, "s1", wait_s=5)  # type: ignore[arg-type]

    assert ports.deleted == ["p2", "p1"]
    assert ports.shows == 3


async def test_a_port_nova_never_unbinds_is_a_retryable_error() -> None:
    ports = LaggingPorts(lag=10_000)

    with pytest.raises(BackendUnavailable, match=r"has not unbound port\(s\) p1 of deleted server"):
        await release_owned(ports, "s1", wait_s=0.3)  # type: ignore[arg-type]

    assert ports.deleted == ["p2"]
