"""What one simcloud's Glance holds: image records by id, seeded from the config."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simcloud.config import SimConfig

#: Devstack uploads CirrOS 0.6.2 (qcow2): its file size and virtual size in bytes.
SEED_SIZE = 21_430_272
SEED_VIRTUAL_SIZE = 117_440_512
#: The project owning seeded images: devstack's `admin` uploads them.
SEED_OWNER = uuid.uuid5(uuid.NAMESPACE_DNS, "admin.project").hex


def seeded_image_id(name: str) -> str:
    """The stable id of the seeded image called `name` (tests can compute it)."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, name))


@dataclass(slots=True)
class ImageRecord:
    """One Glance image, in Glance's words (base attributes plus extra properties)."""

    id: str
    owner: str
    created_at: float
    updated_at: float
    name: str | None = None
    status: str = "queued"
    visibility: str = "shared"
    protected: bool = False
    os_hidden: bool = False
    min_disk: int = 0
    min_ram: int = 0
    disk_format: str | None = None
    container_format: str | None = None
    size: int | None = None
    virtual_size: int | None = None
    checksum: str | None = None
    os_hash_algo: str | None = None
    os_hash_value: str | None = None
    tags: set[str] = field(default_factory=set)
    #: Additional properties: string values only, flattened into the image's JSON.
    properties: dict[str, str] = field(default_factory=dict)
    #: When a running `web-download` import turns the image `active` (settled on read).
    import_done_at: float | None = None
    #: The URI being imported; its digest stands in for the data never downloaded.
    import_uri: str | None = None

    def copy(self) -> ImageRecord:
        """A copy whose tags and properties may change without touching this one."""
        return replace(self, tags=set(self.tags), properties=dict(self.properties))


def set_data(record: ImageRecord, size: int, md5: str, sha512: str) -> None:
    """Record uploaded (or imported) data: the image turns `active`."""
    record.size = size
    record.virtual_size = None
    record.checksum = md5
    record.os_hash_algo = "sha512"
    record.os_hash_value = sha512
    record.status = "active"


@dataclass(slots=True)
class Member:
    """One project an image is shared with (`/v2/images/{id}/members`)."""

    image_id: str
    member_id: str
    created_at: float
    updated_at: float
    status: str = "pending"


class ImageState:
    """Images by id; deleted images are dropped (Glance then answers 404)."""

    def __init__(self, config: SimConfig) -> None:
        self.images: dict[str, ImageRecord] = {}
        #: image id → member (project) id → member
        self.members: dict[str, dict[str, Member]] = {}
        self.import_latency_s = config.import_latency_ms / 1000
        now = time.time()
        for name in config.images:
            self.images[seeded_image_id(name)] = _seed(name, now)

    def get(self, image_id: str, now: float) -> ImageRecord | None:
        """The image with a due import finished, or None when there is none."""
        record = self.images.get(image_id)
        if record is not None:
            finish_import(record, now)
        return record

    def all(self, now: float) -> list[ImageRecord]:
        """Every image, due imports finished."""
        for record in self.images.values():
            finish_import(record, now)
        return list(self.images.values())


def finish_import(record: ImageRecord, now: float) -> None:
    """Turn an `importing` image `active` once its import latency has passed."""
    done = record.import_done_at
    if done is None or now < done:
        return
    data = (record.import_uri or record.id).encode()
    set_data(
        record,
        SEED_SIZE,
        hashlib.md5(data, usedforsecurity=False).hexdigest(),
        hashlib.sha512(data).hexdigest(),
    )
    record.import_done_at = None
    record.import_uri = None
    record.properties.pop("os_glance_import_task", None)
    record.updated_at = done


def _seed(name: str, now: float) -> ImageRecord:
    record = ImageRecord(
        id=seeded_image_id(name),
        owner=SEED_OWNER,
        created_at=now,
        updated_at=now,
        name=name,
        visibility="public",
        disk_format="qcow2",
        container_format="bare",
    )
    data = name.encode()
    set_data(
        record,
        SEED_SIZE,
        hashlib.md5(data, usedforsecurity=False).hexdigest(),
        hashlib.sha512(data).hexdigest(),
    )
    record.virtual_size = SEED_VIRTUAL_SIZE
    return record
