"""Glance v2 routes, under the catalog's `image` endpoint (`/image`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from simcloud.errors import SimError, bad_request
from simcloud.identity import AuthToken, base_url
from simcloud.image import members
from simcloud.image.images import (
    IMPORT_METHODS,
    begin_upload,
    deactivate,
    delete_image,
    get_image,
    glance_error,
    new_image,
    reactivate,
    start_import,
    to_json,
)
from simcloud.image.patch import apply_patch, parse_patch
from simcloud.image.query import page_links, parse_query, select
from simcloud.image.schema import TAG_QUOTA, check_tags, image_schema, images_schema
from simcloud.image.state import set_data
from simcloud.state import state_of

router = APIRouter(prefix="/image")

#: (version, status) in the order Glance lists them (no cache, one store).
VERSIONS = (
    ("2.15", "SUPPORTED"),
    ("2.9", "SUPPORTED"),
    ("2.17", "CURRENT"),
    *((f"2.{minor}", "SUPPORTED") for minor in range(7, -1, -1)),
)


def _versions(request: Request) -> dict[str, Any]:
    href = f"{base_url(request)}/image/v2/"
    return {
        "versions": [
            {"id": f"v{v}", "status": s, "links": [{"rel": "self", "href": href}]}
            for v, s in VERSIONS
        ]
    }


@router.get("")
@router.get("/")
async def image_root(request: Request) -> JSONResponse:
    """Glance's version discovery at the service root (300 Multiple Choices)."""
    return JSONResponse(_versions(request), status_code=300)


@router.get("/versions")
async def image_versions(request: Request) -> JSONResponse:
    """Glance's version list, asked for explicitly (200)."""
    return JSONResponse(_versions(request))


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise bad_request("Malformed JSON in request body.", style="glance") from exc


@router.post("/v2/images", status_code=201)
async def create_image(request: Request, token: AuthToken) -> JSONResponse:
    """Glance create: a `queued` image; upload or import its data next."""
    state = state_of(request)
    record = new_image(state, await _json_body(request), token.project_id)
    headers = {
        "Location": f"{base_url(request)}/image/v2/images/{record.id}",
        "OpenStack-image-import-methods": ",".join(IMPORT_METHODS),
    }
    return JSONResponse(to_json(record), status_code=201, headers=headers)


@router.get("/v2/images")
async def list_images(request: Request, _: AuthToken) -> JSONResponse:
    """Glance list: filters, `sort`, `limit`/`marker`, and `first`/`next` links."""
    state = state_of(request)
    query = parse_query(request.query_params)
    page, full = select(state.images.all(state.now()), query)
    body: dict[str, Any] = {"images": [to_json(r) for r in page], "schema": "/v2/schemas/images"}
    body |= page_links(request.query_params, page, full)
    return JSONResponse(body)


@router.get("/v2/images/{image_id}")
async def show_image(request: Request, image_id: str, _: AuthToken) -> JSONResponse:
    """Glance show."""
    return JSONResponse(to_json(get_image(state_of(request), image_id)))


@router.patch("/v2/images/{image_id}")
async def update_image(request: Request, image_id: str, _: AuthToken) -> JSONResponse:
    """Glance update with a JSON-patch body (`application/openstack-images-v2.1-json-patch`)."""
    state = state_of(request)
    changes = parse_patch(request.headers.get("content-type", ""), await _json_body(request))
    record = apply_patch(get_image(state, image_id), changes, state.now())
    state.images.images[image_id] = record
    return JSONResponse(to_json(record))


@router.delete("/v2/images/{image_id}", status_code=204)
async def remove_image(request: Request, image_id: str, _: AuthToken) -> Response:
    """Glance delete: 403 while protected; its members go with it."""
    state = state_of(request)
    delete_image(state, image_id)
    state.images.members.pop(image_id, None)
    return Response(status_code=204)


@router.put("/v2/images/{image_id}/file", status_code=204)
async def upload_image(request: Request, image_id: str, _: AuthToken) -> Response:
    """Glance upload: `saving` while the data streams in, then `active` with its hashes."""
    content_type = request.headers.get("content-type")
    if content_type != "application/octet-stream":
        raise SimError(415, f"Invalid content type {content_type}", style="glance")
    state = state_of(request)
    record = get_image(state, image_id)
    begin_upload(record, state.now())
    md5, sha512, size = hashlib.md5(usedforsecurity=False), hashlib.sha512(), 0
    finished = False
    try:
        # Hash the stream instead of keeping it: the data is never read back.
        async for chunk in request.stream():
            md5.update(chunk)
            sha512.update(chunk)
            size += len(chunk)
        finished = True
    finally:
        if not finished:
            record.status = "queued"
    if state.images.images.get(image_id) is not record:
        raise glance_error(
            410,
            f"Image {image_id} could not be found after upload. The image may have been "
            "deleted during the upload, cleaning up the chunks uploaded.",
        )
    set_data(record, size, md5.hexdigest(), sha512.hexdigest())
    record.updated_at = state.now()
    return Response(status_code=204)


@router.post("/v2/images/{image_id}/import", status_code=202)
async def import_image(request: Request, image_id: str, _: AuthToken) -> Response:
    """Glance interoperable import (`web-download` only; nothing is downloaded)."""
    state = state_of(request)
    body = await _json_body(request)
    method = _import_method(body)
    record = get_image(state, image_id)
    must_succeed = body.get("all_stores_must_succeed", True)
    start_import(state, record, method["name"], method.get("uri"), must_succeed=must_succeed)
    return Response(status_code=202)


def _import_method(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request("Body expected in request.", style="glance")
    method = body.get("method")
    if not isinstance(method, dict):
        raise bad_request("Import request requires a 'method' field.", style="glance")
    if "name" not in method:
        raise bad_request("Import request requires a 'name' field.", style="glance")
    if method["name"] not in IMPORT_METHODS:
        raise bad_request(f"Unknown import method name '{method['name']}'.", style="glance")
    for key in ("all_stores_must_succeed", "all_stores"):
        if not isinstance(body.get(key, True), bool):
            raise bad_request(f"'{key}' must be boolean value only", style="glance")
    return method


@router.get("/v2/schemas/image")
async def show_image_schema(_: AuthToken) -> JSONResponse:
    """The image JSON schema (python-glanceclient validates against it)."""
    return JSONResponse(image_schema())


@router.get("/v2/schemas/images")
async def show_images_schema(_: AuthToken) -> JSONResponse:
    """The image list JSON schema."""
    return JSONResponse(images_schema())


@router.get("/v2/info/import")
async def import_info(_: AuthToken) -> JSONResponse:
    """The import methods this Glance enables."""
    methods = {"description": "Import methods available.", "type": "array"}
    return JSONResponse({"import-methods": methods | {"value": list(IMPORT_METHODS)}})


@router.post("/v2/images/{image_id}/actions/deactivate", status_code=204)
async def deactivate_image(request: Request, image_id: str, _: AuthToken) -> Response:
    """Glance deactivate: the data is unavailable until reactivated."""
    state = state_of(request)
    deactivate(get_image(state, image_id), state.now())
    return Response(status_code=204)


@router.post("/v2/images/{image_id}/actions/reactivate", status_code=204)
async def reactivate_image(request: Request, image_id: str, _: AuthToken) -> Response:
    """Glance reactivate."""
    state = state_of(request)
    reactivate(get_image(state, image_id), state.now())
    return Response(status_code=204)


@router.put("/v2/images/{image_id}/tags/{tag_value}", status_code=204)
async def add_tag(request: Request, image_id: str, tag_value: str, _: AuthToken) -> Response:
    """Glance tag add (idempotent)."""
    state = state_of(request)
    check_tags([tag_value])
    record = state.images.get(image_id, state.now())
    if record is None:
        raise glance_error(404, f"Image {image_id} not found.")
    if tag_value not in record.tags and len(record.tags) >= TAG_QUOTA:
        raise glance_error(
            413,
            f"Image tag limit exceeded for image {image_id}: The limit has been exceeded on "
            f"the number of allowed image tags. Attempted: {len(record.tags) + 1}, "
            f"Maximum: {TAG_QUOTA}:",
        )
    record.tags.add(tag_value)
    record.updated_at = state.now()
    return Response(status_code=204)


@router.delete("/v2/images/{image_id}/tags/{tag_value}", status_code=204)
async def delete_tag(request: Request, image_id: str, tag_value: str, _: AuthToken) -> Response:
    """Glance tag delete: 404 when the image lacks the tag."""
    state = state_of(request)
    record = state.images.get(image_id, state.now())
    if record is None:
        raise glance_error(404, f"Image {image_id} not found.")
    if tag_value not in record.tags:
        raise glance_error(404, "The resource could not be found.")
    record.tags.discard(tag_value)
    record.updated_at = state.now()
    return Response(status_code=204)


router.include_router(members.router)
