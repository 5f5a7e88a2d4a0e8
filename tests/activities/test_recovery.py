"""Recovery activities against the real simcloud: faults cured, fencing confirmed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import CloudSession
from activities.recovery import RecoveryActivities
from domain.cluster.health import FenceRequest
from domain.cluster.policies.health import RebootType
from domain.cluster.recovery import RebootRequest, RebuildRequest
from domain.errors import BackendNotFound
from domain.servers import LockServerRequest
from simcloud.config import SimConfig
from simcloud.image.state import seeded_image_id
from tests.support.cloud_ids import CIRROS, TINY
from tests.support.simcloud_server import RunningSimcloud, SimControl, running_simcloud

T = TypeVar("T")
A = TypeVar("A")


@pytest.fixture
def recovery(cloud: CloudSession) -> RecoveryActivities:
    return RecoveryActivities(cloud.compute, cloud.collections)


async def run(fn: Callable[[A], Awaitable[T]], arg: A, env: ActivityEnvironment | None = None) -> T:
    return await (env or ActivityEnvironment()).run(fn, arg)


async def fails(call: Awaitable[Any]) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        await call
    return caught.value


async def status(cloud: CloudSession, server_id: str) -> str:
    return (await cloud.compute.get_server(server_id)).status


# --- Reboot, rebuild, start, unpause ---------------------------------------------------------


async def test_reboot_cures_a_shutoff_fault_cured_by_reboot(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.fault(server.id, "shutoff", ["REBOOT"])

    used = await run(recovery.reboot_server, RebootRequest(physical_id=server.id))
    settled = await run(recovery.wait_server_healthy, server.id)

    # SOFT needs an ACTIVE server in Nova, so the activity asked for HARD.
    assert used == "HARD"
    assert settled == "ACTIVE"
    assert (await sim.state())["faults"] == {}


async def test_soft_reboot_of_an_active_server_stays_soft(
    recovery: RecoveryActivities, cloud: CloudSession
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)

    used = await run(
        recovery.reboot_server, RebootRequest(physical_id=server.id, type=RebootType.SOFT)
    )

    assert used == "SOFT"
    assert await run(recovery.wait_server_healthy, server.id) == "ACTIVE"


async def test_reboot_that_does_not_cure_settles_in_the_faulted_status(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.fault(server.id, "shutoff", ["REBUILD"])

    await run(recovery.reboot_server, RebootRequest(physical_id=server.id, type=RebootType.HARD))

    assert await run(recovery.wait_server_healthy, server.id) == "SHUTOFF"


async def test_rebuild_cures_an_error_fault_and_takes_a_new_image(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.fault(server.id, "error", ["REBUILD"])

    await run(recovery.rebuild_server, RebuildRequest(physical_id=server.id))
    cured = await run(recovery.wait_server_healthy, server.id)
    await run(recovery.rebuild_server, RebuildRequest(physical_id=server.id, image="ubuntu-22.04"))

    assert cured == "ACTIVE"
    assert (await cloud.compute.get_server(server.id)).image_id == seeded_image_id("ubuntu-22.04")


async def test_start_and_unpause_cure_their_faults_and_repeat_harmlessly(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    off = await cloud.compute.create_server("off", CIRROS, TINY)
    paused = await cloud.compute.create_server("paused", CIRROS, TINY)
    await sim.fault(off.id, "shutoff", ["START"])
    await sim.fault(paused.id, "pause", ["UNPAUSE"])

    for _ in range(2):  # the second call finds the server ACTIVE (409) and is fine
        await run(recovery.start_server, off.id)
        await run(recovery.unpause_server, paused.id)

    assert await status(cloud, off.id) == "ACTIVE"
    assert await status(cloud, paused.id) == "ACTIVE"


async def test_start_of_a_paused_server_is_a_permanent_conflict(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.fault(server.id, "pause")

    error = await fails(run(recovery.start_server, server.id))

    assert (error.type, error.non_retryable) == ("BackendConflict", True)


async def test_missing_server_fails_permanently_and_outage_is_retried(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)

    missing = await fails(run(recovery.reboot_server, RebootRequest(physical_id="no-such-id")))
    await sim.api_faults(error_rate=1.0, status=503)
    outage = await fails(run(recovery.start_server, server.id))

    assert (missing.type, missing.non_retryable) == ("BackendNotFound", True)
    assert (outage.type, outage.non_retryable) == ("BackendUnavailable", False)


# --- Fencing ----------------------------------------------------------------------------------


async def test_fence_by_delete_confirms_the_server_is_gone(
    recovery: RecoveryActivities, cloud: CloudSession
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    request = FenceRequest(physical_id=server.id, delete=True, timeout_s=10)

    first = await run(recovery.fence_server, request)
    again = await run(recovery.fence_server, request)

    assert (first, again) == ("DELETED", "DELETED")
    with pytest.raises(BackendNotFound):
        await cloud.compute.get_server(server.id)


async def test_fence_by_power_off_confirms_shutoff(
    recovery: RecoveryActivities, cloud: CloudSession
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    request = FenceRequest(physical_id=server.id, delete=False, timeout_s=10)

    first = await run(recovery.fence_server, request)
    again = await run(recovery.fence_server, request)

    assert (first, again) == ("SHUTOFF", "SHUTOFF")
    assert await status(cloud, server.id) == "SHUTOFF"


async def test_fence_times_out_retryably_when_the_server_never_stops(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    # An error fault cured by nothing the fence does: os-stop is accepted, yet it stays ERROR.
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.fault(server.id, "error", ["RECREATE"])
    beats: list[Any] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)

    error = await fails(
        run(
            recovery.fence_server,
            FenceRequest(physical_id=server.id, delete=False, timeout_s=1),
            env,
        )
    )

    assert (error.type, error.non_retryable) == ("FencingTimeout", False)
    assert "still ERROR, not SHUTOFF, after 1s" in error.message
    assert len(beats) >= 2


async def test_fence_rides_out_a_flaky_cloud_until_its_deadline(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.api_faults(error_rate=0.5, status=503)
    try:
        done = await run(
            recovery.fence_server, FenceRequest(physical_id=server.id, delete=True, timeout_s=30)
        )
    finally:
        await sim.api_faults(error_rate=0.0)
    assert done == "DELETED"
    with pytest.raises(BackendNotFound):
        await cloud.compute.get_server(server.id)


async def test_fence_during_an_outage_times_out_naming_the_error(
    recovery: RecoveryActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await sim.api_faults(error_rate=1.0, status=503)
    try:
        error = await fails(
            run(recovery.fence_server, FenceRequest(physical_id=server.id, timeout_s=1))
        )
    finally:
        await sim.api_faults(error_rate=0.0)
    assert (error.type, error.non_retryable) == ("FencingTimeout", False)
    assert "still unknown (" in error.message


async def test_fence_of_a_locked_server_fails_permanently(
    recovery: RecoveryActivities, cloud: CloudSession
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, TINY)
    await cloud.compute.lock(server.id, reason="keep")

    error = await fails(run(recovery.fence_server, FenceRequest(physical_id=server.id)))

    assert (error.type, error.non_retryable) == ("BackendConflict", True)


async def test_lock_gives_nova_its_reason_and_takes_the_bare_id_older_workflows_send(
    recovery: RecoveryActivities, cloud: CloudSession
) -> None:
    first = await cloud.compute.create_server("n-1", CIRROS, TINY)
    second = await cloud.compute.create_server("n-2", CIRROS, TINY)

    await run(recovery.lock_server, LockServerRequest(physical_id=first.id, reason="patching"))
    await run(recovery.lock_server, second.id)

    locked = await cloud.compute.get_server(first.id)
    assert (locked.locked, locked.locked_reason) == (True, "patching")
    assert (await cloud.compute.get_server(second.id)).locked


# --- Slow transitions (a simcloud whose actions take a minute of simulated time) -------------


@pytest.fixture(scope="module")
def slow_simcloud() -> Iterator[RunningSimcloud]:
    with running_simcloud(SimConfig(action_latency_ms=60_000, seed=7)) as sim:
        yield sim


@pytest.fixture
async def slow(slow_simcloud: RunningSimcloud) -> AsyncIterator[tuple[SimControl, CloudSession]]:
    async with (
        httpx.AsyncClient(base_url=slow_simcloud.url, timeout=10) as client,
        CloudSession(slow_simcloud.cloud_config()) as session,
    ):
        control = SimControl(client)
        await control.reset()
        yield control, session


async def test_fence_delete_times_out_while_deletion_lingers_then_confirms(
    slow: tuple[SimControl, CloudSession],
) -> None:
    control, session = slow
    recovery = RecoveryActivities(session.compute, session.collections)
    server = await session.compute.create_server("n-1", CIRROS, TINY)
    request = FenceRequest(physical_id=server.id, delete=True, timeout_s=1)

    error = await fails(run(recovery.fence_server, request))
    await control.advance_clock(61)
    done = await run(recovery.fence_server, request)

    assert (error.type, error.non_retryable) == ("FencingTimeout", False)
    assert "still DELETED, not gone" in error.message
    assert done == "DELETED"


async def test_steps_already_under_way_are_fine_and_waiting_retries_until_settled(
    slow: tuple[SimControl, CloudSession],
) -> None:
    control, session = slow
    recovery = RecoveryActivities(session.compute, session.collections)
    server = await session.compute.create_server("n-1", CIRROS, TINY)
    await control.fault(server.id, "shutoff", ["START"])

    await run(recovery.start_server, server.id)
    await run(recovery.start_server, server.id)  # 409 "powering-on": already doing it
    waiting = await fails(run(recovery.wait_server_healthy, server.id))
    await control.advance_clock(61)

    assert (waiting.type, waiting.non_retryable) == ("ServerNotReady", False)
    assert "SHUTOFF, task powering-on" in waiting.message
    assert await run(recovery.wait_server_healthy, server.id) == "ACTIVE"


async def test_action_blocked_by_another_running_task_is_retryable(
    slow: tuple[SimControl, CloudSession],
) -> None:
    control, session = slow
    recovery = RecoveryActivities(session.compute, session.collections)
    server = await session.compute.create_server("n-1", CIRROS, TINY)
    await run(recovery.rebuild_server, RebuildRequest(physical_id=server.id))

    await run(recovery.rebuild_server, RebuildRequest(physical_id=server.id))  # 409: rebuilding
    busy = await fails(run(recovery.unpause_server, server.id))

    assert (busy.type, busy.non_retryable) == ("ServerBusy", False)
    assert "REBUILD, task rebuilding" in busy.message
    await control.advance_clock(61)
    assert await run(recovery.wait_server_healthy, server.id) == "ACTIVE"
