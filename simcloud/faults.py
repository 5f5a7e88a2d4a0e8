"""Fault injection: broken servers that stay broken until cured, and a flaky API."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from simcloud.errors import SimError, error_body, read_body, style_for
from simcloud.identity import base_url
from simcloud.notifications import notifier_of
from simcloud.servers import live, to_json
from simcloud.state import ApiFaults, Fault, SimState, state_of

router = APIRouter(prefix="/sim")

FaultKind = Literal["shutoff", "error", "pause", "app_failing", "lb_offline", "vanish"]
#: Actions that may cure a fault; START and UNPAUSE are simcloud extensions.
Cure = Literal["REBOOT", "REBUILD", "RECREATE", "START", "UNPAUSE"]
#: kind → (vm_state the server is held in, notification emitted)
EFFECTS: dict[str, tuple[str | None, str | None]] = {
    "shutoff": ("stopped", "compute.instance.power_off.end"),
    "error": ("error", "compute.instance.rebuild.error"),
    "pause": ("paused", "compute.instance.pause.end"),
    "app_failing": (None, None),
    "lb_offline": (None, None),
    "vanish": (None, "compute.instance.soft_delete.end"),
}
OPENSTACK_PREFIXES = (
    "/identity",
    "/compute",
    "/messaging",
    "/load-balancer",
    "/networking",
    "/image",
    "/volume",
)
#: An injected error replaces the call ("before") or its answer ("after"); a "held"
#: call is carried out late and answered as usual.
FaultTiming = Literal["before", "after", "held"]


class FaultRequest(BaseModel):
    """`POST /sim/servers/{server_id}/fault` body."""

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    cured_by: Annotated[list[Cure], Field(min_length=1, max_length=5)] = [
        "REBOOT",
        "REBUILD",
        "RECREATE",
    ]


class ApiFaultRequest(BaseModel):
    """`POST /sim/api-faults` body; `error_rate` 0 turns errors off.

    `lost_response_rate` is the share of the errors answered *after* the call was
    carried out (a create that made its server, then answered 5xx); `hold_ms` turns
    the errors into calls held that long before they are carried out and answered as
    usual (a request queued upstream that lands after the client gave up); `match` limits
    errors to calls whose `"METHOD /path"` it matches; `max_errors` heals the API after
    that many errors (one-shot faults for tests).
    """

    model_config = ConfigDict(extra="forbid")

    error_rate: float = Field(0.0, ge=0.0, le=1.0)
    status: int = Field(503, ge=400, le=599)
    latency_ms: int = Field(0, ge=0, le=60_000)
    lost_response_rate: float = Field(0.0, ge=0.0, le=1.0)
    hold_ms: int = Field(0, ge=0, le=600_000)
    match: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    max_errors: int | None = Field(None, ge=1, le=1_000_000)

    @field_validator("match")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"match is not a regular expression: {exc}") from exc
        return value


def _fault_json(fault: Fault | None) -> dict[str, Any] | None:
    return None if fault is None else {"kind": fault.kind, "cured_by": list(fault.cured_by)}


@router.post("/servers/{server_id}/fault")
async def inject_fault(request: Request, server_id: str) -> Response:
    """Break a server; shutoff/error/pause hold it in SHUTOFF/ERROR/PAUSED until cured."""
    state = state_of(request)
    body = await read_body(request, FaultRequest)
    record = live(state, server_id)
    if record.vm_state == "deleted":
        raise SimError(409, f"Instance {server_id} is being deleted")
    vm_state, event = EFFECTS[body.kind]
    now = state.now()
    if body.kind == "vanish":
        state.drop_server(server_id)
        notifier_of(request).emit("compute.instance.soft_delete.end", record, "soft-delete")
        return JSONResponse({"server": None, "fault": {"kind": "vanish"}})
    record.fault = Fault(body.kind, tuple(body.cured_by))
    record.updated_at = now
    if vm_state is not None:
        record.task = None
        record.vm_state = vm_state
    if event is not None:
        notifier_of(request).emit(event, record, record.vm_state)
    server = to_json(record, base_url(request))
    return JSONResponse({"server": server, "fault": _fault_json(record.fault)})


@router.get("/servers/{server_id}/fault")
async def show_fault(request: Request, server_id: str) -> Response:
    """The fault a server carries, or null."""
    record = live(state_of(request), server_id)
    return JSONResponse({"fault": _fault_json(record.fault)})


@router.delete("/servers/{server_id}/fault", status_code=204)
async def clear_fault(request: Request, server_id: str) -> Response:
    """Forget a fault without curing its effects (the server keeps its status)."""
    live(state_of(request), server_id).fault = None
    return Response(status_code=204)


@router.post("/api-faults")
async def set_api_faults(request: Request) -> Response:
    """Make the OpenStack APIs slow and/or fail a fraction of calls."""
    body = await read_body(request, ApiFaultRequest)
    state = state_of(request)
    state.api_faults = ApiFaults(
        body.error_rate,
        body.status,
        body.latency_ms,
        body.lost_response_rate,
        body.hold_ms,
        re.compile(body.match) if body.match is not None else None,
        body.max_errors,
    )
    return JSONResponse(_api_faults_json(state.api_faults))


@router.get("/api-faults")
async def show_api_faults(request: Request) -> Response:
    """The flaky-API settings in force (`errors_left`: before the API heals, or null)."""
    return JSONResponse(_api_faults_json(state_of(request).api_faults))


def _api_faults_json(faults: ApiFaults) -> dict[str, Any]:
    return {
        "error_rate": faults.error_rate,
        "status": faults.status,
        "latency_ms": faults.latency_ms,
        "lost_response_rate": faults.lost_response_rate,
        "hold_ms": faults.hold_ms,
        "match": faults.match.pattern if faults.match is not None else None,
        "errors_left": faults.errors_left,
    }


def draw_api_fault(state: SimState, method: str, path: str) -> FaultTiming | None:
    """Whether this call fails, and whether before or after it is carried out."""
    faults = state.api_faults
    if not faults.error_rate or faults.errors_left == 0:
        return None
    if faults.match is not None and not faults.match.search(f"{method} {path}"):
        return None
    if state.rng.random() >= faults.error_rate:
        return None
    if faults.errors_left is not None:
        faults.errors_left -= 1
    if faults.hold_ms:
        return "held"
    # Drawn only when asked for, so seeded runs without lost responses keep their sequence.
    lost = faults.lost_response_rate > 0 and state.rng.random() < faults.lost_response_rate
    return "after" if lost else "before"


async def _discard(_: Message) -> None:
    """Swallow a response: the caller gets the injected error instead."""


class ApiFaultMiddleware:
    """Applies `/sim/api-faults` to the OpenStack routes, never to `/sim/*`."""

    def __init__(self, app: ASGIApp, state: SimState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(OPENSTACK_PREFIXES):
            await self.app(scope, receive, send)
            return
        faults = self.state.api_faults
        if faults.latency_ms:
            await asyncio.sleep(faults.latency_ms / 1000)
        timing = draw_api_fault(self.state, scope.get("method", ""), path)
        if timing is None:
            await self.app(scope, receive, send)
            return
        if timing == "held":
            await self._held(scope, receive, send, faults.hold_ms)
            return
        if timing == "after":
            await self.app(scope, receive, _discard)
        body = error_body(faults.status, "Simulated API fault", style_for(path))
        await JSONResponse(body, status_code=faults.status)(scope, receive, send)

    async def _held(self, scope: Scope, receive: Receive, send: Send, hold_ms: int) -> None:
        """Take the whole request now, carry it out `hold_ms` later, whether or not the
        client is still there (its answer then goes nowhere)."""
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        await asyncio.sleep(hold_ms / 1000)

        async def replay() -> Message:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        await self.app(scope, replay, send)
