"""Cinder's default quotas: checked on create and extend, shown by `os-quota-sets`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from simcloud.errors import SimError

if TYPE_CHECKING:
    from simcloud.volume.state import VolumeRecord, VolumeType

#: Cinder's default quota classes (-1 is unlimited).
DEFAULTS = {
    "volumes": 10,
    "gigabytes": 1000,
    "snapshots": 10,
    "backups": 10,
    "backup_gigabytes": 1000,
    "groups": 10,
    "per_volume_gigabytes": -1,
}


def check_quota(volumes: Iterable[VolumeRecord], *, size: int, count: int) -> None:
    """413 when `count` more volumes or `size` more GiB would exceed the quotas.

    Gigabytes are checked first, as Cinder sorts the resources that are over.
    """
    existing = list(volumes)
    used_gb = sum(v.size for v in existing)
    if used_gb + size > DEFAULTS["gigabytes"]:
        raise SimError(
            413,
            f"Requested volume or snapshot exceeds allowed gigabytes quota. Requested "
            f"{size}G, quota is {DEFAULTS['gigabytes']}G and {used_gb}G has been consumed.",
        )
    if count and len(existing) + count > DEFAULTS["volumes"]:
        raise SimError(
            413,
            f"Maximum number of volumes allowed ({DEFAULTS['volumes']}) exceeded for quota "
            "'volumes'.",
        )


def quota_set(
    project_id: str,
    volumes: Iterable[VolumeRecord],
    types: Iterable[VolumeType],
    *,
    usage: bool,
) -> dict[str, Any]:
    """The project's `quota_set`, limits alone or with `in_use` and `reserved`."""
    existing = list(volumes)
    limits = dict(DEFAULTS)
    in_use = {"volumes": len(existing), "gigabytes": sum(v.size for v in existing)}
    for volume_type in types:
        of_type = [v for v in existing if v.volume_type.id == volume_type.id]
        for resource in ("volumes", "gigabytes", "snapshots"):
            limits[f"{resource}_{volume_type.name}"] = -1
        in_use[f"volumes_{volume_type.name}"] = len(of_type)
        in_use[f"gigabytes_{volume_type.name}"] = sum(v.size for v in of_type)
    body: dict[str, Any] = {"id": project_id}
    for key, limit in limits.items():
        body[key] = (
            {"in_use": in_use.get(key, 0), "limit": limit, "reserved": 0} if usage else limit
        )
    return {"quota_set": body}


def absolute_limits(volumes: Iterable[VolumeRecord]) -> dict[str, Any]:
    """`GET /limits`: the quotas and what the project uses of them."""
    existing = list(volumes)
    absolute = {
        "totalSnapshotsUsed": 0,
        "maxTotalBackups": DEFAULTS["backups"],
        "maxTotalVolumeGigabytes": DEFAULTS["gigabytes"],
        "maxTotalSnapshots": DEFAULTS["snapshots"],
        "maxTotalBackupGigabytes": DEFAULTS["backup_gigabytes"],
        "totalBackupGigabytesUsed": 0,
        "maxTotalVolumes": DEFAULTS["volumes"],
        "totalVolumesUsed": len(existing),
        "totalBackupsUsed": 0,
        "totalGigabytesUsed": sum(v.size for v in existing),
    }
    return {"limits": {"rate": [], "absolute": absolute}}
