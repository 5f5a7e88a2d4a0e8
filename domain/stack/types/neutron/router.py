"""`OS::Neutron::Router` (with its external gateway) and `OS::Neutron::RouterInterface`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.cloud_objects import Lookup
from domain.errors import InvalidRequest
from domain.stack.types.api_object import (
    ApiObjectType,
    Request,
    fields_of,
    given,
    lookup,
    with_value_specs,
)
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Neutron::Router"
INTERFACE_NAME: Final = "OS::Neutron::RouterInterface"
FIELDS: Final = {
    "name": "name",
    "admin_state_up": "admin_state_up",
    "distributed": "distributed",
    "ha": "ha",
    "availability_zone_hints": "availability_zone_hints",
    "tenant_id": "tenant_id",
    "tags": "tags",
}


def gateway(info: Mapping[str, Any]) -> Request:
    """Heat's `external_gateway_info` as Neutron's (networks and subnets looked up)."""
    at = "external_gateway_info"
    body: dict[str, Any] = {"network_id": info["network"]}
    lookups: list[Lookup] = [lookup((at, "network_id"), "network", info["network"])]
    if info.get("enable_snat") is not None:
        body["enable_snat"] = info["enable_snat"]
    fixed = []
    for i, entry in enumerate(info.get("external_fixed_ips") or []):
        item = {"ip_address": entry["ip_address"]} if entry.get("ip_address") else {}
        if entry.get("subnet"):
            item["subnet_id"] = entry["subnet"]
            lookups.append(
                lookup((at, "external_fixed_ips", i, "subnet_id"), "subnet", entry["subnet"])
            )
        fixed.append(item)
    if fixed:
        body["external_fixed_ips"] = fixed
    return Request({at: body}, tuple(lookups))


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name}
    lookups: tuple[Lookup, ...] = ()
    if props.get("external_gateway_info"):
        gw = gateway(props["external_gateway_info"])
        body |= gw.body
        lookups = gw.lookups
    return Request(with_value_specs(body, props), lookups)


def _check_interface(props: Mapping[str, Any], field: str) -> None:
    # Called with literal values only (a `get_resource` is checked once resolved), so
    # "neither given" waits for `interface_request`.
    if props.get("subnet") and props.get("port"):
        raise InvalidRequest(f"{field}: Only one of subnet, port may be specified.")


def interface_request(props: Mapping[str, Any]) -> Request:
    """The body of `add_router_interface` / `remove_router_interface`."""
    if not props.get("subnet") and not props.get("port"):
        raise InvalidRequest(
            "At least one of the following properties must be specified: subnet, port."
        )
    kind = "subnet" if props.get("subnet") else "port"
    key = f"{kind}_id"
    return Request({key: props[kind]}, (lookup((key,), kind, props[kind]),))


def interface_id(router_id: str, body: Mapping[str, Any]) -> str:
    """Heat's resource id of an interface: `<router id>:subnet_id=<id>` (or port_id)."""
    key = "subnet_id" if "subnet_id" in body else "port_id"
    return f"{router_id}:{key}={body[key]}"


def parse_interface_id(resource_id: str) -> tuple[str, dict[str, str]]:
    """The router id and the remove body of an interface's resource id."""
    router_id, _, rest = resource_id.partition(":")
    key, _, value = rest.partition("=")
    return router_id, {key: value}


TYPE: Final = heat_type(NAME)
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="router",
    body=_body,
    fields=fields_of(FIELDS, external_gateway_info=("external_gateway_info",)),
)
INTERFACE_TYPE: Final = heat_type(
    INTERFACE_NAME,
    check=_check_interface,
    translations={"router_id": "router", "subnet_id": "subnet", "port_id": "port"},
)
