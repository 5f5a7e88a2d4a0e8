"""Cinder's volume rules: create from nothing, an image or a volume; status transitions."""

from __future__ import annotations

import math
import uuid
from typing import Any

from simcloud.errors import SimError, bad_request
from simcloud.image.images import find_image, images_named
from simcloud.image.state import ImageRecord
from simcloud.state import SimState
from simcloud.volume.quotas import check_quota
from simcloud.volume.schemas import VolumeCreate, VolumeUpdate, to_bool
from simcloud.volume.state import AttachmentRecord, Pending, VolumeRecord, VolumeType

GIB = 1024**3
DELETABLE = ("available", "error", "error_restoring", "error_extending", "error_managing")
MULTIATTACH_REMOVED = (
    "multiattach parameter has been removed. The default behavior is to use multiattach "
    "enabled volume types. Contact your administrator to create a multiattach enabled "
    "volume type and use it to create multiattach volumes."
)


def invalid_input(reason: str) -> SimError:
    """Cinder's `InvalidInput` (400)."""
    return bad_request(f"Invalid input received: {reason}")


def invalid_volume(reason: str) -> SimError:
    """Cinder's `InvalidVolume` (400)."""
    return bad_request(f"Invalid volume: {reason}")


def settle(state: SimState, record: VolumeRecord, now: float) -> bool:
    """Finish a due transition, release attachments of deleted servers; False once gone."""
    for attachment in list(record.attachments):
        server = state.servers.get(attachment.server_id)
        if server is None or server.vm_state == "deleted":
            # Nova detaches (and, if asked, deletes) a deleted server's volumes.
            detach(state, attachment, now)
            if attachment.delete_on_termination:
                _start(record, "deleting", now, None, state.volumes.latency_s)
    pending = record.pending
    if pending is None or now < pending.done_at:
        return True
    record.pending, record.updated_at = None, pending.done_at
    if pending.after is None:
        del state.volumes.volumes[record.id]
        return False
    record.status = pending.after
    if pending.new_size is not None:
        record.size = pending.new_size
    return True


def live_volume(state: SimState, volume_id: str) -> VolumeRecord:
    """The settled volume, or Cinder's 404."""
    record = state.volumes.volumes.get(volume_id)
    if record is None or not settle(state, record, state.now()):
        raise SimError(404, f"Volume {volume_id} could not be found.")
    return record


def all_volumes(state: SimState) -> list[VolumeRecord]:
    """Every volume that still exists, settled."""
    now = state.now()
    return [r for r in list(state.volumes.volumes.values()) if settle(state, r, now)]


def _start(
    record: VolumeRecord,
    status: str,
    now: float,
    after: str | None,
    delay: float,
    new_size: int | None = None,
) -> None:
    record.status, record.updated_at = status, now
    record.pending = Pending(now + delay, after, new_size)


def create_volume(state: SimState, body: VolumeCreate, user_id: str) -> VolumeRecord:
    """Cinder create: validated like Cinder's API and flow, `creating` then `available`."""
    volume_type = _volume_type(state, body.volume_type)
    if body.snapshot_id is not None:
        raise SimError(404, f"Snapshot {body.snapshot_id} could not be found.")
    source = live_volume(state, body.source_volid) if body.source_volid is not None else None
    if body.consistencygroup_id is not None:
        raise SimError(404, f"Group {body.consistencygroup_id} could not be found.")
    image_ref = body.imageRef if body.imageRef is not None else body.image_id
    image = _image_from_ref(state, image_ref) if image_ref is not None else None
    if body.multiattach is not None and to_bool(body.multiattach):
        raise bad_request(MULTIATTACH_REMOVED)
    size = _size(body.size, source)
    if image is not None:
        _check_image(image, size)
    zone = body.availability_zone or (source.availability_zone if source else "nova")
    if zone != "nova":
        raise bad_request(f"Availability zone '{zone}' is invalid.")
    check_quota(all_volumes(state), size=size, count=1)
    now = state.now()
    record = VolumeRecord(
        id=str(uuid.uuid4()),
        name=body.name if "name" in body.model_fields_set else body.display_name,
        description=body.description
        if "description" in body.model_fields_set
        else body.display_description,
        size=size,
        volume_type=volume_type,
        project_id=state.project_id,
        user_id=user_id,
        created_at=now,
        bootable=image is not None or (source is not None and source.bootable),
        metadata=dict(body.metadata or {}),
        source_volid=body.source_volid,
        image_metadata=_image_metadata(image) if image is not None else None,
    )
    _start(record, "creating", now, "available", state.volumes.latency_s)
    record.updated_at = None
    state.volumes.volumes[record.id] = record
    return record


def _volume_type(state: SimState, name_or_id: str | None) -> VolumeType:
    if not name_or_id:
        return state.volumes.default_type()
    found = state.volumes.type_named(name_or_id)
    if found is None:
        try:
            uuid.UUID(name_or_id)
        except ValueError:
            raise SimError(404, f"Volume type with name {name_or_id} could not be found.") from None
        raise SimError(404, f"Volume type {name_or_id} could not be found.")
    return found


def _image_from_ref(state: SimState, image_ref: str) -> ImageRecord:
    # Cinder takes an id (or a URL ending in one) first, then an exact, unique name.
    image = find_image(state, image_ref)
    if image is not None:
        return image
    named = images_named(state, image_ref)
    if len(named) > 1:
        raise SimError(
            409, f"Multiple matches found for '{image_ref}', use an ID to be more specific."
        )
    if not named:
        raise bad_request("Invalid image identifier or unable to access requested image.")
    return named[0]


def _size(raw: int | str | None, source: VolumeRecord | None) -> int:
    if raw is not None and int(raw) <= 0:
        raise invalid_input(
            f"Invalid volume size provided for create request: {raw} (size argument must be "
            "an integer (or string representation of an integer) and greater than zero)."
        )
    if source is not None and source.status not in ("available", "in-use"):
        raise invalid_volume(
            "Originating source volume status must be one of 'available, in-use' values"
        )
    size = int(raw) if raw is not None else (source.size if source is not None else None)
    if size is None:
        raise invalid_input("Volume size 'None' must be an integer and greater than 0")
    if source is not None and size < source.size:
        raise invalid_input(
            f"Volume size '{size}'GB cannot be smaller than original volume size  "
            f"{source.size}GB. They must be >= original volume size."
        )
    return size


def _check_image(image: ImageRecord, size: int) -> None:
    if image.status != "active":
        raise invalid_input(f"Image {image.id} is not active.")
    image_gb = ((image.size or 0) + GIB - 1) // GIB
    if image_gb > size:
        raise invalid_input(
            f"Size of specified image {image_gb}GB is larger than volume size {size}GB."
        )
    if size < image.min_disk:
        raise invalid_input(
            f"Volume size {size}GB cannot be smaller than the image minDisk size "
            f"{image.min_disk}GB."
        )
    virtual_gb = math.ceil((image.virtual_size or 0) / GIB)
    if virtual_gb > size:
        raise bad_request(
            f"Image {image.id} is unacceptable: Image virtual size is {virtual_gb}GB and "
            f"doesn't fit in a volume of size {size}GB."
        )


def _image_metadata(image: ImageRecord) -> dict[str, Any]:
    # Cinder keeps Glance's view of the image as strings (volume_glance_metadata).
    meta = {
        "image_id": image.id,
        "image_name": image.name,
        "checksum": image.checksum,
        "container_format": image.container_format,
        "disk_format": image.disk_format,
        "min_disk": str(image.min_disk),
        "min_ram": str(image.min_ram),
        "size": str(image.size),
    }
    return dict(image.properties) | {k: v for k, v in meta.items() if v is not None}


def update_volume(record: VolumeRecord, body: VolumeUpdate, now: float) -> None:
    """Cinder update: name, description, and metadata (replaced whole)."""
    given = body.model_fields_set
    if "name" in given or "display_name" in given:
        record.name = body.name if "name" in given else body.display_name
    if "description" in given or "display_description" in given:
        description = body.description if "description" in given else body.display_description
        record.description = description
    if body.metadata is not None:
        record.metadata = dict(body.metadata)
    record.updated_at = now


def extend_volume(state: SimState, record: VolumeRecord, new_size: int) -> None:
    """Cinder `os-extend` (before 3.42, so `available` volumes only)."""
    if new_size <= record.size:
        raise invalid_input(
            "New size for extend must be greater than current size. "
            f"(current: {record.size}, extended: {new_size})."
        )
    if record.status != "available":
        raise invalid_volume(
            f"Volume {record.id} status must be '{{'status': 'available'}}' to extend, "
            f"currently {record.status}."
        )
    check_quota(all_volumes(state), size=new_size - record.size, count=0)
    _start(record, "extending", state.now(), "available", state.volumes.latency_s, new_size)


def retype_volume(state: SimState, record: VolumeRecord, new_type: str) -> None:
    """Cinder `os-retype` (`migration_policy: never`: simcloud's types share one backend,
    so no migration is needed): `retyping`, then the status it had."""
    found = _volume_type(state, new_type)
    if found.id == record.volume_type.id:
        raise invalid_input(f"New volume_type same as original: {found.id}.")
    if record.status not in ("available", "in-use"):
        raise invalid_volume(
            "Retype needs volume to be in available or in-use state, not be part of an "
            "active migration or a consistency group, requested type has to be different "
            "that the one from the volume, and for in-use volumes front-end qos specs "
            "cannot change."
        )
    record.volume_type = found
    _start(record, "retyping", state.now(), record.status, state.volumes.latency_s)


def delete_volume(state: SimState, record: VolumeRecord) -> None:
    """Cinder delete: `deleting`, then gone; 400 while attached or busy."""
    if record.status not in DELETABLE or record.attachments:
        raise invalid_volume(
            f"Volume status must be {' or '.join(DELETABLE)} and must not be migrating, "
            "attached, belong to a group, have snapshots, awaiting a transfer, or be "
            "disassociated from snapshots after volume transfer."
        )
    _start(record, "deleting", state.now(), None, state.volumes.latency_s)


def attach(
    state: SimState, record: VolumeRecord, server_id: str, device: str, **bdm: Any
) -> AttachmentRecord:
    """Attach an `available` volume to a server: it turns `in-use`."""
    now = state.now()
    attachment = AttachmentRecord(str(uuid.uuid4()), record.id, server_id, device, now, **bdm)
    state.volumes.attach(attachment)
    record.status, record.updated_at = "in-use", now
    return attachment


def detach(state: SimState, attachment: AttachmentRecord, now: float) -> None:
    """Detach; the volume is `available` again once nothing holds it."""
    state.volumes.detach(attachment)
    record = state.volumes.volumes.get(attachment.volume_id)
    if record is not None and not record.attachments and record.status == "in-use":
        record.status, record.updated_at = "available", now
