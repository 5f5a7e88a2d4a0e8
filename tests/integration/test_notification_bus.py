"""LIFECYCLE_EVENTS from the message bus: a RabbitMQ broker (Debian's), Nova's own way of
publishing (oslo.messaging, in a process of its own), the worker's listener, and all of
Warden in process on simcloud. A node whose server powers off is recovered because of the
notification alone: the policy never polls."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import aio_pika
import pytest
from pydantic import SecretStr

from healthcheck.manager import HealthManager
from store.db import make_engine
from tests.api.test_notifications_through_workflows import recovered_by, watched_cluster
from tests.support.eventually import eventually
from tests.support.nova_notifier import publish
from tests.support.rabbitmq import RabbitBroker, running_rabbitmq
from tests.support.warden_in_process import InProcessWarden, in_process_warden
from worker.notifications import CHECK, NotificationListener

#: On one xdist worker: one broker (7 s of Erlang start-up) for the module, not one each.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("rabbitmq")]


@pytest.fixture(scope="module")
def broker() -> Iterator[RabbitBroker]:
    with running_rabbitmq() as running:
        yield running


@asynccontextmanager
async def listener_on(
    tmp_path: Path, transport_url: str
) -> AsyncIterator[tuple[InProcessWarden, HealthManager]]:
    """Warden in process with the worker's notification listener on `transport_url`,
    once it has bound its queue."""
    async with in_process_warden(tmp_path) as warden:
        settings = warden.settings.model_copy(
            update={"notification_transport_url": SecretStr(transport_url)}
        )
        engine = make_engine(settings.resolved_database_url)
        health = HealthManager("worker-test", "warden-worker")
        task = asyncio.create_task(
            NotificationListener(settings, engine, warden.env.client, health).run()
        )
        try:
            await eventually(lambda: _passing(health), what="the listener bound its queue")
            yield warden, health
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            engine.dispose()


@pytest.fixture
async def listening(
    tmp_path: Path, broker: RabbitBroker
) -> AsyncIterator[tuple[InProcessWarden, HealthManager]]:
    """Warden in process with the worker's notification listener on `broker`."""
    async with listener_on(tmp_path, broker.transport_url) as running:
        yield running


async def _passing(health: HealthManager) -> bool:
    return [(c.key, str(c.status)) for c in health.report().checks] == [(CHECK, "pass")]


@pytest.mark.parametrize("event_type", ["instance.power_off.end", "compute.instance.power_off.end"])
async def test_a_power_off_notification_on_the_bus_recovers_the_node(
    listening: tuple[InProcessWarden, HealthManager], broker: RabbitBroker, event_type: str
) -> None:
    warden, _ = listening
    api = warden.api
    _, victim = await watched_cluster(api)
    await warden.cloud.compute.stop(victim["physical_id"])

    await asyncio.to_thread(publish, broker.transport_url, event_type, victim["physical_id"])

    [started] = await recovered_by(api, victim["id"], "RECOVER_START")
    assert "healthy again" in started["status_reason"]
    node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
    assert (node["status"], node["physical_id"]) == ("ACTIVE", victim["physical_id"])
    assert (await warden.cloud.compute.get_server(victim["physical_id"])).status == "ACTIVE"


async def test_events_of_other_servers_and_unreadable_messages_are_dropped(
    listening: tuple[InProcessWarden, HealthManager], broker: RabbitBroker
) -> None:
    warden, _ = listening
    api = warden.api
    _, victim = await watched_cluster(api)
    await asyncio.to_thread(publish, broker.transport_url, "instance.power_off.end", "not-ours")
    await asyncio.to_thread(publish, broker.transport_url, "instance.update", victim["physical_id"])
    # Then a real one: had the others blocked the queue, it would never be handled.
    await warden.cloud.compute.stop(victim["physical_id"])
    await asyncio.to_thread(
        publish, broker.transport_url, "instance.shutdown.end", victim["physical_id"]
    )
    [started] = await recovered_by(api, victim["id"], "RECOVER_START")
    assert "healthy again" in started["status_reason"]
    events = (await api.get("/v1/events", params={"obj_id": victim["id"]})).json()["events"]
    # One recovery: the `instance.update` of the same server started none.
    assert len([e for e in events if e["action"] == "NODE_RECOVER"]) == 1


async def test_the_listener_comes_back_when_the_broker_does(
    listening: tuple[InProcessWarden, HealthManager], broker: RabbitBroker
) -> None:
    warden, health = listening
    _, victim = await watched_cluster(warden.api)
    await asyncio.to_thread(broker.ctl, "stop_app")
    try:
        await eventually(lambda: _failing(health), what="the bus check failing")
    finally:
        await asyncio.to_thread(broker.ctl, "start_app")
    await eventually(lambda: _passing(health), timeout=60, what="the listener back")

    await warden.cloud.compute.stop(victim["physical_id"])
    await asyncio.to_thread(
        publish, broker.transport_url, "instance.power_off.end", victim["physical_id"]
    )
    [started] = await recovered_by(warden.api, victim["id"], "RECOVER_START")
    assert "healthy again" in started["status_reason"]


async def _failing(health: HealthManager) -> bool:
    return [(c.key, str(c.status)) for c in health.report().checks] == [(CHECK, "fail")]


async def test_a_refused_connection_is_closed_not_left_to_the_garbage_collector(
    tmp_path: Path,
) -> None:
    """aio-pika keeps a connection it could not open; left open, the collector closes it
    later from another thread, where its `close()` coroutine is never awaited."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with in_process_warden(tmp_path) as warden:
        url = f"rabbit://guest:guest@127.0.0.1:{port}/"
        settings = warden.settings.model_copy(update={"notification_transport_url": SecretStr(url)})
        engine = make_engine(settings.resolved_database_url)
        listener = NotificationListener(
            settings, engine, warden.env.client, HealthManager("worker-test", "warden-worker")
        )
        try:
            with pytest.raises(
                aio_pika.exceptions.AMQPConnectionError, match="Connect call failed"
            ):
                await listener._consume()
        finally:
            engine.dispose()
        gc.collect()
        left_open = [
            o for o in gc.get_objects() if isinstance(o, aio_pika.Connection) and not o.is_closed
        ]
        assert left_open == []


async def test_a_broker_host_that_refuses_gives_way_to_the_next_of_the_cluster(
    tmp_path: Path, broker: RabbitBroker
) -> None:
    """oslo.messaging's transport URL lists a cluster's hosts; the listener moves on from
    one that refuses to the next, as oslo.messaging's driver does."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"guest:guest@127.0.0.1:{probe.getsockname()[1]}"
    live = urlsplit(broker.transport_url)
    cluster = f"rabbit://{dead},{live.netloc}{live.path}"
    async with listener_on(tmp_path, cluster) as (_, health):
        assert await _passing(health)  # bound, on the second host
