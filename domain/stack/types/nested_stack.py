"""`OS::Heat::Stack`: a nested stack from an inline template (its own stack workflow)."""

from __future__ import annotations

from typing import Final

from domain.hot.properties import ResourceType, prop

NAME: Final = "OS::Heat::Stack"

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
