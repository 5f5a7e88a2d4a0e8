"""Per-server application health, the target of `NODE_STATUS_POLL_URL` checks."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from simcloud.servers import settle, status_of
from simcloud.state import state_of

router = APIRouter(prefix="/sim/apps")


@router.get("/{server_name}/health", response_class=PlainTextResponse)
async def app_health(request: Request, server_name: str) -> PlainTextResponse:
    """200 `passing` while the newest server of that name is ACTIVE and not app-faulted.

    503 `failing` otherwise; 404 when no server has that name.
    """
    state = state_of(request)
    now = state.now()
    records = [state.servers[i] for i in state.by_name.get(server_name, set())]
    records = [r for r in records if settle(state, r, now) and r.vm_state != "deleted"]
    if not records:
        return PlainTextResponse(f"no server named {server_name}", status_code=404)
    record = max(records, key=lambda r: r.created_at)
    app_failing = record.fault is not None and record.fault.kind == "app_failing"
    if status_of(record) == "ACTIVE" and not app_failing:
        return PlainTextResponse("passing")
    return PlainTextResponse("failing", status_code=503)
