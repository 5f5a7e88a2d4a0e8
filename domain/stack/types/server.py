"""`OS::Nova::Server`: one server; a new image is a rebuild, a new flavor a replacement."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.hot.properties import ResourceType, prop
from domain.servers import ServerInfo, ServerRequest

NAME: Final = "OS::Nova::Server"

TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "name": prop("string"),
        "image": prop("string", required=True, update_allowed=True),
        "flavor": prop("string", required=True),
        "metadata": prop("map"),
    },
    attributes=frozenset({"name", "addresses", "networks", "show"}),
    can_lock=True,
)


def server_request(
    stack_name: str, stack_id: str, resource: str, props: Mapping[str, Any], resource_id: str
) -> ServerRequest:
    """The create request; the resource id is its request id (a retried create finds it)."""
    metadata = {str(k): str(v) for k, v in (props.get("metadata") or {}).items()}
    metadata.update({"warden_stack": stack_id, "warden_resource": resource})
    short_id = resource_id.replace("-", "")[:8]
    return ServerRequest(
        name=str(props.get("name") or f"{stack_name}-{resource}-{short_id}"),
        image=str(props["image"]),
        flavor=str(props["flavor"]),
        metadata=metadata,
        request_id=resource_id,
    )


def needs_rebuild(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether an in-place update changes the image (Nova's rebuild)."""
    return after.get("image") != before.get("image")


def server_attributes(info: ServerInfo) -> dict[str, Any]:
    """The attributes of a server as the cloud shows it."""
    return {
        "name": info.name,
        "addresses": {},
        "networks": {},
        "show": info.model_dump(mode="json"),
    }
