"""`OS::Neutron::Subnet`: a subnet of a network, its pools, gateway and routes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.stack.types.api_object import (
    ApiObjectType,
    Request,
    fields_of,
    given,
    lookup,
    with_value_specs,
)
from domain.stack.types.heat_schema import heat_type

NAME: Final = "OS::Neutron::Subnet"
FIELDS: Final = {
    "name": "name",
    "cidr": "cidr",
    "ip_version": "ip_version",
    "enable_dhcp": "enable_dhcp",
    "dns_nameservers": "dns_nameservers",
    "allocation_pools": "allocation_pools",
    "host_routes": "host_routes",
    "ipv6_address_mode": "ipv6_address_mode",
    "ipv6_ra_mode": "ipv6_ra_mode",
    "prefixlen": "prefixlen",
    "tenant_id": "tenant_id",
    "tags": "tags",
}
#: Property → (Neutron field, kind of object it names).
REFERENCES: Final = {
    "network": ("network_id", "network"),
    "subnetpool": ("subnetpool_id", "subnetpool"),
    "segment": ("segment_id", "segment"),
}


def references(props: Mapping[str, Any], refs: Mapping[str, tuple[str, str]]) -> Request:
    """The body fields naming other objects, each with its lookup."""
    body: dict[str, Any] = {}
    lookups = []
    for prop, (api, kind) in refs.items():
        if props.get(prop):
            body[api] = props[prop]
            lookups.append(lookup((api,), kind, props[prop]))
    return Request(body, tuple(lookups))


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name}
    # Heat: an empty gateway_ip means "no gateway" (null); unset means Neutron's default.
    if props.get("gateway_ip") is not None:
        body["gateway_ip"] = props["gateway_ip"] or None
    refs = references(props, REFERENCES)
    return Request(with_value_specs(body | refs.body, props), refs.lookups)


TYPE: Final = heat_type(NAME, translations={"network_id": "network"})
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="subnet",
    body=_body,
    fields=fields_of(FIELDS, gateway_ip=("gateway_ip",), segment=("segment_id",)),
)
