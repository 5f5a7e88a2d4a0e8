"""Glance image members (`/v2/images/{id}/members`): a shared image offered to projects.

Only an image whose visibility is `shared` has members (403 otherwise, Glance's words);
a member is added once (409 for the same project again), starts `pending` until that
project accepts it, and is removed by its project id (404 when it is not a member).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.errors import bad_request
from simcloud.identity import AuthToken
from simcloud.image.images import get_image, glance_error
from simcloud.image.state import ImageRecord, Member
from simcloud.state import SimState, isotime, state_of

router = APIRouter(prefix="/v2/images/{image_id}/members")
SCHEMA = "/v2/schemas/member"


def _json(member: Member) -> dict[str, Any]:
    return {
        "image_id": member.image_id,
        "member_id": member.member_id,
        "status": member.status,
        "created_at": isotime(member.created_at),
        "updated_at": isotime(member.updated_at),
        "schema": SCHEMA,
    }


def _shared(state: SimState, image_id: str) -> ImageRecord:
    record = get_image(state, image_id)
    if record.visibility != "shared":
        raise glance_error(403, "Only shared images have members.")
    return record


def _members(state: SimState, image_id: str) -> dict[str, Member]:
    return state.images.members.setdefault(image_id, {})


@router.get("")
async def list_members(request: Request, image_id: str, _: AuthToken) -> Response:
    """The image's members."""
    state = state_of(request)
    _shared(state, image_id)
    members = [_json(m) for m in _members(state, image_id).values()]
    return JSONResponse({"members": members, "schema": "/v2/schemas/members"})


@router.post("")
async def add_member(request: Request, image_id: str, _: AuthToken) -> Response:
    """Share the image with a project (`{"member": <project id>}`)."""
    state = state_of(request)
    try:
        body = await request.json()
    except ValueError as exc:
        raise bad_request("Malformed request body") from exc
    member_id = body.get("member") if isinstance(body, dict) else None
    if not isinstance(member_id, str) or not member_id:
        raise bad_request("Member to be added not specified")
    _shared(state, image_id)
    members = _members(state, image_id)
    if member_id in members:
        raise glance_error(409, f"Member {member_id} already exists")
    now = state.now()
    members[member_id] = Member(image_id, member_id, now, now)
    return JSONResponse(_json(members[member_id]))


@router.get("/{member_id}")
async def show_member(request: Request, image_id: str, member_id: str, _: AuthToken) -> Response:
    """One member (404 when the project is not one)."""
    state = state_of(request)
    _shared(state, image_id)
    found = _members(state, image_id).get(member_id)
    if found is None:
        raise glance_error(404, f"{member_id} is not a member of image {image_id}")
    return JSONResponse(_json(found))


@router.delete("/{member_id}", status_code=204)
async def delete_member(request: Request, image_id: str, member_id: str, _: AuthToken) -> Response:
    """Stop sharing the image with a project."""
    state = state_of(request)
    _shared(state, image_id)
    if _members(state, image_id).pop(member_id, None) is None:
        raise glance_error(404, f"{member_id} is not a member of image {image_id}")
    return Response(status_code=204)
