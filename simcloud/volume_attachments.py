"""Nova's `os-volume_attachments` (microversion 2.79 shapes): attach Cinder volumes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from simcloud.errors import SimError, bad_request, read_body
from simcloud.identity import AuthToken
from simcloud.servers import live
from simcloud.state import ServerRecord, SimState, state_of
from simcloud.volume.block_devices import NovaBoolean, check_attachable, next_device, nova_bool
from simcloud.volume.schemas import Uuid
from simcloud.volume.state import AttachmentRecord
from simcloud.volume.volumes import attach, detach, live_volume

router = APIRouter(prefix="/compute/v2.1")

#: vm_states in which Nova attaches and detaches volumes.
ATTACHABLE = ("active", "paused", "stopped")
DEVICE = r"(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$"


class VolumeAttachmentCreate(BaseModel):
    """Nova's `volumeAttachment` for attach (2.79)."""

    model_config = ConfigDict(extra="forbid")

    volumeId: Uuid  # noqa: N815 - Nova's key
    device: Annotated[StrictStr, Field(pattern=DEVICE)] | None = None
    tag: Annotated[StrictStr, Field(min_length=1, max_length=60, pattern=r"^[^,/]*$")] | None = None
    delete_on_termination: NovaBoolean = False


class VolumeAttachmentCreateBody(BaseModel):
    """`POST /servers/{server_id}/os-volume_attachments` body."""

    model_config = ConfigDict(extra="forbid")

    volumeAttachment: VolumeAttachmentCreate  # noqa: N815


def check_server(record: ServerRecord, action: str) -> None:
    """Nova's 409s for a locked server or one busy or in a state that forbids `action`."""
    if record.locked:
        raise SimError(409, f"Instance {record.id} is locked")
    if record.task is not None:
        raise SimError(
            409,
            f"Cannot '{action}' instance {record.id} while it is in task_state "
            f"{record.task.task_state}",
        )
    if record.vm_state not in ATTACHABLE:
        raise SimError(
            409, f"Cannot '{action}' instance {record.id} while it is in vm_state {record.vm_state}"
        )


def attachment_view(attachment: AttachmentRecord) -> dict[str, Any]:
    """A volume attachment as Nova 2.79 shows it (its id is the volume's)."""
    return {
        "delete_on_termination": attachment.delete_on_termination,
        "device": attachment.device,
        "id": attachment.volume_id,
        "serverId": attachment.server_id,
        "tag": attachment.tag,
        "volumeId": attachment.volume_id,
    }


def _mapping(state: SimState, server_id: str, volume_id: str) -> AttachmentRecord:
    found = state.volumes.by_server.get(server_id, {}).get(volume_id)
    if found is None:
        raise SimError(404, f"Instance {server_id} is not attached to volume {volume_id}")
    return found


@router.get("/servers/{server_id}/os-volume_attachments")
async def list_attachments(request: Request, server_id: str, _: AuthToken) -> JSONResponse:
    """The server's volume attachments (`limit`, `offset`)."""
    state = state_of(request)
    live(state, server_id)
    mappings = list(state.volumes.by_server.get(server_id, {}).values())
    offset, limit = (_count(request, key) for key in ("offset", "limit"))
    page = mappings[offset or 0 :][: limit or 1000]
    return JSONResponse({"volumeAttachments": [attachment_view(a) for a in page]})


def _count(request: Request, key: str) -> int | None:
    raw = request.query_params.get(key)
    if raw is None:
        return None
    if not raw.isdigit():
        raise bad_request(
            f"Invalid input for query parameters {key}. Value: {raw}. "
            f"'{raw}' does not match '^[0-9]*$'"
        )
    return int(raw)


@router.post("/servers/{server_id}/os-volume_attachments")
async def attach_volume(request: Request, server_id: str, _: AuthToken) -> JSONResponse:
    """Attach a Cinder volume: it turns `in-use`; `device` defaults to the next `vdX`."""
    state = state_of(request)
    body = (await read_body(request, VolumeAttachmentCreateBody)).volumeAttachment
    server = live(state, server_id)
    check_server(server, "attach_volume")
    volume = live_volume(state, body.volumeId)
    check_attachable(state, volume.id)
    device = body.device or next_device(state, server_id)
    mappings = state.volumes.by_server.get(server_id, {}).values()
    if any(a.device == device for a in mappings):
        raise SimError(409, f"The supplied device path ({device}) is in use.")
    attachment = attach(
        state,
        volume,
        server_id,
        device,
        tag=body.tag,
        delete_on_termination=nova_bool(body.delete_on_termination),
    )
    return JSONResponse({"volumeAttachment": attachment_view(attachment)})


@router.get("/servers/{server_id}/os-volume_attachments/{volume_id}")
async def show_attachment(
    request: Request, server_id: str, volume_id: str, _: AuthToken
) -> JSONResponse:
    """One attachment, by the volume's id."""
    state = state_of(request)
    live(state, server_id)
    return JSONResponse(
        {"volumeAttachment": attachment_view(_mapping(state, server_id, volume_id))}
    )


@router.delete("/servers/{server_id}/os-volume_attachments/{volume_id}", status_code=202)
async def detach_volume(request: Request, server_id: str, volume_id: str, _: AuthToken) -> Response:
    """Detach: the volume is `available` again."""
    state = state_of(request)
    server = live(state, server_id)
    live_volume(state, volume_id)
    attachment = _mapping(state, server_id, volume_id)
    if attachment.boot_index == 0:
        raise bad_request("Cannot detach a root device volume")
    check_server(server, "detach_volume")
    detach(state, attachment, state.now())
    return Response(status_code=202)
