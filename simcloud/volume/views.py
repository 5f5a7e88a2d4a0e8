"""Cinder v3.0's JSON shapes for volumes, attachments and volume types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from simcloud.volume.state import AttachmentRecord, VolumeRecord, VolumeType

#: Where devstack's LVM backend lives, as `os-vol-host-attr:host` shows it.
HOST = "simcloud@lvmdriver-1#lvmdriver-1"


def cinder_time(epoch: float | None) -> str | None:
    """Cinder's timestamp format (`2018-11-28T06:21:12.715987`, no zone)."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None).isoformat()


def links(base: str, project_id: str, collection: str, item_id: str) -> list[dict[str, str]]:
    """Cinder's self and bookmark links (`base` is the sim's base URL)."""
    return [
        {"href": f"{base}/volume/v3/{project_id}/{collection}/{item_id}", "rel": "self"},
        {"href": f"{base}/volume/{project_id}/{collection}/{item_id}", "rel": "bookmark"},
    ]


def summary(record: VolumeRecord, base: str) -> dict[str, Any]:
    """A volume in `GET /volumes`."""
    return {
        "id": record.id,
        "links": links(base, record.project_id, "volumes", record.id),
        "name": record.name,
    }


def attachment_json(attachment: AttachmentRecord) -> dict[str, Any]:
    """An attachment as a volume's `attachments` lists it."""
    return {
        "id": attachment.volume_id,
        "attachment_id": attachment.id,
        "volume_id": attachment.volume_id,
        "server_id": attachment.server_id,
        "host_name": None,
        "device": attachment.device,
        "attached_at": cinder_time(attachment.attached_at),
    }


def detail(record: VolumeRecord, base: str) -> dict[str, Any]:
    """A volume in show, create, update and `GET /volumes/detail`."""
    body: dict[str, Any] = {
        "attachments": [attachment_json(a) for a in record.attachments],
        "availability_zone": record.availability_zone,
        "bootable": str(record.bootable).lower(),
        "consistencygroup_id": None,
        "created_at": cinder_time(record.created_at),
        "description": record.description,
        "encrypted": False,
        "id": record.id,
        "links": links(base, record.project_id, "volumes", record.id),
        # Cinder shows the admin metadata `readonly` among the volume's metadata.
        "metadata": record.metadata
        | ({} if record.readonly is None else {"readonly": str(record.readonly)}),
        "migration_status": None,
        "multiattach": record.multiattach,
        "name": record.name,
        "os-vol-host-attr:host": None if record.status == "creating" else HOST,
        "os-vol-mig-status-attr:migstat": None,
        "os-vol-mig-status-attr:name_id": None,
        "os-vol-tenant-attr:tenant_id": record.project_id,
        "replication_status": None,
        "size": record.size,
        "snapshot_id": record.snapshot_id,
        "source_volid": record.source_volid,
        "status": record.status,
        "updated_at": cinder_time(record.updated_at),
        "user_id": record.user_id,
        "volume_type": record.volume_type.name,
    }
    if record.image_metadata is not None:
        body["volume_image_metadata"] = record.image_metadata
    return body


def volume_type_json(volume_type: VolumeType) -> dict[str, Any]:
    """A volume type as `GET /types` lists it."""
    return {
        "id": volume_type.id,
        "name": volume_type.name,
        "description": volume_type.description,
        "extra_specs": volume_type.extra_specs,
        "is_public": volume_type.is_public,
        "os-volume-type-access:is_public": volume_type.is_public,
        "qos_specs_id": None,
    }
