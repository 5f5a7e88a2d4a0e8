"""Nova's notifications from the message bus → the health managers (LIFECYCLE_EVENTS).

Nova publishes through oslo.messaging: on a RabbitMQ topic exchange named after its
control exchange (`nova`), with routing key `<topic>.<priority>`
(`versioned_notifications.info`, `notifications.error`, …), each body an envelope
`{"oslo.version": "2.0", "oslo.message": "<JSON text>"}`. Warden listens as an
oslo.messaging notification listener with a pool does: one queue named after the pool,
bound to every topic and priority, shared by all workers, so each event reaches one
of them. Senlin's health manager listened the same way (`senlin-listeners`).

A failure event of a server a node runs on becomes a `lifecycle_event` signal to that
cluster's health manager, as `POST /v1/notifications` does. A message is acknowledged
once handled or found irrelevant; one that cannot be delivered to Temporal goes back
to the queue.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aio_pika
from aio_pika.abc import AbstractIncomingMessage, AbstractQueue
from sqlalchemy.engine import Engine
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from config import Settings
from domain.cluster.notifications import failure_event, instance_uuid
from healthcheck.manager import HealthManager
from store.clusters import find_node_by_physical_id
from store.db import session_scope
from workflows import ids
from workflows.health.messages import LifecycleEvent

logger = logging.getLogger(__name__)

#: The health check this listener keeps current on the worker's `/health`.
CHECK = "notifications:bus"
#: Nova sends failures at INFO (power_off.end, …) and ERROR (rebuild.error).
PRIORITIES = ("info", "error")
MAX_RECONNECT_S = 30.0


@dataclass(frozen=True)
class BusNotification:
    """What Warden reads of one oslo.messaging notification."""

    event_type: str
    payload: dict[str, Any]
    timestamp: datetime | None = None


def read_oslo_message(body: bytes) -> BusNotification | None:
    """The notification in an AMQP body (the 2.0 envelope, or the bare 1.0 message);
    None for anything else."""
    try:
        message: Any = json.loads(body)
        if isinstance(message, dict) and isinstance(message.get("oslo.message"), str):
            message = json.loads(message["oslo.message"])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("event_type"), str):
        return None
    payload = message.get("payload")
    return BusNotification(
        event_type=message["event_type"],
        payload=payload if isinstance(payload, dict) else {},
        timestamp=_timestamp(message.get("timestamp")),
    )


def _timestamp(value: object) -> datetime | None:
    """oslo's `2026-12-01 21:30:00.123456`, in UTC."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:
        return None


def _since(sent: datetime | None) -> str:
    """How long after Nova sent it the event reached its health manager."""
    if sent is None:
        return ""
    return f", {(datetime.now(UTC) - sent).total_seconds():.3f} s after Nova sent it"


def amqp_urls(transport_url: str) -> list[str]:
    """oslo.messaging's `rabbit://user:pass@host:5672/vhost` as AMQP URLs, one per host
    of a cluster (`rabbit://u:p@h1:5672,u:p@h2:5672/`), in the order given."""
    parts = urlsplit(transport_url)
    if parts.scheme not in ("rabbit", "amqp", "amqps"):
        raise ValueError(f"notification transport {parts.scheme}:// is not RabbitMQ")
    scheme = "amqp" if parts.scheme == "rabbit" else parts.scheme
    return [
        urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
        for netloc in parts.netloc.split(",")
        if netloc
    ]


async def _connect(url: str) -> aio_pika.abc.AbstractConnection:
    """`aio_pika.connect`, but a connection that fails to open is closed, not dropped.

    aio-pika leaves a refused connection open; the garbage collector then schedules its
    `close()` from whatever thread it runs in, and off the event loop that coroutine is
    never awaited. A listener retrying a dead broker would leak one each time.
    """
    connection = aio_pika.Connection(aio_pika.connection.make_url(url))
    try:
        await connection.connect(timeout=10)
    except BaseException:
        await connection.close()
        raise
    return connection


class NotificationListener:
    """Consumes Nova's notifications until cancelled, reconnecting with back-off."""

    def __init__(
        self, settings: Settings, engine: Engine, client: Client, health: HealthManager
    ) -> None:
        assert settings.notification_transport_url is not None
        #: The broker's hosts; a connection that fails moves on to the next, as
        #: oslo.messaging's driver does.
        self._urls = amqp_urls(settings.notification_transport_url.get_secret_value())
        self._url = self._urls[0]
        self._settings = settings
        self._engine = engine
        self._client = client
        self._health = health
        #: Whether the current connection got as far as listening.
        self._bound = False

    async def run(self) -> None:
        """Listen forever; a lost or refused connection is retried, doubling the wait."""
        delay = 1.0
        while True:
            self._bound = False
            try:
                await self._consume()
            except (TimeoutError, aio_pika.exceptions.AMQPError, OSError) as err:
                reason = f"message bus {urlsplit(self._url).hostname}: {err!r}"
                self._url = self.next_url()
                logger.warning(
                    "Nova notifications not received (%s); again in %.0f s on %s",
                    reason,
                    delay,
                    urlsplit(self._url).hostname,
                )
            except Exception as err:  # the listener must outlive any one failure
                reason = f"listener failed: {err!r}"
                logger.exception("Nova notification listener failed; again in %.0f s", delay)
            else:
                reason = "the broker closed the connection"
                logger.warning("Nova notifications: %s; listening again", reason)
            self._health.record_failure(CHECK, output=reason, component_type="component")
            if self._bound:
                delay = 1.0  # it listened before failing: start the back-off over
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RECONNECT_S)

    def next_url(self) -> str:
        """The broker host after the current one (the same one when there is one)."""
        return self._urls[(self._urls.index(self._url) + 1) % len(self._urls)]

    async def _consume(self) -> None:
        connection = await _connect(self._url)
        async with connection:
            channel = await connection.channel()
            await channel.set_qos(prefetch_count=50)
            queue = await self._queue(channel)
            self._health.record_pass(CHECK, component_type="component")
            self._bound = True
            logger.info("listening for Nova notifications on queue %r", queue.name)
            async with queue.iterator() as messages:
                async for message in messages:
                    await self._handle(message)

    async def _queue(self, channel: aio_pika.abc.AbstractChannel) -> AbstractQueue:
        s = self._settings
        exchange = await channel.declare_exchange(
            s.notification_exchange, aio_pika.ExchangeType.TOPIC, durable=s.notification_durable
        )
        queue = await channel.declare_queue(s.notification_pool, durable=s.notification_durable)
        for topic in s.notification_topics:
            for priority in PRIORITIES:
                await queue.bind(exchange, routing_key=f"{topic}.{priority}")
        return queue

    async def _handle(self, message: AbstractIncomingMessage) -> None:
        note = read_oslo_message(message.body)
        event_type = failure_event(note.event_type) if note else None
        server_id = instance_uuid(note.payload) if note and event_type else None
        if note is None or event_type is None or server_id is None:
            await message.ack()
            return
        try:
            delivered = await self._signal(server_id, event_type, note.timestamp)
        except RPCError as err:
            logger.warning(
                "%s of server %s not delivered (%s): requeued", event_type, server_id, err
            )
            await message.nack(requeue=True)
            await asyncio.sleep(1)  # Temporal is down: do not spin on the same message
            return
        if delivered:
            logger.info(
                "%s of server %s: health manager told%s",
                event_type,
                server_id,
                _since(note.timestamp),
            )
        await message.ack()

    async def _signal(self, server_id: str, event_type: str, at: datetime | None) -> bool:
        node = await asyncio.to_thread(self._node_of, server_id)
        if node is None:
            return False
        node_id, cluster_id = node
        handle = self._client.get_workflow_handle(ids.health_manager(cluster_id))
        try:
            await handle.signal(
                "lifecycle_event", LifecycleEvent(node_id=node_id, event_type=event_type, at=at)
            )
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return False  # the cluster has no health policy
            raise
        return True

    def _node_of(self, server_id: str) -> tuple[str, str] | None:
        with session_scope(self._engine) as session:
            node = find_node_by_physical_id(session, server_id)
            return (node.id, node.cluster_id) if node is not None else None
