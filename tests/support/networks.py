"""What a floating IP on simcloud's project network needs: a router to `public`."""

from __future__ import annotations

from activities.cloud import CloudSession
from activities.cloud.collections import collection


async def route_private_to_public(cloud: CloudSession) -> None:
    """A router from the project network `private` to the external network `public`."""
    objects = cloud.collections
    public = await objects.find(collection("network"), "public")
    subnet = await objects.find(collection("subnet"), "private-subnet")
    router = await objects.create(
        collection("router"), {"name": "r1", "external_gateway_info": {"network_id": public["id"]}}
    )
    body = {"subnet_id": subnet["id"]}
    await objects.action(collection("router"), router["id"], "PUT", "/add_router_interface", body)
