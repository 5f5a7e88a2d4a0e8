"""The `standard-attr-tag` sub-resource: `/v2.0/{collection}/{id}/tags[/{tag}]`.

Status codes are those of `neutron.extensions.tagging` (a tag added with PUT answers
201, a tag confirmed with GET 204). Each change counts as a revision of the tagged
record. A port's create body may carry tags too (`tag-creation`, Neutron 29); every
other create refuses them ("Attribute 'tags' not allowed in POST"), so a client tags
those after the create, as Heat's `set_tags` does.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.identity import AuthToken
from simcloud.network.bodies import MAX_TAGS, read_json
from simcloud.network.exceptions import bad_request, fault, invalid_input, policy_denied
from simcloud.network.records import MEMBER_NAMES, touch, visible
from simcloud.network.state import Record
from simcloud.state import SimState, state_of

router = APIRouter(prefix="/v2.0/{collection}/{resource_id}/tags")

#: URL collection → the collection's name in `NetworkState`.
TAGGED = {
    "networks": "networks",
    "subnets": "subnets",
    "ports": "ports",
    "routers": "routers",
    "floatingips": "floatingips",
    "security-groups": "security_groups",
    "security-group-rules": "security_group_rules",
    "trunks": "trunks",
}
MAX_TAG_LENGTH = 255


def _record(state: SimState, collection: str, resource_id: str, project_id: str) -> Record:
    name = TAGGED.get(collection)
    if name is None:
        raise fault("HTTPNotFound", message="The resource could not be found.")
    record = state.network.collection(name).get(resource_id)
    if record is None or not visible(state.network, name, record, project_id):
        raise fault("TagResourceNotFound", resource=name, resource_id=resource_id)
    return record


def _changeable(
    state: SimState, collection: str, resource_id: str, project_id: str, action: str
) -> Record:
    record = _record(state, collection, resource_id, project_id)
    if record["project_id"] != project_id:
        raise policy_denied(f"{action}_{MEMBER_NAMES[TAGGED[collection]]}:tags")
    return record


def _check_tag(tag: Any) -> str:
    if not isinstance(tag, str):
        raise invalid_input(f"'{tag}' is not a valid string")
    if len(tag) > MAX_TAG_LENGTH:
        raise invalid_input(f"'{tag}' exceeds maximum length of {MAX_TAG_LENGTH}")
    return tag


def _set_tags(state: SimState, record: Record, collection: str, tags: list[str]) -> None:
    if len(set(tags)) > MAX_TAGS:
        msg = f"The number of tags exceed the per-resource limit of {MAX_TAGS}"
        raise bad_request(TAGGED[collection], msg)
    record["tags"] = tags
    touch(state, record)


async def _tags_body(request: Request) -> list[str]:
    body = await read_json(request)
    if not isinstance(body, dict) or not isinstance(body.get("tags"), list):
        raise invalid_input("Invalid tags body")
    tags = [_check_tag(t) for t in body["tags"]]
    duplicates = sorted({t for t in tags if tags.count(t) > 1})
    if duplicates:
        raise invalid_input(f"Duplicate items in the list: '{', '.join(duplicates)}'")
    return tags


@router.get("")
async def list_tags(
    request: Request, collection: str, resource_id: str, token: AuthToken
) -> Response:
    """Obtain the tags of a resource."""
    record = _record(state_of(request), collection, resource_id, token.project_id)
    return JSONResponse({"tags": list(record["tags"])})


@router.get("/{tag}", status_code=204)
async def confirm_tag(
    request: Request, collection: str, resource_id: str, tag: str, token: AuthToken
) -> Response:
    """204 when the resource has the tag, 404 TagNotFound otherwise."""
    record = _record(state_of(request), collection, resource_id, token.project_id)
    if _check_tag(tag) not in record["tags"]:
        raise fault("TagNotFound", tag=tag)
    return Response(status_code=204)


@router.put("/{tag}", status_code=201)
async def add_tag(
    request: Request, collection: str, resource_id: str, tag: str, token: AuthToken
) -> Response:
    """Add one tag (idempotent)."""
    state = state_of(request)
    record = _changeable(state, collection, resource_id, token.project_id, "update")
    if _check_tag(tag) not in record["tags"]:
        _set_tags(state, record, collection, [*record["tags"], tag])
    return Response(status_code=201)


@router.put("")
async def replace_tags(
    request: Request, collection: str, resource_id: str, token: AuthToken
) -> Response:
    """Replace every tag of the resource."""
    state = state_of(request)
    record = _changeable(state, collection, resource_id, token.project_id, "update")
    tags = await _tags_body(request)
    _set_tags(state, record, collection, tags)
    return JSONResponse({"tags": tags})


@router.post("", status_code=201)
async def create_tags(
    request: Request, collection: str, resource_id: str, token: AuthToken
) -> Response:
    """Add several tags, keeping those already there."""
    state = state_of(request)
    record = _changeable(state, collection, resource_id, token.project_id, "create")
    tags = await _tags_body(request)
    added = [t for t in tags if t not in record["tags"]]
    _set_tags(state, record, collection, [*record["tags"], *added])
    return JSONResponse({"tags": tags}, status_code=201)


@router.delete("/{tag}", status_code=204)
async def remove_tag(
    request: Request, collection: str, resource_id: str, tag: str, token: AuthToken
) -> Response:
    """Remove one tag; 404 TagNotFound when the resource lacks it."""
    state = state_of(request)
    record = _changeable(state, collection, resource_id, token.project_id, "delete")
    if tag not in record["tags"]:
        raise fault("TagNotFound", tag=tag)
    _set_tags(state, record, collection, [t for t in record["tags"] if t != tag])
    return Response(status_code=204)


@router.delete("", status_code=204)
async def remove_tags(
    request: Request, collection: str, resource_id: str, token: AuthToken
) -> Response:
    """Remove every tag."""
    state = state_of(request)
    record = _changeable(state, collection, resource_id, token.project_id, "delete")
    _set_tags(state, record, collection, [])
    return Response(status_code=204)
