"""Check results and the status rules that summarise them.

The contract is docs/api-contract.md §Process health; the rules follow Nova's per-process
health checks (docs/openstack-designs.md §Nova health checks).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

DEFAULT_MEASUREMENT = "connection"
# Keeps the response small and cheap even when an exception message is huge.
MAX_OUTPUT_CHARS = 1024

ObservedValue = str | int | float | bool | None


class HealthStatus(StrEnum):
    """Status of one check and of the whole process (IETF health check draft)."""

    PASS = "pass"  # noqa: S105 - a health status, not a password
    WARN = "warn"
    FAIL = "fail"


class ComponentType(StrEnum):
    """Common `componentType` values of the IETF draft; any string is accepted."""

    COMPONENT = "component"
    DATASTORE = "datastore"
    SYSTEM = "system"


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One recorded result, reported under the key `<component>:<measurement>`."""

    component: str
    measurement: str
    status: HealthStatus
    time: datetime
    output: str | None = None
    component_type: str = ComponentType.COMPONENT
    observed_value: ObservedValue = None

    def __post_init__(self) -> None:
        if self.time.tzinfo is None:
            raise ValueError("check time must be timezone-aware")

    @property
    def key(self) -> str:
        """The `checks` key in the response body."""
        return f"{self.component}:{self.measurement}"

    def to_json(self) -> dict[str, object]:
        """The item in IETF draft form; `output` only for warn/fail, as Nova's spec says."""
        data: dict[str, object] = {
            "status": str(self.status),
            "time": self.time.astimezone(UTC).isoformat(timespec="seconds"),
        }
        if self.status is not HealthStatus.PASS and self.output:
            data["output"] = self.output
        data["componentType"] = self.component_type
        if self.observed_value is not None:
            data["observedValue"] = self.observed_value
        return data


@dataclass(frozen=True, slots=True)
class HealthReport:
    """The overall status and the items as reported (expired ones turned to warn)."""

    status: HealthStatus
    checks: tuple[CheckItem, ...] = ()


def split_check_name(name: str) -> tuple[str, str]:
    """Split `component[:measurement]`; the measurement defaults to `connection`.

    Raises:
        ValueError: the name is empty or has more than one `:`.
    """
    component, sep, measurement = name.partition(":")
    if not component or (sep and not measurement) or ":" in measurement:
        raise ValueError(f"invalid check name {name!r}; expected component[:measurement]")
    return component, measurement or DEFAULT_MEASUREMENT


def summarise(items: Iterable[CheckItem], now: datetime, ttl: int) -> HealthReport:
    """Apply the status rules: expired → warn; all expired or any fail → fail."""
    checks: list[CheckItem] = []
    fresh = 0
    for item in items:
        if ttl and now - item.time > timedelta(seconds=ttl):
            checks.append(_expired(item, ttl))
        else:
            fresh += 1
            checks.append(item)
    if not checks:
        # Nova's spec: no checks yet (start-up) is pass, so service managers do not loop
        # restarts.
        return HealthReport(HealthStatus.PASS)
    statuses = {item.status for item in checks}
    if fresh == 0 or HealthStatus.FAIL in statuses:
        status = HealthStatus.FAIL
    elif HealthStatus.WARN in statuses:
        status = HealthStatus.WARN
    else:
        status = HealthStatus.PASS
    return HealthReport(status, tuple(checks))


def _expired(item: CheckItem, ttl: int) -> CheckItem:
    output = f"result expired: last {item.status} is older than the {ttl} s ttl"
    if item.output:
        output = f"{output} ({item.output})"
    return replace(item, status=HealthStatus.WARN, output=output[:MAX_OUTPUT_CHARS])
