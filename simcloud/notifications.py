"""Nova versioned notifications, POSTed fire-and-forget to the configured URL."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from datetime import UTC, datetime
from typing import Any

import httpx
from starlette.requests import Request

from simcloud.state import ServerRecord, isotime

logger = logging.getLogger(__name__)

POWER_NAMES = {"active": "running", "paused": "paused", "stopped": "shutdown"}


def notification(event_type: str, record: ServerRecord, vm_state: str) -> dict[str, Any]:
    """A versioned notification in Nova's shape for `record` ending in `vm_state`."""
    error = event_type.endswith(".error")
    data: dict[str, Any] = {
        "uuid": record.id,
        "display_name": record.name,
        "host": "simcloud",
        "node": "simcloud",
        "state": vm_state,
        "power_state": POWER_NAMES.get(vm_state, "pending"),
        "task_state": None,
        "tenant_id": record.project_id,
        "user_id": record.user_id,
        "metadata": dict(record.metadata),
        "image_uuid": record.image_ref,
        "flavor": {
            "nova_object.name": "FlavorPayload",
            "nova_object.namespace": "nova",
            "nova_object.version": "1.4",
            "nova_object.data": {"name": record.flavor_ref, "vcpus": 1, "memory_mb": 512},
        },
        "ip_addresses": [
            {
                "nova_object.name": "IpPayload",
                "nova_object.namespace": "nova",
                "nova_object.version": "1.0",
                "nova_object.data": {"address": record.address, "version": 4, "label": "private"},
            }
        ],
        "locked": record.locked,
        "created_at": isotime(record.created_at),
        "updated_at": isotime(record.updated_at),
        "fault": _fault(record) if error else None,
    }
    return {
        "priority": "ERROR" if error else "INFO",
        "event_type": event_type,
        "message_id": str(uuid.uuid4()),
        "publisher_id": "nova-compute:simcloud",
        "timestamp": "",
        "payload": {
            "nova_object.name": "InstanceActionPayload",
            "nova_object.namespace": "nova",
            "nova_object.version": "1.8",
            "nova_object.data": data,
        },
    }


def _fault(record: ServerRecord) -> dict[str, Any]:
    return {
        "nova_object.name": "ExceptionPayload",
        "nova_object.namespace": "nova",
        "nova_object.version": "1.1",
        "nova_object.data": {
            "exception": "InstanceFaultRollback",
            "exception_message": f"Simulated failure of instance {record.id}",
            "function_name": "rebuild_instance",
            "module_name": "nova.compute.manager",
        },
    }


class Notifier:
    """Sends notifications in the background; a failing receiver is only logged."""

    def __init__(
        self,
        url: str | None,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        token: str | None = None,
    ) -> None:
        self.url = url
        self._headers = {"X-Auth-Token": token} if token else {}
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        #: The latest notifications emitted (also when no URL is configured).
        self.sent: deque[dict[str, Any]] = deque(maxlen=1000)

    def emit(
        self, event_type: str, record: ServerRecord, vm_state: str, delay_s: float = 0.0
    ) -> None:
        """Emit now, or when a transition of `delay_s` seconds completes."""
        body = notification(event_type, record, vm_state)
        if delay_s <= 0:
            self._fire(body)
            return
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def fire() -> None:
            if handle is not None:
                self._timers.discard(handle)
            self._fire(body)

        handle = loop.call_later(delay_s, fire)
        self._timers.add(handle)

    def _fire(self, body: dict[str, Any]) -> None:
        body["timestamp"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        self.sent.append(body)
        if self.url is None:
            return
        task = asyncio.get_running_loop().create_task(self._post(self.url, body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, url: str, body: dict[str, Any]) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(transport=self._transport, timeout=5.0)
        try:
            await self._client.post(url, json=body, headers=self._headers)
        except Exception as exc:  # fire-and-forget: whatever went wrong is only logged
            logger.warning(
                "notification %s for %s not delivered: %r",
                body["event_type"],
                body["payload"]["nova_object.data"]["uuid"],
                exc,
            )

    def reset(self) -> None:
        """Forget emitted notifications and cancel the ones not yet due."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        self.sent.clear()

    async def aclose(self) -> None:
        """Let in-flight deliveries finish briefly, then stop everything."""
        self.reset()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=2.0)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def notifier_of(request: Request) -> Notifier:
    """The notifier of the app serving `request`."""
    notifier: Notifier = request.app.state.notifier
    return notifier
