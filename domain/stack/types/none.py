"""`OS::Heat::None`: stubs out any resource; accepts any property and attribute."""

from __future__ import annotations

from typing import Final

from domain.hot.properties import ResourceType

NAME: Final = "OS::Heat::None"

TYPE: Final = ResourceType(
    name=NAME,
    properties={},
    open_properties=True,
    attributes=frozenset(),
    open_attributes=True,
)
