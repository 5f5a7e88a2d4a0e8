"""Nova's create body from a `ServerRequest`: names looked up to ids, as Heat and Senlin do.

Nova takes ids: an image, a flavor, a network's `uuid`, a `port`, a volume in a block
device mapping. Templates and profiles say `image: cirros`, `network: private`; this
module asks Glance, Nova and Neutron which ids those names are. A name matching
nothing is a 400 ("Unable to find image with name or id 'x'"), two matches a 409.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from typing import Any, Final

from activities.cloud.collections import CollectionClient, collection
from activities.cloud.reads import read
from domain.servers import NetworkRequest, ServerRequest

#: Kinds whose name → id answers are kept a while: images and flavors change rarely,
#: and Heat memoizes the same lookups (its client plugins' finder cache).
CACHED_KINDS: Final = frozenset({"image", "flavor"})
CACHE_TTL_S: Final = 60.0

#: `block_device_mapping_v2` keys naming an object, by `source_type`.
_BDM_SOURCES = {"volume": "volume", "image": "image", "snapshot": None, "blank": None}


class IdCache:
    """Name → id answers of image and flavor lookups, each kept `ttl_s` seconds."""

    def __init__(self, ttl_s: float = CACHE_TTL_S) -> None:
        self._ttl_s = ttl_s
        self._ids: dict[tuple[str, str], tuple[float, str]] = {}

    def get(self, kind: str, ref: str) -> str | None:
        """The cached id, if fresh."""
        found = self._ids.get((kind, ref))
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def put(self, kind: str, ref: str, object_id: str) -> None:
        """Remember an answer (only for the kinds worth caching)."""
        if kind in CACHED_KINDS:
            self._ids[(kind, ref)] = (time.monotonic() + self._ttl_s, object_id)


async def find_id(
    objects: CollectionClient, kind: str, ref: str, cache: IdCache | None = None
) -> str:
    """The id of the `kind` whose id or unique name is `ref` (from `cache` when fresh)."""
    cached = cache.get(kind, ref) if cache is not None else None
    if cached is not None:
        return cached
    found = str((await read(lambda: objects.find(collection(kind), ref)))["id"])
    if cache is not None:
        cache.put(kind, ref, found)
    return found


async def _nic(objects: CollectionClient, nic: NetworkRequest) -> dict[str, Any]:
    if nic.port:
        return {"port": await find_id(objects, "port", nic.port)}
    item: dict[str, Any] = {}
    if nic.network:
        item["uuid"] = await find_id(objects, "network", nic.network)
    elif nic.subnet:
        # Nova takes no subnet: the subnet's network, and its address when one is given.
        subnet = await objects.find(collection("subnet"), nic.subnet)
        item["uuid"] = str(subnet["network_id"])
    if nic.fixed_ip:
        item["fixed_ip"] = nic.fixed_ip
    if nic.tag:
        item["tag"] = nic.tag
    return item


async def networks_body(
    objects: CollectionClient,
    networks: tuple[NetworkRequest, ...] | str | None,
    own_ports: Mapping[int, str] | None = None,
) -> Any:
    """Nova's `networks` member: "auto", "none", or one entry per NIC (a port Warden
    made for a NIC, from `own_ports`, is passed as that port)."""
    if networks is None:
        return "auto"
    if isinstance(networks, str):
        return networks
    made = own_ports or {}
    return [
        {"port": made[i]} if i in made else await _nic(objects, nic)
        for i, nic in enumerate(networks)
    ]


async def _bdm(objects: CollectionClient, mapping: dict[str, Any]) -> dict[str, Any]:
    entry = dict(mapping)
    kind = _BDM_SOURCES.get(str(entry.get("source_type")))
    if kind is not None and entry.get("uuid"):
        entry["uuid"] = await find_id(objects, kind, str(entry["uuid"]))
    return entry


async def boot_extras(
    objects: CollectionClient, request: ServerRequest, own_ports: Mapping[int, str] | None = None
) -> dict[str, Any]:
    """Every member of Nova's `server` object beyond name, image, flavor and metadata."""
    networks = await networks_body(objects, request.networks, own_ports)
    extra: dict[str, Any] = {"networks": networks}
    optional = {
        "key_name": request.key_name,
        "availability_zone": request.availability_zone,
        "config_drive": request.config_drive,
        "adminPass": request.admin_pass,
    }
    extra |= {k: v for k, v in optional.items() if v is not None}
    if request.user_data:
        extra["user_data"] = base64.b64encode(request.user_data.encode()).decode()
    if request.security_groups:
        extra["security_groups"] = [{"name": g} for g in request.security_groups]
    if request.block_device_mapping_v2:
        extra["block_device_mapping_v2"] = [
            await _bdm(objects, m) for m in request.block_device_mapping_v2
        ]
    if request.tags:
        extra["tags"] = list(request.tags)
    return extra


async def image_and_flavor(
    objects: CollectionClient, request: ServerRequest, cache: IdCache | None = None
) -> tuple[str, str]:
    """Nova's `imageRef` ("" to boot from a volume) and `flavorRef`."""
    image = await find_id(objects, "image", request.image, cache) if request.image else ""
    return image, await find_id(objects, "flavor", request.flavor, cache)
