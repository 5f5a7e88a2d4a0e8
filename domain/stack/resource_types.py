"""The registry of resource types a template may use: one line per type.

Each type's schema and pure rules are in its own module under `domain/stack/types/`; what
Warden does with it (create, update, delete, check, …) is its handler, registered in
`workflows/stack/resources/registry.py`. Schemas and property checks are in `domain/hot/properties`.
"""

from __future__ import annotations

from typing import Final

from domain.errors import InvalidRequest
from domain.hot.properties import (
    PropertySchema,
    ResourceType,
    check_properties,
    convert_property,
    parse_bool,
    parse_number,
)
from domain.stack.types import (
    nested_stack,
    none,
    random_string,
    resource_group,
    scaling_group,
    scaling_policy,
    server,
    software_config,
    software_deployment,
    test_resource,
    value,
    wait_condition,
)
from domain.stack.types.cinder import volume
from domain.stack.types.glance import web_image
from domain.stack.types.neutron import (
    extra_route_set,
    floating_ip,
    net,
    port,
    router,
    security_group,
    subnet,
    trunk,
)
from domain.stack.types.nova import keypair, server_group
from domain.stack.types.octavia import resources as octavia

__all__ = [
    "AUTO_SCALING_GROUP",
    "NONE",
    "RANDOM_STRING",
    "RESOURCE_GROUP",
    "RESOURCE_TYPES",
    "SCALING_POLICY",
    "SERVER",
    "STACK",
    "TEST_RESOURCE",
    "PropertySchema",
    "ResourceType",
    "check_properties",
    "convert_property",
    "parse_bool",
    "parse_number",
    "resource_type",
]

NONE: Final = none.NAME
RANDOM_STRING: Final = random_string.NAME
TEST_RESOURCE: Final = test_resource.NAME
SERVER: Final = server.NAME
STACK: Final = nested_stack.NAME
AUTO_SCALING_GROUP: Final = scaling_group.NAME
SCALING_POLICY: Final = scaling_policy.NAME
RESOURCE_GROUP: Final = resource_group.NAME

RESOURCE_TYPES: Final[dict[str, ResourceType]] = {
    t.name: t
    for t in (
        none.TYPE,
        random_string.TYPE,
        test_resource.TYPE,
        server.TYPE,
        nested_stack.TYPE,
        scaling_group.TYPE,
        scaling_policy.TYPE,
        resource_group.TYPE,
        keypair.TYPE,
        server_group.TYPE,
        net.TYPE,
        subnet.TYPE,
        port.TYPE,
        security_group.TYPE,
        security_group.RULE_TYPE,
        floating_ip.TYPE,
        floating_ip.ASSOCIATION_TYPE,
        router.TYPE,
        router.INTERFACE_TYPE,
        trunk.TYPE,
        extra_route_set.TYPE,
        volume.TYPE,
        volume.ATTACHMENT_TYPE,
        web_image.TYPE,
        *(api.rtype for api in octavia.ALL),
        *software_config.TYPES,
        *software_deployment.TYPES,
        value.TYPE,
        wait_condition.HANDLE_TYPE,
        wait_condition.CONDITION_TYPE,
    )
}


def resource_type(name: str) -> ResourceType:
    """The registered type called `name`; anything else is a 400 with Heat's wording."""
    found = RESOURCE_TYPES.get(name)
    if found is None:
        raise InvalidRequest(f"The Resource Type ({name}) could not be found.")
    return found
