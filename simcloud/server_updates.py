"""Nova's in-place server updates: rename (`PUT /servers/{id}`), metadata
(`GET`/`PUT`/`POST /servers/{id}/metadata`) and tags (`/servers/{id}/tags`, 2.26), as
Heat's server update calls them.

Nova refuses a metadata change on a locked server (409, `check_instance_lock`) but not a
rename; a server being deleted is a 409 for both.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

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


Tag = Annotated[StrictStr, Field(min_length=1, max_length=60, pattern=r"^[^,/]*$")]


class TagsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tags: Annotated[list[Tag], Field(max_length=50)]


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


#: vm_states in which Nova changes a server's tags (`server_tags._check_instance_in_valid_state`).
_TAGGABLE = frozenset({"active", "paused", "resized", "stopped"})


def _taggable(state: SimState, server_id: str) -> ServerRecord:
    record = live(state, server_id)
    if record.vm_state not in _TAGGABLE:
        raise SimError(
            409,
            f"Cannot 'update tags' instance {server_id} while it is in vm_state {record.vm_state}",
        )
    return record


@router.get("/servers/{server_id}/tags")
async def show_tags(request: Request, server_id: str, _: AuthToken) -> Response:
    """The server's tags."""
    return dumps({"tags": live(state_of(request), server_id).tags})


@router.put("/servers/{server_id}/tags")
async def replace_tags(request: Request, server_id: str, _: AuthToken) -> Response:
    """Replace every tag (Nova's `update_all`)."""
    state = state_of(request)
    body = await read_body(request, TagsBody)
    record = _taggable(state, server_id)
    record.tags = list(dict.fromkeys(body.tags))
    record.updated_at = state.now()
    return dumps({"tags": record.tags})


@router.delete("/servers/{server_id}/tags", status_code=204)
async def delete_tags(request: Request, server_id: str, _: AuthToken) -> Response:
    """Remove every tag."""
    state = state_of(request)
    record = _taggable(state, server_id)
    record.tags = []
    record.updated_at = state.now()
    return Response(status_code=204)


@router.put("/servers/{server_id}/tags/{tag}")
async def add_tag(request: Request, server_id: str, tag: str, _: AuthToken) -> Response:
    """Add one tag: 201 when new, 204 when the server has it already."""
    state = state_of(request)
    if not 0 < len(tag) <= 60 or "," in tag or "/" in tag:
        raise SimError(
            400, f"Tag '{tag}' is invalid. It must be 1 to 60 characters without ',' or '/'."
        )
    record = _taggable(state, server_id)
    if tag in record.tags:
        return Response(status_code=204)
    if len(record.tags) >= 50:
        raise SimError(400, "The number of tags exceeded the per-server limit 50")
    record.tags = [*record.tags, tag]
    record.updated_at = state.now()
    return Response(status_code=201)


@router.delete("/servers/{server_id}/tags/{tag}", status_code=204)
async def delete_tag(request: Request, server_id: str, tag: str, _: AuthToken) -> Response:
    """Remove one tag (404 when the server has not got it)."""
    state = state_of(request)
    record = _taggable(state, server_id)
    if tag not in record.tags:
        raise SimError(404, f"Tag {tag} could not be found.")
    record.tags = [t for t in record.tags if t != tag]
    record.updated_at = state.now()
    return Response(status_code=204)
