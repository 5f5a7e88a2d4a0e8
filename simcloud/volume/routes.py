"""Cinder v3 routes, under the catalog's `volumev3` endpoint (`/volume/v3/{project_id}`).

Shapes are those of microversion 3.0, the only one this Cinder announces.
"""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from simcloud.errors import ModelT, SimError, bad_request, describe, read_body
from simcloud.identity import base_url, require_token
from simcloud.state import SimState, Token, state_of
from simcloud.volume.query import select_volumes
from simcloud.volume.quotas import absolute_limits, quota_set
from simcloud.volume.schemas import (
    ExtendBody,
    ReadonlyFlagBody,
    RetypeBody,
    SetBootableBody,
    VolumeCreateBody,
    VolumeUpdateBody,
    to_bool,
)
from simcloud.volume.views import detail, summary, volume_type_json
from simcloud.volume.volumes import (
    all_volumes,
    create_volume,
    delete_volume,
    extend_volume,
    live_volume,
    retype_volume,
    update_volume,
)

router = APIRouter(prefix="/volume")


def _version(request: Request) -> dict[str, Any]:
    return {
        "id": "v3.0",
        "links": [
            {"href": "https://docs.openstack.org/", "rel": "describedby", "type": "text/html"},
            {"href": f"{base_url(request)}/volume/v3/", "rel": "self"},
        ],
        "media-types": [
            {
                "base": "application/json",
                "type": "application/vnd.openstack.volume+json;version=3",
            }
        ],
        "min_version": "3.0",
        "status": "CURRENT",
        "updated": "2016-02-08T12:20:21Z",
        "version": "3.0",
    }


@router.get("")
@router.get("/")
async def volume_root(request: Request) -> JSONResponse:
    """Cinder's version discovery at the service root (300 Multiple Choices)."""
    return JSONResponse({"versions": [_version(request)]}, status_code=300)


@router.get("/v3")
@router.get("/v3/")
async def volume_v3(request: Request) -> JSONResponse:
    """Cinder's v3 version document."""
    return JSONResponse({"versions": [_version(request)]})


def _scoped(request: Request, project_id: str) -> SimState:
    # Cinder refuses a URL naming another project than the token's.
    token: Token = require_token(request)
    if project_id != token.project_id:
        raise bad_request("Malformed request url")
    return state_of(request)


Scoped = Annotated[SimState, Depends(_scoped)]
PREFIX = "/v3/{project_id}"


@router.post(PREFIX + "/volumes", status_code=202)
async def create(request: Request, state: Scoped) -> JSONResponse:
    """Cinder create: `creating`, then `available` after the volume latency."""
    body = (await read_body(request, VolumeCreateBody)).volume
    record = create_volume(state, body, require_token(request).user_id)
    return JSONResponse({"volume": detail(record, base_url(request))}, status_code=202)


def _list(request: Request, state: SimState, project_id: str, path: str) -> dict[str, Any]:
    page = select_volumes(all_volumes(state), request.query_params)
    view = detail if path.endswith("detail") else summary
    body: dict[str, Any] = {"volumes": [view(r, base_url(request)) for r in page.volumes]}
    if page.next_marker is not None:
        query = urlencode(dict(request.query_params) | {"marker": page.next_marker})
        href = f"{base_url(request)}/volume/v3/{project_id}/{path}?{query}"
        body["volumes_links"] = [{"href": href, "rel": "next"}]
    return body


@router.get(PREFIX + "/volumes")
async def list_volumes(request: Request, project_id: str, state: Scoped) -> JSONResponse:
    """Cinder list: ids, names and links."""
    return JSONResponse(_list(request, state, project_id, "volumes"))


@router.get(PREFIX + "/volumes/detail")
async def list_volumes_detail(request: Request, project_id: str, state: Scoped) -> JSONResponse:
    """Cinder detail list, filtered by `name`, `status`, `metadata`, ..."""
    return JSONResponse(_list(request, state, project_id, "volumes/detail"))


@router.get(PREFIX + "/volumes/{volume_id}")
async def show(request: Request, volume_id: str, state: Scoped) -> JSONResponse:
    """Cinder show."""
    return JSONResponse({"volume": detail(live_volume(state, volume_id), base_url(request))})


@router.put(PREFIX + "/volumes/{volume_id}")
async def update(request: Request, volume_id: str, state: Scoped) -> JSONResponse:
    """Cinder update: name, description, metadata."""
    body = (await read_body(request, VolumeUpdateBody)).volume
    record = live_volume(state, volume_id)
    update_volume(record, body, state.now())
    return JSONResponse({"volume": detail(record, base_url(request))})


@router.delete(PREFIX + "/volumes/{volume_id}", status_code=202)
async def delete(volume_id: str, state: Scoped) -> Response:
    """Cinder delete: `deleting`, then 404."""
    delete_volume(state, live_volume(state, volume_id))
    return Response(status_code=202)


@router.post(PREFIX + "/volumes/{volume_id}/action")
async def action(request: Request, volume_id: str, state: Scoped) -> Response:
    """Cinder volume actions: `os-extend`, `os-retype`, `os-update_readonly_flag` (202)
    and `os-set_bootable` (200)."""
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError as exc:
        raise bad_request("Malformed request body") from exc
    if not isinstance(body, dict) or len(body) != 1:
        raise bad_request("Malformed request body: too many body keys")
    if "os-extend" in body:
        extend = _parse(ExtendBody, body).os_extend
        extend_volume(state, live_volume(state, volume_id), int(extend.new_size))
        return Response(status_code=202)
    if "os-retype" in body:
        retype = _parse(RetypeBody, body).os_retype
        retype_volume(state, live_volume(state, volume_id), retype.new_type)
        return Response(status_code=202)
    if "os-update_readonly_flag" in body:
        flag = to_bool(_parse(ReadonlyFlagBody, body).os_update_readonly_flag.readonly)
        record = live_volume(state, volume_id)
        if record.status != "available":
            raise bad_request(
                f"Invalid volume: Volume {record.id} status must be available to update "
                f"readonly flag, but current status is: {record.status}."
            )
        record.readonly, record.updated_at = flag, state.now()
        return Response(status_code=202)
    if "os-set_bootable" in body:
        bootable = to_bool(_parse(SetBootableBody, body).os_set_bootable.bootable)
        record = live_volume(state, volume_id)
        record.bootable, record.updated_at = bootable, state.now()
        return Response(status_code=200)
    raise bad_request(f"There is no such action: {next(iter(body))}")


def _parse(model: type[ModelT], body: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise bad_request(describe(exc)) from exc


@router.get(PREFIX + "/types")
async def list_types(state: Scoped) -> JSONResponse:
    """Cinder volume types."""
    types = [volume_type_json(t) for t in state.volumes.types.values()]
    return JSONResponse({"volume_types": types})


@router.get(PREFIX + "/types/default")
async def default_type(state: Scoped) -> JSONResponse:
    """The type volumes get when created without one."""
    return JSONResponse({"volume_type": volume_type_json(state.volumes.default_type())})


@router.get(PREFIX + "/types/{volume_type_id}")
async def show_type(volume_type_id: str, state: Scoped) -> JSONResponse:
    """One volume type, by id."""
    found = state.volumes.types.get(volume_type_id)
    if found is None:
        raise SimError(404, f"Volume type {volume_type_id} could not be found.")
    return JSONResponse({"volume_type": volume_type_json(found)})


@router.get(PREFIX + "/os-quota-sets/{target_project_id}")
async def show_quotas(request: Request, target_project_id: str, state: Scoped) -> JSONResponse:
    """The project's quotas; `?usage=true` adds what is in use."""
    usage = to_bool(request.query_params.get("usage", "false"))
    volumes = all_volumes(state) if target_project_id == state.project_id else []
    types = state.volumes.types.values()
    return JSONResponse(quota_set(target_project_id, volumes, types, usage=usage))


@router.get(PREFIX + "/os-quota-sets/{target_project_id}/defaults")
async def default_quotas(target_project_id: str, state: Scoped) -> JSONResponse:
    """The default quotas."""
    types = state.volumes.types.values()
    return JSONResponse(quota_set(target_project_id, [], types, usage=False))


@router.get(PREFIX + "/limits")
async def show_limits(state: Scoped) -> JSONResponse:
    """Cinder's absolute limits (its quotas) and their usage."""
    return JSONResponse(absolute_limits(all_volumes(state)))
