"""Nova's `os-services` (microversion 2.53 and later: ids are UUIDs), and the scheduling
they decide: with no enabled nova-compute left, a server create is accepted (202) and
the build then fails, as Nova's scheduler fails it: ERROR, never launched, with the
fault "No valid host was found. There are not enough hosts available."

Disabling the compute service is how an operator drains a host, and how the conformance
stage makes a build fail on real Nova and on simcloud alike.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from simcloud.errors import SimError, bad_request, read_body
from simcloud.identity import AuthToken
from simcloud.server_groups import join, pick_host
from simcloud.state import (
    ComputeService,
    ServerGroup,
    ServerRecord,
    SimState,
    Task,
    isotime,
    state_of,
)

router = APIRouter(prefix="/compute/v2.1")

NO_VALID_HOST = "No valid host was found. There are not enough hosts available."


class ServiceUpdate(BaseModel):
    """`PUT /os-services/{service_id}` body (2.53)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["enabled", "disabled"] | None = None
    disabled_reason: Annotated[str, Field(min_length=1, max_length=255)] | None = None
    forced_down: bool | None = None


def to_json(service: ComputeService) -> dict[str, Any]:
    """A service as Nova 2.53+ shows it."""
    return {
        "id": service.id,
        "binary": service.binary,
        "host": service.host,
        "zone": service.zone,
        "status": service.status,
        "state": "down" if service.forced_down else "up",
        "disabled_reason": service.disabled_reason,
        "forced_down": service.forced_down,
        "updated_at": isotime(service.updated_at),
    }


def valid_hosts(state: SimState) -> list[str]:
    """The hosts the scheduler may use: those of an enabled, up nova-compute."""
    return sorted(
        s.host
        for s in state.compute_services.values()
        if s.binary == "nova-compute" and s.status == "enabled" and not s.forced_down
    )


def has_valid_host(state: SimState) -> bool:
    """Whether the scheduler finds a host: an enabled, up nova-compute."""
    return bool(valid_hosts(state))


def schedule(state: SimState, record: ServerRecord, group: ServerGroup | None = None) -> None:
    """Put the server on a host (within its server group's policy), or fail its build as
    Nova's scheduler does when no host can take it."""
    if record.task is None:
        return
    host = pick_host(state, valid_hosts(state), group)
    join(group, record)
    if host is not None:
        record.host = host
        digest = hashlib.sha224((record.project_id + host).encode()).hexdigest()
        record.static = record.static | {"hostId": digest}
        return
    record.task = Task("scheduling", "BUILD", record.task.done_at, "error")
    record.fault_message = NO_VALID_HOST


@router.get("/os-services")
async def list_services(
    request: Request, _: AuthToken, binary: str | None = None, host: str | None = None
) -> JSONResponse:
    """Every service, or those of one `binary` and/or `host`."""
    services = [
        to_json(s)
        for s in state_of(request).compute_services.values()
        if (binary is None or s.binary == binary) and (host is None or s.host == host)
    ]
    return JSONResponse({"services": services})


@router.put("/os-services/{service_id}")
async def update_service(request: Request, _: AuthToken, service_id: str) -> JSONResponse:
    """Enable or disable a service (with a reason), or force it down."""
    state = state_of(request)
    body = await read_body(request, ServiceUpdate)
    try:
        uuid.UUID(service_id)
    except ValueError:
        raise bad_request(f"Invalid uuid {service_id}") from None
    service = state.compute_services.get(service_id)
    if service is None:
        raise SimError(404, f"Service {service_id} could not be found.")
    if service.binary != "nova-compute":
        raise bad_request(
            f"Updating a {service.binary} service is not supported. "
            "Only nova-compute services can be updated."
        )
    if body.status == "enabled" and body.disabled_reason:
        raise bad_request("Specifying 'disabled_reason' with status 'enabled' is invalid.")
    if body.status is None and body.forced_down is None:
        raise bad_request(
            "No updates were requested. Fields 'status' or 'forced_down' should be specified."
        )
    if body.status is not None:
        service.status = body.status
        service.disabled_reason = body.disabled_reason if body.status == "disabled" else None
    if body.forced_down is not None:
        service.forced_down = body.forced_down
    service.updated_at = state.now()
    return JSONResponse({"service": to_json(service)})
