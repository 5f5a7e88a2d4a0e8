"""`OS::Neutron::Port`: a port on a network, with fixed IPs and security groups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.cloud_objects import Lookup
from domain.stack.types.api_object import (
    ApiObjectType,
    Request,
    fields_of,
    given,
    lookup,
    with_value_specs,
)
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Neutron::Port"
FIELDS: Final = {
    "name": "name",
    "admin_state_up": "admin_state_up",
    "mac_address": "mac_address",
    "device_id": "device_id",
    "device_owner": "device_owner",
    "binding:vnic_type": "binding:vnic_type",
    "port_security_enabled": "port_security_enabled",
    "dns_name": "dns_name",
    "propagate_uplink_status": "propagate_uplink_status",
    "tags": "tags",
}


def fixed_ips(entries: list[Mapping[str, Any]], at: str) -> Request:
    """Heat's `fixed_ips` (`subnet` by name or id, `ip_address`) as Neutron's."""
    body: list[dict[str, Any]] = []
    lookups: list[Lookup] = []
    for i, entry in enumerate(entries):
        item = {"ip_address": entry["ip_address"]} if entry.get("ip_address") else {}
        subnet = entry.get("subnet") or entry.get("subnet_id")
        if subnet:
            item["subnet_id"] = subnet
            lookups.append(lookup((at, i, "subnet_id"), "subnet", subnet))
        body.append(item)
    return Request({at: body}, tuple(lookups))


def security_groups(names: list[str], at: str) -> Request:
    """Security groups by name or id, each looked up to its id."""
    lookups = tuple(lookup((at, i), "security_group", n) for i, n in enumerate(names))
    return Request({at: list(names)}, lookups)


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name}
    body["network_id"] = props["network"]
    lookups: list[Lookup] = [lookup(("network_id",), "network", props["network"])]
    if props.get("no_fixed_ips"):
        body["fixed_ips"] = []
    elif props.get("fixed_ips"):
        ips = fixed_ips(props["fixed_ips"], "fixed_ips")
        body |= ips.body
        lookups += ips.lookups
    if props.get("security_groups") is not None:
        groups = security_groups(props["security_groups"], "security_groups")
        body |= groups.body
        lookups += groups.lookups
    if props.get("allowed_address_pairs") is not None:
        body["allowed_address_pairs"] = props["allowed_address_pairs"]
    if props.get("qos_policy"):
        body["qos_policy_id"] = props["qos_policy"]
        lookups.append(lookup(("qos_policy_id",), "qos_policy", props["qos_policy"]))
    return Request(with_value_specs(body, props), tuple(lookups))


TYPE: Final = heat_type(NAME, translations={"network_id": "network"})
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="port",
    body=_body,
    fields=fields_of(
        FIELDS,
        fixed_ips=("fixed_ips",),
        no_fixed_ips=("fixed_ips",),
        security_groups=("security_groups",),
        allowed_address_pairs=("allowed_address_pairs",),
        qos_policy=("qos_policy_id",),
    ),
    attribute_fields={"network": "network_id", "subnets": "fixed_ips"},
)
