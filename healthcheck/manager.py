"""Per-process health state: cached check results rendered as health+json.

The contract: docs/api-contract.md §Process health.

Results are recorded by the code that talks to a dependency (the `@healthcheck`
decorator or an explicit recorder) and only read on request, so querying `/health`
often costs nothing and never probes a dependency.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NamedTuple

from healthcheck.checks import (
    MAX_OUTPUT_CHARS,
    CheckItem,
    ComponentType,
    HealthReport,
    HealthStatus,
    ObservedValue,
    split_check_name,
    summarise,
)

__all__ = [
    "CONTENT_TYPE",
    "CheckItem",
    "Clock",
    "ComponentType",
    "HealthManager",
    "HealthReport",
    "HealthResponse",
    "HealthStatus",
    "ObservedValue",
    "configure",
    "get_manager",
    "utc_now",
]

CONTENT_TYPE = "application/health+json"
# Version of the response format ("This is not the nova version": docs/openstack-designs.md
# §Nova health checks); never a
# Warden, Python or library version, which would help an attacker pick a CVE.
RESPONSE_VERSION = "1.0"

Clock = Callable[[], datetime]


class HealthResponse(NamedTuple):
    """An HTTP response ready to send: status code, headers and body."""

    status_code: int
    headers: dict[str, str]
    body: bytes


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


class HealthManager:
    """Thread-safe in-memory health state of one process.

    Args:
        service_id: `serviceId` in the body.
        description: `description` in the body (the process name).
        ttl: seconds a result stays valid; 0 keeps results forever.
        cache_control: `max-age` of `Cache-Control`; None = ttl, 0 = no header,
            -1 = `no-cache`.
        failure_threshold: consecutive failures of a check before `fail`; the ones
            before it are transient and reported as `warn`.
        clock: returns the current aware datetime (injectable for tests).
        host: the host name in `notes`; defaults to this machine's.
    """

    def __init__(
        self,
        service_id: str,
        description: str,
        *,
        ttl: int = 300,
        cache_control: int | None = None,
        failure_threshold: int = 2,
        clock: Clock = utc_now,
        host: str | None = None,
    ) -> None:
        if ttl < 0:
            raise ValueError("ttl must be >= 0 (0 = results never expire)")
        if cache_control is not None and cache_control < -1:
            raise ValueError("cache_control must be >= -1")
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be >= 1")
        self.service_id = service_id
        self.description = description
        self.ttl = ttl
        self.cache_control = ttl if cache_control is None else cache_control
        self.failure_threshold = failure_threshold
        self.host = host if host is not None else socket.gethostname()
        self._clock = clock
        self._lock = threading.Lock()  # sync activities record from worker threads
        self._items: dict[str, CheckItem] = {}
        self._failures: dict[str, int] = {}

    def record_pass(
        self,
        name: str,
        *,
        component_type: str | None = None,
        observed_value: ObservedValue = None,
    ) -> CheckItem:
        """Record a success of `name`; it ends any run of consecutive failures."""
        return self._record(
            name, HealthStatus.PASS, None, component_type=component_type, value=observed_value
        )

    def record_failure(
        self,
        name: str,
        output: str,
        *,
        component_type: str | None = None,
        observed_value: ObservedValue = None,
    ) -> CheckItem:
        """Record a failure: `warn` while transient, `fail` from `failure_threshold` on."""
        return self._record(name, None, output, component_type=component_type, value=observed_value)

    def record(
        self,
        name: str,
        status: HealthStatus,
        *,
        output: str | None = None,
        component_type: str | None = None,
        observed_value: ObservedValue = None,
    ) -> CheckItem:
        """Record a status decided by the caller; warn/fail need an `output` saying why."""
        status = HealthStatus(status)
        if status is not HealthStatus.PASS and not output:
            raise ValueError(f"a {status} result needs an output explaining it")
        return self._record(
            name, status, output, component_type=component_type, value=observed_value
        )

    def _record(
        self,
        name: str,
        status: HealthStatus | None,
        output: str | None,
        *,
        component_type: str | None,
        value: ObservedValue,
    ) -> CheckItem:
        """Store a result; `status=None` is a failure graded by its consecutive count."""
        component, measurement = split_check_name(name)
        key = f"{component}:{measurement}"
        with self._lock:
            failures = self._failures.get(key, 0)
            if status is None:
                failures += 1
                persistent = failures >= self.failure_threshold
                status = HealthStatus.FAIL if persistent else HealthStatus.WARN
            elif status is HealthStatus.PASS:
                failures = 0
            # An explicit warn/fail leaves the count alone. A recorder that does not
            # name the component type keeps the one an earlier recorder gave.
            previous = self._items.get(key)
            kind = component_type or (previous.component_type if previous else None)
            item = CheckItem(
                component=component,
                measurement=measurement,
                status=status,
                time=self._now(),
                output=output[:MAX_OUTPUT_CHARS] if output else None,
                component_type=kind or ComponentType.COMPONENT,
                observed_value=value,
            )
            self._items[key] = item
            self._failures[key] = failures
        return item

    def clear(self) -> None:
        """Forget every result (Nova resets health state on reconfiguration, as
        docs/openstack-designs.md §Nova health checks says)."""
        with self._lock:
            self._items.clear()
            self._failures.clear()

    def report(self) -> HealthReport:
        """The overall status and the items as they would be reported now."""
        now = self._now()
        with self._lock:
            items = sorted(self._items.values(), key=lambda item: item.key)
        return summarise(items, now, self.ttl)

    def summary(self) -> HealthStatus:
        """The overall status."""
        return self.report().status

    def response(self) -> HealthResponse:
        """The `/health` response: 200 for pass/warn, 503 for fail."""
        report = self.report()
        headers = {"Content-Type": CONTENT_TYPE}
        if self.cache_control == -1:
            headers["Cache-Control"] = "no-cache"
        elif self.cache_control > 0:
            headers["Cache-Control"] = f"max-age={self.cache_control}"
        status_code = 503 if report.status is HealthStatus.FAIL else 200
        body = json.dumps(self._body(report), separators=(",", ":")).encode()
        return HealthResponse(status_code, headers, body)

    def _body(self, report: HealthReport) -> dict[str, object]:
        checks: dict[str, list[dict[str, object]]] = {}
        for item in report.checks:
            checks.setdefault(item.key, []).append(item.to_json())
        return {
            "status": str(report.status),
            "version": RESPONSE_VERSION,
            "serviceId": self.service_id,
            "description": self.description,
            "notes": [self.host],
            "checks": checks,
        }

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the health clock must return timezone-aware datetimes")
        return now


class _DefaultManager:
    """Holds the process-wide manager; created lazily so importing stays side-effect free."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._manager: HealthManager | None = None

    def get(self) -> HealthManager:
        with self._lock:
            if self._manager is None:
                self._manager = HealthManager(str(uuid.uuid4()), "warden")
            return self._manager

    def set(self, manager: HealthManager) -> None:
        with self._lock:
            self._manager = manager


_DEFAULT = _DefaultManager()


def configure(
    service_id: str,
    description: str,
    *,
    ttl: int = 300,
    cache_control: int | None = None,
    failure_threshold: int = 2,
    clock: Clock = utc_now,
    host: str | None = None,
) -> HealthManager:
    """Replace the process-wide manager (at start-up or on reconfiguration)."""
    manager = HealthManager(
        service_id,
        description,
        ttl=ttl,
        cache_control=cache_control,
        failure_threshold=failure_threshold,
        clock=clock,
        host=host,
    )
    _DEFAULT.set(manager)
    return manager


def get_manager() -> HealthManager:
    """The process-wide manager; a default one exists before `configure` is called."""
    return _DEFAULT.get()
