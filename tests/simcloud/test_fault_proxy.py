"""The conformance stage's fault proxy, in front of simcloud's Nova: Warden's driver,
pointed at it by an endpoint override, sees the faults the proxy is told to make."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from activities.cloud import CloudSession
from domain.errors import BackendError, BackendUnavailable
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.fault_proxy import FaultProxy, running_fault_proxy
from tests.support.simcloud_server import RunningSimcloud, running_simcloud


@pytest.fixture
def simcloud() -> Iterator[RunningSimcloud]:
    with running_simcloud() as running:
        yield running


@pytest.fixture
def proxy(simcloud: RunningSimcloud) -> Iterator[FaultProxy]:
    with running_fault_proxy(simcloud.url) as running:
        yield running


def session(simcloud: RunningSimcloud, proxy: FaultProxy, timeout_s: float = 10) -> CloudSession:
    compute = {"compute": f"{proxy.url}/compute/v2.1"}
    return CloudSession(simcloud.cloud_config(endpoint_overrides=compute, timeout_s=timeout_s))


async def test_calls_without_a_rule_pass_through_unchanged(
    simcloud: RunningSimcloud, proxy: FaultProxy
) -> None:
    async with session(simcloud, proxy) as cloud:
        server = await cloud.compute.create_server("through", CIRROS, SMALL)
        assert (await cloud.compute.get_server(server.id)).name == "through"

    assert proxy.answered("POST", "/servers$") == [202]
    assert proxy.answered("GET", f"/servers/{server.id}$")[-1] == 200


async def test_a_failing_rule_answers_instead_of_the_service(
    simcloud: RunningSimcloud, proxy: FaultProxy
) -> None:
    body = {"computeFault": {"code": 500, "message": "The server has either erred"}}
    proxy.fail("POST", "/servers$", 500, body, times=1)
    async with session(simcloud, proxy) as cloud:
        with pytest.raises(BackendError, match="The server has either erred"):
            await cloud.compute.create_server("refused", CIRROS, SMALL)
        assert await cloud.compute.list_servers() == []  # nothing reached Nova
        proxy.clear()
        await cloud.compute.create_server("after", CIRROS, SMALL)

    assert proxy.answered("POST", "/servers$") == [202]  # clear() forgot the 500


async def test_a_held_call_is_carried_out_after_the_client_gave_up(
    simcloud: RunningSimcloud, proxy: FaultProxy
) -> None:
    proxy.hold("POST", "/servers$", 2.0)
    async with session(simcloud, proxy, timeout_s=0.5) as cloud:
        started = time.monotonic()
        with pytest.raises(BackendUnavailable):
            await cloud.compute.create_server("late", CIRROS, SMALL)
        assert time.monotonic() - started < 1.5
        assert await cloud.compute.list_servers() == []

        async def landed() -> list[str]:
            return [s.name for s in await cloud.compute.list_servers()]

        deadline = time.monotonic() + 10
        while not await landed() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert await landed() == ["late"]
