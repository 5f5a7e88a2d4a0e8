"""`OS::Heat::Stack`: a nested stack from an inline template (its own stack workflow)."""

from __future__ import annotations

from typing import Final

from domain.hot.properties import ResourceType, prop

NAME: Final = "OS::Heat::Stack"


def nested_stack_name(parent: str, resource: str, resource_id: str) -> str:
    """Heat-like name of a nested stack: `<parent>-<resource>-<short id>` (its id is the
    resource's id)."""
    return f"{parent}-{resource}-{resource_id.replace('-', '')[:8]}"


TYPE: Final = ResourceType(
    name=NAME,
    properties={
        "template": prop("any", required=True, update_allowed=True),
        "parameters": prop("map", update_allowed=True),
        "timeout": prop("integer", minimum=1, maximum=10_080, update_allowed=True),
    },
    attributes=frozenset({"outputs"}),
    nested_properties=frozenset({"template"}),
    nested_holds="template",
)
