"""`OS::Neutron::Net`: a Neutron network."""

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

NAME: Final = "OS::Neutron::Net"
#: Property → Neutron's field, for those passed as they are.
FIELDS: Final = {
    "name": "name",
    "admin_state_up": "admin_state_up",
    "shared": "shared",
    "tenant_id": "tenant_id",
    "port_security_enabled": "port_security_enabled",
    "dns_domain": "dns_domain",
    "availability_zone_hints": "availability_zone_hints",
    "tags": "tags",
}


def _body(props: Mapping[str, Any], name: str) -> Request:
    body = given(props, FIELDS) | {"name": props.get("name") or name}
    lookups: tuple[Lookup, ...] = ()
    if props.get("qos_policy"):
        body["qos_policy_id"] = props["qos_policy"]
        lookups = (lookup(("qos_policy_id",), "qos_policy", props["qos_policy"]),)
    return Request(with_value_specs(body, props), lookups)


TYPE: Final = heat_type(NAME)
API: Final = ApiObjectType(
    rtype=TYPE,
    kind="network",
    body=_body,
    fields=fields_of(FIELDS, qos_policy=("qos_policy_id",)),
)
