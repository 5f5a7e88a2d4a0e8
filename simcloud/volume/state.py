"""What one simcloud's Cinder holds: volumes, volume types and attachments.

A volume's transitional status (`creating`, `extending`, `deleting`) is a `Pending`
with a completion time, settled lazily when the volume is read, like a server's task.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simcloud.config import SimConfig

#: Devstack's `default_volume_type`.
DEFAULT_TYPE_NAME = "lvmdriver-1"


@dataclass(frozen=True, slots=True)
class VolumeType:
    """A Cinder volume type."""

    id: str
    name: str
    description: str | None
    extra_specs: dict[str, str]
    is_public: bool = True


def _type(name: str, description: str | None, extra_specs: dict[str, str]) -> VolumeType:
    type_id = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.volume-type"))
    return VolumeType(type_id, name, description, extra_specs)


#: Cinder's built-in type, and the one devstack creates for its LVM backend.
VOLUME_TYPES = (
    _type("__DEFAULT__", "Default Volume Type", {}),
    _type(DEFAULT_TYPE_NAME, None, {"volume_backend_name": DEFAULT_TYPE_NAME}),
)


@dataclass(slots=True)
class Pending:
    """A transition in progress: the volume's status holds until `done_at`, then `after`."""

    done_at: float
    #: The status once done; None means the volume is then gone (a delete).
    after: str | None
    #: A size applied when done (an extend).
    new_size: int | None = None


@dataclass(slots=True)
class AttachmentRecord:
    """A volume attached to a server: Cinder's attachment plus Nova's BDM fields."""

    id: str
    volume_id: str
    server_id: str
    device: str
    attached_at: float
    tag: str | None = None
    delete_on_termination: bool = False
    #: 0 for a server's root (boot) volume, which Nova will not detach.
    boot_index: int | None = None


@dataclass(slots=True)
class VolumeRecord:
    """One Cinder volume, in Cinder's words."""

    id: str
    name: str | None
    description: str | None
    size: int
    volume_type: VolumeType
    project_id: str
    user_id: str
    created_at: float
    status: str = "available"
    availability_zone: str = "nova"
    bootable: bool = False
    multiattach: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    snapshot_id: str | None = None
    source_volid: str | None = None
    #: Glance's view of the source image (`volume_image_metadata`), when built from one.
    image_metadata: dict[str, Any] | None = None
    updated_at: float | None = None
    pending: Pending | None = None
    attachments: list[AttachmentRecord] = field(default_factory=list)
    #: Cinder's admin metadata `readonly` (`os-update_readonly_flag`); None: never set.
    readonly: bool | None = None


class VolumeState:
    """Volumes by id, attachments by server, and the volume types."""

    def __init__(self, config: SimConfig) -> None:
        self.volumes: dict[str, VolumeRecord] = {}
        #: server id → volume id → attachment (Nova's block device mappings).
        self.by_server: dict[str, dict[str, AttachmentRecord]] = {}
        self.types = {t.id: t for t in VOLUME_TYPES}
        self.latency_s = config.volume_latency_ms / 1000

    def type_named(self, name_or_id: str) -> VolumeType | None:
        """A volume type by id, else by name (as Cinder's `get_by_name_or_id`)."""
        found = self.types.get(name_or_id)
        if found is None:
            found = next((t for t in self.types.values() if t.name == name_or_id), None)
        return found

    def default_type(self) -> VolumeType:
        """The type of volumes created without one."""
        found = self.type_named(DEFAULT_TYPE_NAME)
        assert found is not None
        return found

    def attach(self, record: AttachmentRecord) -> None:
        """Index a new attachment on its volume and its server."""
        self.volumes[record.volume_id].attachments.append(record)
        self.by_server.setdefault(record.server_id, {})[record.volume_id] = record

    def detach(self, record: AttachmentRecord) -> None:
        """Forget an attachment on both sides."""
        volume = self.volumes.get(record.volume_id)
        if volume is not None:
            volume.attachments = [a for a in volume.attachments if a.id != record.id]
        mappings = self.by_server.get(record.server_id, {})
        mappings.pop(record.volume_id, None)
        if not mappings:
            self.by_server.pop(record.server_id, None)
