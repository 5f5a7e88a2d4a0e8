"""Nova's side of Cinder volumes: attach rules and server-create block device mappings.

Nova's `os-volume_attachments` and its server create (`block_device_mapping_v2`) use
these; the messages are Nova's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from simcloud.errors import SimError, bad_request
from simcloud.image.images import find_image
from simcloud.state import SimState
from simcloud.volume.schemas import Uuid, VolumeCreate
from simcloud.volume.volumes import attach, create_volume, delete_volume, detach, settle

NOVA_TRUE = ("True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes")
NOVA_FALSE = ("False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no")
#: Nova's `boolean` parameter type.
NovaBoolean = (
    StrictBool | Annotated[StrictStr, Field(pattern=f"^({'|'.join(NOVA_TRUE + NOVA_FALSE)})$")]
)
Name = Annotated[StrictStr, Field(max_length=255)]


def nova_bool(value: bool | str) -> bool:
    """A validated Nova boolean as a bool."""
    return value if isinstance(value, bool) else value in NOVA_TRUE


class BlockDeviceMapping(BaseModel):
    """One `block_device_mapping_v2` item, with Nova's schema."""

    model_config = ConfigDict(extra="forbid")

    source_type: Literal["volume", "image", "snapshot", "blank"] | None = None
    destination_type: Literal["local", "volume"] | None = None
    uuid: (
        Annotated[StrictStr, Field(min_length=1, max_length=255, pattern=r"^[a-zA-Z0-9._-]*$")]
        | None
    ) = None
    image_id: Uuid | None = None
    volume_id: Uuid | None = None
    snapshot_id: Uuid | None = None
    boot_index: StrictInt | Annotated[StrictStr, Field(pattern=r"^-?[0-9]+$")] | None = None
    volume_size: (
        Annotated[StrictInt, Field(ge=1)] | Annotated[StrictStr, Field(pattern=r"^[0-9]+$")] | None
    ) = None
    delete_on_termination: NovaBoolean = False
    device_name: Annotated[StrictStr, Field(min_length=1, max_length=255)] | None = None
    tag: Annotated[StrictStr, Field(min_length=1, max_length=60, pattern=r"^[^,/]*$")] | None = None
    volume_type: Name | None = None
    guest_format: Name | None = None
    device_type: Name | None = None
    disk_bus: Name | None = None
    no_device: object = None


@dataclass(frozen=True, slots=True)
class PlannedDevice:
    """A validated mapping: the local image disk, an existing volume, or a new one."""

    boot_index: int | None
    delete_on_termination: bool = False
    tag: str | None = None
    device_name: str | None = None
    #: Attach this existing volume.
    volume_id: str | None = None
    #: Make a volume of `size` GiB from this image (or blank when None).
    image_id: str | None = None
    size: int | None = None
    #: The image on the server's own root disk (no volume).
    local: bool = False


def bdm_error(details: str) -> SimError:
    """Nova's `InvalidBDM*` (400)."""
    return bad_request(f"Block Device Mapping is Invalid: {details}")


def check_attachable(state: SimState, volume_id: str) -> None:
    """Nova's 400s for a volume it cannot attach: already attached, or not `available`."""
    volume = state.volumes.volumes[volume_id]
    if volume.attachments:
        servers = " ".join(a.server_id for a in volume.attachments)
        raise bad_request(
            f"Invalid volume: volume {volume.id} is already attached to instances: {servers}"
        )
    if volume.status != "available":
        # Cinder refuses the reservation, and Nova passes its words on.
        raise bad_request(
            f"Invalid input received: Invalid volume: Volume {volume.id} status must be "
            f"available or downloading to reserve, but the current status is "
            f"{volume.status}. (HTTP 400)"
        )


def next_device(state: SimState, server_id: str) -> str:
    """The first free `/dev/vdX` after the root disk `/dev/vda`."""
    used = {a.device for a in state.volumes.by_server.get(server_id, {}).values()}
    for letter in "bcdefghijklmnopqrstuvwxyz":
        if f"/dev/vd{letter}" not in used:
            return f"/dev/vd{letter}"
    raise SimError(
        403,
        "The maximum allowed number of disk devices (26) to attach to a single instance "
        "has been exceeded.",
    )


def plan_block_devices(
    state: SimState, mappings: list[BlockDeviceMapping], image_ref: str | None
) -> list[PlannedDevice]:
    """Validate server create's `block_device_mapping_v2` as Nova does, or its 400."""
    devices = [_plan(state, m, bool(image_ref)) for m in mappings]
    if image_ref and not any(d.boot_index == 0 for d in devices):
        devices.insert(0, PlannedDevice(boot_index=0, image_id=image_ref, local=True))
    boot = sorted(d.boot_index for d in devices if d.boot_index is not None and d.boot_index >= 0)
    if not boot or any(i != v for i, v in enumerate(boot)):
        raise bdm_error(
            "Boot sequence for the instance and image/block device mapping combination "
            "is not valid."
        )
    return devices


def _plan(state: SimState, bdm: BlockDeviceMapping, image_given: bool) -> PlannedDevice:
    source, uuid = bdm.source_type, bdm.uuid
    if source == "blank" and uuid:
        raise bdm_error("Invalid device UUID.")
    if source != "blank" and not uuid:
        raise bdm_error("Missing device UUID.")
    boot = int(bdm.boot_index) if bdm.boot_index is not None else None
    local = source == "image" and bdm.destination_type == "local"
    if local and not (image_given and boot == 0):
        raise bdm_error("Mapping image to local is not supported.")
    size = int(bdm.volume_size) if bdm.volume_size is not None else None
    device = PlannedDevice(
        boot_index=boot,
        delete_on_termination=nova_bool(bdm.delete_on_termination),
        tag=bdm.tag,
        device_name=bdm.device_name,
    )
    if source == "image":
        if find_image(state, str(uuid)) is None:
            raise bdm_error(f"failed to get image {uuid}.")
        if not local and not size:
            raise bad_request(
                "Images with destination_type 'volume' need to have a non-zero size specified"
            )
        return replace(device, image_id=uuid, size=size, local=local)
    if source == "volume":
        return replace(device, volume_id=_volume(state, str(uuid), boot))
    if source == "snapshot":
        raise bdm_error(f"failed to get snapshot {uuid}.")
    if not size:
        raise bad_request(
            "Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size"
        )
    return replace(device, size=size)


def _volume(state: SimState, volume_id: str, boot: int | None) -> str:
    volume = state.volumes.volumes.get(volume_id)
    if volume is None or not settle(state, volume, state.now()):
        raise bdm_error(f"failed to get volume {volume_id}.")
    check_attachable(state, volume_id)
    if boot == 0 and not volume.bootable:
        raise bad_request(f"Block Device {volume_id} is not bootable.")
    return volume_id


def attach_block_devices(state: SimState, server_id: str, devices: list[PlannedDevice]) -> None:
    """Make the planned volumes and attach them to the new server (root at `/dev/vda`)."""
    for device in devices:
        if device.local:
            continue
        volume_id = device.volume_id
        if volume_id is None:
            body = VolumeCreate(size=device.size, imageRef=device.image_id)
            record = create_volume(state, body, state.user_id)
            record.status, record.pending = "available", None
            volume_id = record.id
        name = device.device_name or ("/dev/vda" if device.boot_index == 0 else None)
        attach(
            state,
            state.volumes.volumes[volume_id],
            server_id,
            name or next_device(state, server_id),
            tag=device.tag,
            delete_on_termination=device.delete_on_termination,
            boot_index=device.boot_index,
        )


def volumes_attached(state: SimState, server_id: str) -> list[dict[str, object]]:
    """A server's `os-extended-volumes:volumes_attached`."""
    mappings = state.volumes.by_server.get(server_id, {}).values()
    return [{"id": a.volume_id, "delete_on_termination": a.delete_on_termination} for a in mappings]


def release_volumes(state: SimState, server_id: str) -> None:
    """What Nova does to a deleted server's volumes: detach, and delete if asked."""
    now = state.now()
    for attachment in list(state.volumes.by_server.get(server_id, {}).values()):
        detach(state, attachment, now)
        volume = state.volumes.volumes.get(attachment.volume_id)
        if attachment.delete_on_termination and volume is not None:
            delete_volume(state, volume)
