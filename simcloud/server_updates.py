"""Nova's in-place server updates: rename (`PUT /servers/{id}`) and metadata
(`GET`/`PUT`/`POST /servers/{id}/metadata`), as Heat's server update calls them.

Nova refuses a metadata change on a locked server (409, `check_instance_lock`) but not a
rename; a server being deleted is a 409 for both.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict

from simcloud.compute import Metadata, Text, dumps
from simcloud.errors import SimError, read_body
from simcloud.identity import AuthToken, base_url
from simcloud.servers import live, to_json
from simcloud.state import ServerRecord, SimState, state_of

router = APIRouter(prefix="/compute/v2.1")


class ServerUpdate(BaseModel):
    """What `PUT /servers/{id}` may change (Nova's `update` schema, in part)."""

    model_config = ConfigDict(extra="forbid")

    name: Text | None = None
    description: Text | None = None


class ServerUpdateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: ServerUpdate


class MetadataBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metadata: Metadata


def _changeable(state: SimState, server_id: str, *, metadata: bool) -> ServerRecord:
    record = live(state, server_id)
    if record.vm_state == "deleted":
        raise SimError(409, f"Cannot update instance {server_id} while it is being deleted")
    if metadata and record.locked:
        raise SimError(409, f"Instance {server_id} is locked")
    return record


@router.put("/servers/{server_id}")
async def update_server(request: Request, server_id: str, _: AuthToken) -> Response:
    """Rename a server (or change its description)."""
    state = state_of(request)
    body = (await read_body(request, ServerUpdateBody)).server
    record = _changeable(state, server_id, metadata=False)
    if body.name is not None:
        state.rename(record, body.name)
    if body.description is not None:
        record.static = record.static | {"description": body.description}
    record.updated_at = state.now()
    return dumps({"server": to_json(record, base_url(request))})


@router.get("/servers/{server_id}/metadata")
async def show_metadata(request: Request, server_id: str, _: AuthToken) -> Response:
    """The server's metadata."""
    return dumps({"metadata": live(state_of(request), server_id).metadata})


@router.put("/servers/{server_id}/metadata")
async def replace_metadata(request: Request, server_id: str, _: AuthToken) -> Response:
    """Replace every metadata item."""
    return await _set_metadata(request, server_id, merge=False)


@router.post("/servers/{server_id}/metadata")
async def merge_metadata(request: Request, server_id: str, _: AuthToken) -> Response:
    """Add or change metadata items, keeping the others."""
    return await _set_metadata(request, server_id, merge=True)


async def _set_metadata(request: Request, server_id: str, *, merge: bool) -> Response:
    state = state_of(request)
    body = await read_body(request, MetadataBody)
    record = _changeable(state, server_id, metadata=True)
    # Replaced, never mutated: `to_json_text` caches on the dict's identity.
    record.metadata = {**record.metadata, **body.metadata} if merge else dict(body.metadata)
    record.updated_at = state.now()
    return dumps({"metadata": record.metadata})
