"""`OS::Nova::Server`: one server, with Heat's whole property schema.

Networks, keypair, user data, security groups, availability zone, scheduler hints,
block devices, config drive and admin password reach Nova as Heat sends them (names
looked up by the activity). A new image is a rebuild (`image_update_policy`
REBUILD, Heat's default), a new flavor a resize, confirmed once Nova has it
(`flavor_update_policy` RESIZE, Heat's default); see `REPLACED_ON` for what Warden
replaces the server for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from domain.server_networks import attachable_in_place
from domain.servers import NetworkRequest, ServerInfo, ServerRequest
from domain.stack.types.heat_schema import heat_type
from domain.stack.types.software_config import is_uuid_like

NAME: Final = "OS::Nova::Server"

#: Properties Heat updates in place that Warden replaces the server for (Heat rewrites
#: the Swift object its agent polls; Warden keeps no such object).
REPLACED_ON: Final = frozenset({"deployment_swift_data"})
#: Renamed, given new metadata, new interfaces, a new flavor, password or tags in place,
#: as Heat does (`PUT /servers/{id}`, `PUT /servers/{id}/metadata`, `os-interface`
#: attach and detach, `resize` + `confirmResize`, `changePassword`, `PUT
#: /servers/{id}/tags`), since these workflow patches; replaced before them.
IN_PLACE_SINCE: Final = {
    "name": "server-rename-in-place",
    "metadata": "server-metadata-in-place",
    "networks": "server-networks-in-place",
    "flavor": "server-resize-in-place",
    "admin_pass": "server-password-in-place",
    "tags": "server-tags-in-place",
}
#: `networks` changes in place only between NICs of a port, network, subnet or address
#: (`domain/server_networks.py`); a floating IP, port extras or a tag still replace it.
IN_PLACE_WHEN: Final = {"networks": attachable_in_place}

TYPE: Final = heat_type(
    NAME,
    replaced_on=REPLACED_ON,
    in_place_since=IN_PLACE_SINCE,
    in_place_when=IN_PLACE_WHEN,
    can_lock=True,
    replace_policies={
        "image": ("image_update_policy", ("REPLACE",)),
        "flavor": ("flavor_update_policy", ("REPLACE",)),
        "user_data": ("user_data_update_policy", ("REPLACE",)),
    },
    # New user data rebuilds the server with it (Nova 2.57) since this patch.
    in_place_policies_since={
        "user_data": ("user_data_update_policy", "REBUILD", "server-user-data-rebuild")
    },
)

#: Heat's block_device_mapping_v2 keys passed to Nova as they are.
_BDM_KEYS: Final = ("device_type", "disk_bus", "boot_index", "volume_size", "delete_on_termination")


def _metadata(props: Mapping[str, Any]) -> dict[str, str]:
    """Heat's rule: non-string metadata values are sent as JSON."""
    raw = props.get("metadata") or {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


def _networks(props: Mapping[str, Any]) -> tuple[NetworkRequest, ...] | str | None:
    nics = props.get("networks")
    if not nics:
        return None
    if len(nics) == 1 and nics[0].get("allocate_network"):
        return str(nics[0]["allocate_network"])
    keys = ("network", "port", "fixed_ip", "subnet", "floating_ip", "tag")
    return tuple(NetworkRequest(**{k: nic[k] for k in keys if nic.get(k)}) for nic in nics)


def _block_device(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """One `block_device_mapping_v2` entry as Heat translates it for Nova."""
    local = {"destination_type": "local", "boot_index": -1, "delete_on_termination": True}
    entry: dict[str, Any] = {}
    for key, source in (("volume_id", "volume"), ("snapshot_id", "snapshot"), ("image", "image")):
        if mapping.get(key):
            entry = {"uuid": mapping[key], "source_type": source, "destination_type": "volume"}
            entry |= {"boot_index": 0, "delete_on_termination": False}
            break
    else:
        if mapping.get("swap_size"):
            entry = {"source_type": "blank", "guest_format": "swap", **local}
            entry["volume_size"] = mapping["swap_size"]
        elif mapping.get("ephemeral_size"):
            entry = {"source_type": "blank", **local, "volume_size": mapping["ephemeral_size"]}
            if mapping.get("ephemeral_format"):
                entry["guest_format"] = mapping["ephemeral_format"]
    if mapping.get("device_name"):
        entry["device_name"] = mapping["device_name"]
    entry |= {k: mapping[k] for k in _BDM_KEYS if mapping.get(k) is not None}
    if mapping.get("volume_type"):
        entry["volume_type"] = mapping["volume_type"]
    return entry


def _block_devices(props: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    v2 = [_block_device(m) for m in props.get("block_device_mapping_v2") or ()]
    # The legacy mapping is a volume or snapshot on a device name.
    for m in props.get("block_device_mapping") or ():
        legacy = {"device_name": m.get("device_name")} | {
            k: m[k] for k in ("volume_id", "snapshot_id", "volume_size") if m.get(k)
        }
        legacy["delete_on_termination"] = bool(m.get("delete_on_termination"))
        v2.append(_block_device(legacy))
    return tuple(v2)


def server_request(
    stack_name: str, stack_id: str, resource: str, props: Mapping[str, Any], resource_id: str
) -> ServerRequest:
    """The create request; the resource id is its request id (a retried create finds it)."""
    metadata = _metadata(props)
    metadata.update({"warden_stack": stack_id, "warden_resource": resource})
    short_id = resource_id.replace("-", "")[:8]
    return ServerRequest(
        name=str(props.get("name") or f"{stack_name}-{resource}-{short_id}"),
        image=str(props["image"]) if props.get("image") else None,
        flavor=str(props["flavor"]),
        metadata=metadata,
        request_id=resource_id,
        networks=_networks(props),
        key_name=props.get("key_name") or None,
        user_data=props.get("user_data") or None,
        availability_zone=props.get("availability_zone") or None,
        security_groups=tuple(str(g) for g in props.get("security_groups") or ()),
        scheduler_hints=dict(props.get("scheduler_hints") or {}),
        block_device_mapping_v2=_block_devices(props),
        config_drive=props.get("config_drive"),
        admin_pass=props.get("admin_pass") or None,
        tags=tuple(str(t) for t in props.get("tags") or ()),
    )


def names_config(props: Mapping[str, Any]) -> bool:
    """Whether `user_data` may be the id of a software config: Heat reads it so for the
    RAW and SOFTWARE_CONFIG formats."""
    return props.get("user_data_format") in ("RAW", "SOFTWARE_CONFIG") and is_uuid_like(
        props.get("user_data")
    )


def user_ports(props: Mapping[str, Any]) -> list[str]:
    """The ports (names or ids) the server's `networks` name."""
    return [str(n["port"]) for n in props.get("networks") or () if n.get("port")]


def needs_rebuild(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether an in-place update rebuilds the server: a new image, or new user data
    under `user_data_update_policy: REBUILD` (Nova's rebuild takes both, 2.57)."""
    return after.get("image") != before.get("image") or (
        after.get("user_data_update_policy") == "REBUILD"
        and after.get("user_data") != before.get("user_data")
    )


def server_attributes(info: ServerInfo) -> dict[str, Any]:
    """The attributes of a server as the cloud shows it."""
    return {
        "name": info.name,
        "addresses": info.addresses,
        "networks": info.networks,
        "first_address": first_address(info.networks),
        "show": info.model_dump(mode="json"),
    }


def first_address(networks: Mapping[str, list[str]]) -> str:
    """Heat's deprecated `first_address`: the first IP of the last network by name."""
    for name in sorted(networks, reverse=True):
        if networks[name]:
            return networks[name][0]
    return ""
