"""Health monitors: one per pool, checked as `HealthMonitorController` checks them.

A pool with a monitor shows its members' operating status as the servers behind them
fare (see `operating`); without one its members are NO_MONITOR. `http_method`,
`url_path` and `expected_codes` belong to HTTP and HTTPS monitors (defaults GET, `/`,
`200`); UDP and SCTP pools take UDP-CONNECT, SCTP, TCP or HTTP monitors only.
Octavia does not require `timeout` to be at most `delay`, and neither does simcloud.
"""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr

from simcloud.identity import AuthToken
from simcloud.octavia.bodies import (
    Name,
    Tags,
    UrlPath,
    Uuid,
    apply_changes,
    changes_of,
    read_body,
)
from simcloud.octavia.exceptions import fault, validation, visible
from simcloud.octavia.listing import list_response
from simcloud.octavia.operating import monitor_status
from simcloud.octavia.pools import find_pool
from simcloud.octavia.provisioning import begin_pool_change
from simcloud.octavia.quotas import ensure_quota
from simcloud.octavia.state import (
    PENDING_DELETE,
    PENDING_UPDATE,
    HealthMonitorRecord,
    PoolRecord,
    isotime,
)
from simcloud.octavia.validate import LVS_PROTOCOLS
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2/lbaas/healthmonitors")

MonitorType = Literal["HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT", "SCTP"]
HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"]
HTTP_TYPES = frozenset({"HTTP", "HTTPS"})
HTTP_KEYS = ("http_method", "url_path", "expected_codes")
#: Octavia's `DOMAIN_NAME_REGEX` (lookarounds: Python's `re`, not pydantic's patterns).
DOMAIN_NAME = re.compile(r"^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)(?:\.|$))+$")
#: Octavia's `udp_connect_min_interval_health_monitor`.
UDP_CONNECT_MIN_DELAY = 3
#: What a PUT of null resets an attribute to (`_set_default_on_none`).
DEFAULTS: dict[str, Any] = {
    "http_method": "GET",
    "url_path": "/",
    "expected_codes": "200",
    "max_retries_down": 3,
    "name": "",
    "tags": [],
    "admin_state_up": True,
}


def _domain_name(value: str) -> str:
    if not DOMAIN_NAME.fullmatch(value):
        raise ValueError("Value should be a valid domain name")
    return value


def _http_version(value: float) -> float:
    if value not in (1.0, 1.1):
        raise ValueError("Value should be one of: 1.0, 1.1")
    return value


Retries = Annotated[int, Field(ge=1, le=10)]
Seconds = Annotated[int, Field(ge=0)]
ExpectedCodes = Annotated[StrictStr, Field(pattern=r"^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$")]
DomainName = Annotated[StrictStr, Field(min_length=1, max_length=255), AfterValidator(_domain_name)]
HttpVersion = Annotated[float, AfterValidator(_http_version)]


class HealthMonitorUpdate(BaseModel):
    """Octavia's `healthmonitor` for update."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    delay: Seconds | None = None
    timeout: Seconds | None = None
    max_retries: Retries | None = None
    max_retries_down: Retries | None = None
    http_method: HttpMethod | None = None
    url_path: UrlPath | None = None
    expected_codes: ExpectedCodes | None = None
    admin_state_up: bool | None = None
    tags: Tags | None = None
    http_version: HttpVersion | None = None
    domain_name: DomainName | None = None


class HealthMonitorCreate(HealthMonitorUpdate):
    """Octavia's `healthmonitor` for create."""

    pool_id: Uuid
    type: MonitorType
    delay: Seconds
    timeout: Seconds
    max_retries: Retries
    max_retries_down: Retries = 3
    name: Name = ""
    admin_state_up: bool = True
    tags: Tags = []
    project_id: Annotated[StrictStr, Field(max_length=36)] | None = None


def monitor_json(monitor: HealthMonitorRecord) -> dict[str, Any]:
    """Octavia's `healthmonitor` object."""
    shown = {key: monitor.attributes.get(key) for key in _SHOWN_AS_GIVEN}
    return shown | {
        "id": monitor.id,
        "name": monitor.name,
        "type": monitor.type,
        "admin_state_up": monitor.admin_state_up,
        "project_id": monitor.project_id,
        "pools": [{"id": monitor.pool_id}],
        "provisioning_status": monitor.provisioning_status,
        "operating_status": monitor_status(monitor),
        "created_at": isotime(monitor.created_at),
        "updated_at": isotime(monitor.updated_at),
        "tags": list(monitor.tags),
    }


_SHOWN_AS_GIVEN = (
    "delay",
    "timeout",
    "max_retries",
    "max_retries_down",
    "http_method",
    "url_path",
    "expected_codes",
    "http_version",
    "domain_name",
)


def find_monitor(state: SimState, monitor_id: str, project_id: str) -> HealthMonitorRecord:
    """The caller's health monitor, or Octavia's 404."""
    found = state.octavia.healthmonitors.get(monitor_id)
    return visible(found, "Health Monitor", monitor_id, project_id)


def _check_type(pool: PoolRecord, kind: str, delay: int | None) -> None:
    if pool.protocol in LVS_PROTOCOLS:
        allowed = ("UDP-CONNECT", "SCTP", "TCP", "HTTP")
        if kind not in allowed:
            raise validation(
                f"The associated pool protocol is {pool.protocol}, so only a "
                f"{'/'.join(allowed)} health monitor is supported."
            )
        if kind == "UDP-CONNECT" and delay is not None and delay < UDP_CONNECT_MIN_DELAY:
            raise validation(
                f"The request delay value {delay} should be larger than "
                f"{UDP_CONNECT_MIN_DELAY} for UDP-CONNECT health monitor type."
            )
    elif kind in ("UDP-CONNECT", "SCTP"):
        raise validation(f"The {kind} type is only supported for pools of type UDP/SCTP.")


def _check_http(kind: str, given: dict[str, Any], version: Any, domain: Any) -> None:
    if kind not in HTTP_TYPES:
        for key in HTTP_KEYS:
            if key in given:
                raise fault("InvalidOption", value=key, option=f"health monitors of type {kind}")
    if domain and not version:
        raise validation("'http_version' must be specified when 'domain_name' is provided.")
    if domain and version and version < 1.1:
        raise fault(
            "InvalidOption",
            value=f"http_version {version}",
            option="health monitors HTTP 1.1 domain name health check",
        )


def create_monitor(
    state: SimState, project_id: str, body: HealthMonitorCreate
) -> HealthMonitorRecord:
    """A new PENDING_CREATE monitor on a pool that has none (409 otherwise)."""
    pool = find_pool(state, body.pool_id, project_id)
    if body.project_id not in (None, project_id):
        raise fault("PolicyForbidden")
    _check_type(pool, body.type, body.delay)
    ensure_quota(state, project_id, "health_monitor")
    given = {k: v for k, v in changes_of(body).items() if v is not None}
    _check_http(body.type, given, body.http_version, body.domain_name)
    if pool.healthmonitor_id is not None:
        raise fault("DuplicateHealthMonitor")
    begin_pool_change(state, pool)
    monitor = HealthMonitorRecord(
        id=str(uuid.uuid4()),
        project_id=project_id,
        pool_id=pool.id,
        type=body.type,
        created_at=state.now(),
    )
    apply_changes(monitor, body.model_dump(exclude={"pool_id", "type", "project_id"}))
    if body.type in HTTP_TYPES:
        for key in HTTP_KEYS:
            monitor.attributes[key] = monitor.attributes.get(key) or DEFAULTS[key]
    state.octavia.healthmonitors[monitor.id] = monitor
    pool.healthmonitor_id = monitor.id
    return monitor


def update_monitor(
    state: SimState, monitor: HealthMonitorRecord, body: HealthMonitorUpdate
) -> None:
    """Change a monitor's attributes; null resets one to its default."""
    changes = changes_of(body)
    _check_http(
        monitor.type,
        changes,
        changes.get("http_version", monitor.attributes.get("http_version")),
        changes.get("domain_name", monitor.attributes.get("domain_name")),
    )
    for key in ("delay", "max_retries", "timeout"):
        if key in changes and changes[key] is None:
            raise fault("InvalidOption", value=None, option=key)
    pool = state.octavia.pools[monitor.pool_id]
    _check_type(pool, monitor.type, changes.get("delay"))
    begin_pool_change(state, pool)
    monitor.provisioning_status = PENDING_UPDATE
    monitor.updated_at = state.now()
    apply_changes(monitor, {k: DEFAULTS.get(k) if v is None else v for k, v in changes.items()})


def delete_monitor(state: SimState, monitor: HealthMonitorRecord) -> None:
    """Start deleting a monitor; its pool's members go back to NO_MONITOR."""
    begin_pool_change(state, state.octavia.pools[monitor.pool_id])
    monitor.provisioning_status = PENDING_DELETE


@router.get("")
async def list_monitors(request: Request, token: AuthToken) -> Response:
    """The caller's health monitors."""
    monitors = state_of(request).octavia.healthmonitors.values()
    shown = [monitor_json(m) for m in monitors if m.project_id == token.project_id]
    return list_response(request, "healthmonitors", shown)


@router.get("/{healthmonitor_id}")
async def show_monitor(request: Request, healthmonitor_id: str, token: AuthToken) -> Response:
    """One health monitor."""
    monitor = find_monitor(state_of(request), healthmonitor_id, token.project_id)
    return JSONResponse({"healthmonitor": monitor_json(monitor)})


@router.post("", status_code=201)
async def post_monitor(request: Request, token: AuthToken) -> Response:
    """Create a health monitor."""
    state = state_of(request)
    body = await read_body(request, "healthmonitor", HealthMonitorCreate)
    monitor = create_monitor(state, token.project_id, body)
    return JSONResponse({"healthmonitor": monitor_json(monitor)}, status_code=201)


@router.put("/{healthmonitor_id}")
async def put_monitor(request: Request, healthmonitor_id: str, token: AuthToken) -> Response:
    """Update a health monitor."""
    state = state_of(request)
    body = await read_body(request, "healthmonitor", HealthMonitorUpdate)
    monitor = find_monitor(state, healthmonitor_id, token.project_id)
    update_monitor(state, monitor, body)
    return JSONResponse({"healthmonitor": monitor_json(monitor)})


@router.delete("/{healthmonitor_id}", status_code=204)
async def remove_monitor(request: Request, healthmonitor_id: str, token: AuthToken) -> Response:
    """Delete a health monitor."""
    state = state_of(request)
    delete_monitor(state, find_monitor(state, healthmonitor_id, token.project_id))
    return Response(status_code=204)
