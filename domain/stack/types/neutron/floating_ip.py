"""`OS::Neutron::FloatingIP` and `OS::Neutron::FloatingIPAssociation`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.stack.types.api_object import (
    ApiObjectType,
    Request,
    fields_of,
    given,
    with_value_specs,
)
from domain.stack.types.heat_schema import heat_type
from domain.stack.types.neutron.subnet import references

NAME: Final = "OS::Neutron::FloatingIP"
ASSOCIATION_NAME: Final = "OS::Neutron::FloatingIPAssociation"
FIELDS: Final = {
    "floating_ip_address": "floating_ip_address",
    "fixed_ip_address": "fixed_ip_address",
    "dns_name": "dns_name",
    "dns_domain": "dns_domain",
}
REFERENCES: Final = {
    "floating_network": ("floating_network_id", "network"),
    "floating_subnet": ("subnet_id", "subnet"),
    "port_id": ("port_id", "port"),
}


def _body(props: Mapping[str, Any], name: str) -> Request:
    refs = references(props, REFERENCES)
    return Request(with_value_specs(given(props, FIELDS) | refs.body, props), refs.lookups)


def association_request(props: Mapping[str, Any]) -> Request:
    """The floating IP update that associates it with the port."""
    refs = references(props, {"port_id": ("port_id", "port")})
    return Request(given(props, {"fixed_ip_address": "fixed_ip_address"}) | refs.body, refs.lookups)


def association_id(floatingip_id: str, port_id: str) -> str:
    """Heat's resource id of an association: `<floating IP id>:<port id>`."""
    return f"{floatingip_id}:{port_id}"


TYPE: Final = heat_type(NAME, translations={"floating_network_id": "floating_network"})
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="floating_ip",
    body=_body,
    fields=fields_of(FIELDS, port_id=("port_id",)),
)
ASSOCIATION_TYPE: Final = heat_type(ASSOCIATION_NAME)
