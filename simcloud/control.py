"""Test and operator controls under `/sim`: summary, reset, bulk seed, clock, tokens."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.compute import Metadata
from simcloud.errors import read_body
from simcloud.notifications import notifier_of
from simcloud.servers import new_server, settle, status_of
from simcloud.state import isotime, state_of

router = APIRouter(prefix="/sim")


class SeedRequest(BaseModel):
    """`POST /sim/seed`: create many ACTIVE servers at once."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=1, le=100_000)
    name_prefix: Annotated[StrictStr, Field(min_length=1, max_length=200)] = "seed"
    image: Annotated[StrictStr, Field(min_length=1, max_length=255)] = "cirros"
    flavor: Annotated[StrictStr, Field(min_length=1, max_length=255)] = "m1.tiny"
    metadata: Metadata = Field(default_factory=dict)


class ClockRequest(BaseModel):
    """`POST /sim/clock`: move simulated time forward."""

    model_config = ConfigDict(extra="forbid")

    advance_s: float = Field(ge=0, le=10**8)


@router.get("/state")
async def summary(request: Request) -> Response:
    """Counts of servers by status, faults, tokens, queues and pools."""
    state = state_of(request)
    now = state.now()
    records = [r for r in list(state.servers.values()) if settle(state, r, now)]
    faults = Counter(r.fault.kind for r in records if r.fault is not None)
    return JSONResponse(
        {
            "servers": len(records),
            "by_status": dict(Counter(status_of(r) for r in records)),
            "faults": dict(faults),
            "locked": sum(r.locked for r in records),
            "tokens": len(state.tokens),
            "queues": {name: len(q) for name, q in state.queues.items()},
            "pools": len(state.pool_ids()),
            "notifications": len(notifier_of(request).sent),
            "now": isotime(now),
        }
    )


@router.post("/reset", status_code=204)
async def reset(request: Request) -> Response:
    """Forget everything (servers, tokens, queues, members, faults, notifications)."""
    state_of(request).reset()
    notifier_of(request).reset()
    return Response(status_code=204)


@router.post("/seed", status_code=201)
async def seed(request: Request) -> Response:
    """Create `count` ACTIVE servers named `<prefix>-<n>` without build latency."""
    body = await read_body(request, SeedRequest)
    state = state_of(request)
    start = len(state.servers)
    for n in range(start, start + body.count):
        name = f"{body.name_prefix}-{n}"
        record = new_server(state, name, body.image, body.flavor, body.metadata)
        record.task, record.vm_state = None, "active"
    return JSONResponse({"count": body.count, "servers": len(state.servers)}, status_code=201)


@router.post("/clock")
async def advance_clock(request: Request) -> Response:
    """Advance simulated time: transitions and token expiry happen without sleeping."""
    body = await read_body(request, ClockRequest)
    state = state_of(request)
    state.clock_offset += body.advance_s
    return JSONResponse({"now": isotime(state.now())})


@router.post("/tokens/revoke", status_code=204)
async def revoke_all_tokens(request: Request) -> Response:
    """Revoke every issued token (clients must re-authenticate)."""
    state_of(request).tokens.clear()
    return Response(status_code=204)


@router.get("/notifications")
async def notifications(request: Request) -> Response:
    """The latest notifications emitted, oldest first."""
    return JSONResponse({"notifications": list(notifier_of(request).sent)})
