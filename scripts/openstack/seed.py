"""The objects Warden's conformance stage expects: flavors, an image, two networks."""

from __future__ import annotations

import struct
import urllib.parse

from scripts.openstack.rest import Cloud, Json

IMAGE_NAME = "cirros-0.6.2-x86_64-disk"
#: id -> (name, ram MiB, vCPUs, disk GiB), as DevStack numbers them.
FLAVORS = {"1": ("m1.tiny", 512, 1, 1), "2": ("m1.small", 2048, 1, 20)}


def tiny_qcow2(virtual_size: int = 1 << 30) -> bytes:
    """An empty but valid qcow2 (v2, 64 KiB clusters): Glance inspects what it stores.

    Four clusters, as qemu-img lays them out: header, refcount table, one refcount
    block (counting these four clusters) and an all-zero L1 table.
    """
    cluster = 1 << 16
    l1_entries = max(1, -(-virtual_size // (cluster * (cluster // 8))))
    header = struct.pack(
        ">4sIQIIQIIQQIIQ",
        b"QFI\xfb",
        2,
        0,
        0,
        16,
        virtual_size,
        0,
        l1_entries,
        3 * cluster,
        cluster,
        1,
        0,
        0,
    )
    refcount_table = struct.pack(">Q", 2 * cluster)
    refcount_block = struct.pack(">4H", 1, 1, 1, 1)
    parts = [header, refcount_table, refcount_block, b""]
    return b"".join(part.ljust(cluster, b"\0") for part in parts)


def _first(cloud: Cloud, service: str, path: str, key: str, **query: str) -> Json | None:
    found = cloud.get(service, f"{path}?{urllib.parse.urlencode(query)}")[key]
    return found[0] if found else None


def seed_flavors(admin: Cloud) -> dict[str, str]:
    existing = admin.get("compute", "/flavors/detail?is_public=None")["flavors"]
    names = {flavor["name"]: flavor["id"] for flavor in existing}
    for flavor_id, (name, ram, vcpus, disk) in FLAVORS.items():
        if name not in names:
            body = {
                "flavor": {"id": flavor_id, "name": name, "ram": ram, "vcpus": vcpus, "disk": disk}
            }
            names[name] = admin.post("compute", "/flavors", body)["flavor"]["id"]
    return {name: names[name] for name, *_ in FLAVORS.values()}


def seed_image(admin: Cloud) -> str:
    found = _first(admin, "image", "/v2/images", "images", name=IMAGE_NAME)
    if found is not None and found["status"] == "active":
        return str(found["id"])
    if found is None:
        body = {
            "name": IMAGE_NAME,
            "disk_format": "qcow2",
            "container_format": "bare",
            "visibility": "public",
            "os_distro": "cirros",
        }
        found = admin.post("image", "/v2/images", body)
    admin.upload(f"{admin.endpoint('image')}/v2/images/{found['id']}/file", tiny_qcow2())
    return str(found["id"])


def _ensure(admin: Cloud, kind: str, name: str, body: Json) -> Json:
    existing = _first(admin, "network", f"/v2.0/{kind}s", f"{kind}s", name=name)
    if existing is not None:
        return existing
    return dict(admin.post("network", f"/v2.0/{kind}s", {kind: {"name": name, **body}})[kind])


def seed_networks(admin: Cloud, demo_project: str) -> dict[str, str]:
    """`public` (external, flat), `private` (demo's), a router joining them."""
    public = _ensure(
        admin,
        "network",
        "public",
        {
            "router:external": True,
            "provider:network_type": "flat",
            "provider:physical_network": "public",
        },
    )
    public_subnet = _ensure(
        admin,
        "subnet",
        "public-subnet",
        {
            "network_id": public["id"],
            "ip_version": 4,
            "cidr": "172.24.4.0/24",
            "gateway_ip": "172.24.4.1",
            "enable_dhcp": False,
            "allocation_pools": [{"start": "172.24.4.10", "end": "172.24.4.250"}],
        },
    )
    private = _ensure(admin, "network", "private", {"project_id": demo_project})
    private_subnet = _ensure(
        admin,
        "subnet",
        "private-subnet",
        {
            "network_id": private["id"],
            "ip_version": 4,
            "cidr": "10.0.0.0/16",
            "gateway_ip": "10.0.0.1",
            "project_id": demo_project,
        },
    )
    router = _ensure(
        admin,
        "router",
        "router1",
        {
            "project_id": demo_project,
            "external_gateway_info": {"network_id": public["id"]},
        },
    )
    query = urllib.parse.urlencode({"device_id": router["id"], "network_id": private["id"]})
    if not admin.get("network", f"/v2.0/ports?{query}")["ports"]:
        path = f"/v2.0/routers/{router['id']}/add_router_interface"
        admin.put("network", path, {"subnet_id": private_subnet["id"]})
    return {
        "public_network_id": public["id"],
        "public_subnet_id": public_subnet["id"],
        "private_network_id": private["id"],
        "private_subnet_id": private_subnet["id"],
        "router_id": router["id"],
    }
