"""Faults seen through the driver, notifications at a real receiver, a flaky API."""

from __future__ import annotations

import httpx
import pytest

from activities.cloud import CloudSession
from domain.errors import BackendNotFound, BackendUnavailable
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.eventually import eventually
from tests.support.simcloud_server import NotificationReceiver, RunningSimcloud, SimControl


async def received(receiver: NotificationReceiver, server_id: str, count: int) -> list[str]:
    async def arrived() -> list[str] | None:
        events = [n["event_type"] for n in receiver.for_server(server_id)]
        return events if len(events) >= count else None

    found = await eventually(arrived, timeout=5, what=f"{count} notifications")
    assert found is not None
    return sorted(found)


async def test_shutoff_fault_persists_until_a_curing_reboot(
    cloud: CloudSession, sim: SimControl, notification_receiver: NotificationReceiver
) -> None:
    server = await cloud.compute.create_server("n-1", CIRROS, SMALL)
    await sim.fault(server.id, "shutoff", ["REBOOT"])

    faulted = await cloud.compute.get_server(server.id)
    await cloud.compute.start(server.id)
    after_start = await cloud.compute.get_server(server.id)
    await cloud.compute.reboot(server.id, "HARD")
    cured = await cloud.compute.get_server(server.id)

    assert (faulted.status, after_start.status, cured.status) == ("SHUTOFF", "SHUTOFF", "ACTIVE")
    assert await received(notification_receiver, server.id, 1) == ["compute.instance.power_off.end"]
    body = notification_receiver.for_server(server.id)[0]
    assert body["payload"]["nova_object.data"]["display_name"] == "n-1"
    assert body["payload"]["nova_object.data"]["state"] == "stopped"


async def test_each_fault_kind_is_visible_to_the_driver(
    cloud: CloudSession, sim: SimControl, notification_receiver: NotificationReceiver
) -> None:
    servers = {
        kind: await cloud.compute.create_server(f"n-{kind}", CIRROS, SMALL)
        for kind in ("error", "pause", "vanish", "app_failing")
    }
    for kind, server in servers.items():
        await sim.fault(server.id, kind)

    assert (await cloud.compute.get_server(servers["error"].id)).status == "ERROR"
    assert (await cloud.compute.get_server(servers["pause"].id)).status == "PAUSED"
    with pytest.raises(BackendNotFound):
        await cloud.compute.get_server(servers["vanish"].id)
    assert (await sim.app_health("n-app_failing")).status_code == 503
    assert await received(notification_receiver, servers["error"].id, 1) == [
        "compute.instance.rebuild.error"
    ]
    assert await received(notification_receiver, servers["pause"].id, 1) == [
        "compute.instance.pause.end"
    ]
    assert await received(notification_receiver, servers["vanish"].id, 1) == [
        "compute.instance.soft_delete.end"
    ]


async def test_driver_power_actions_notify_the_receiver(
    cloud: CloudSession, notification_receiver: NotificationReceiver
) -> None:
    server = await cloud.compute.create_server("n-2", CIRROS, SMALL)

    await cloud.compute.stop(server.id)
    await cloud.compute.start(server.id)
    await cloud.compute.pause(server.id)
    await cloud.compute.delete_server(server.id)

    assert await received(notification_receiver, server.id, 3) == [
        "compute.instance.pause.end",
        "compute.instance.power_off.end",
        "compute.instance.shutdown.end",
    ]


async def test_api_5xx_is_retryable_backend_unavailable(
    cloud: CloudSession, sim: SimControl
) -> None:
    await cloud.compute.list_servers()
    await sim.api_faults(error_rate=1.0, status=503)

    with pytest.raises(BackendUnavailable) as caught:
        await cloud.compute.list_servers()
    await sim.api_faults(error_rate=0)

    assert caught.value.retryable
    assert caught.value.__cause__ is None
    assert await cloud.compute.list_servers() == []


async def test_slow_api_beyond_the_timeout_is_retryable(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    # The timeout leaves room for the first call on a loaded machine; the latency is
    # well beyond it.
    async with CloudSession(simcloud.cloud_config(timeout_s=0.3)) as session:
        await session.compute.list_servers()
        await sim.api_faults(error_rate=0, latency_ms=1500)

        with pytest.raises(BackendUnavailable, match="timed out") as caught:
            await session.compute.list_servers()

    assert not isinstance(caught.value, httpx.HTTPError)
    assert caught.value.retryable


async def test_unreachable_cloud_is_retryable(simcloud: RunningSimcloud) -> None:
    config = simcloud.cloud_config(auth_url="http://127.0.0.1:9/identity/v3")
    async with CloudSession(config) as session:
        with pytest.raises(BackendUnavailable, match="could not reach"):
            await session.compute.list_servers()
