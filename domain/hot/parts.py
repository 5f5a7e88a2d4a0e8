"""The parts of a Heat template that the intrinsics and parameters modules read.

`domain.hot.template` builds a `Template` out of these and re-exports them. They live in
this leaf module so that `domain.hot.functions` and `domain.hot.parameters` depend on the
template's parts, not on the module that loads templates (which depends on them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["OutputDef", "ResourceDef", "TemplateShape"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ResourceDef(_Frozen):
    """A resource as written: properties are raw, intrinsics unresolved."""

    name: str
    type: str
    properties: dict[str, Any] = Field(default_factory=dict)
    #: Explicit `depends_on` only; `Template.dependencies()` adds the implicit ones.
    depends_on: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    deletion_policy: str = "Delete"
    update_policy: dict[str, Any] = Field(default_factory=dict)
    #: An existing physical resource the stack adopts instead of creating one (Heat's
    #: `external_id`, HOT 2016-10-14): never updated, never deleted by the stack. A
    #: string, or a `get_param` call the stack's parameters resolve.
    external_id: str | dict[str, Any] | None = None
    #: Its `condition` (HOT 2016-10-14): a condition's name, true/false, or a call.
    condition: str | bool | dict[str, Any] | None = None


class OutputDef(_Frozen):
    """A stack output; `value` is raw."""

    name: str
    value: Any = None
    description: str = ""
    condition: str | bool | dict[str, Any] | None = None


class TemplateShape(Protocol):
    """What checking a template's references reads of it (`domain.hot.template.Template`)."""

    @property
    def version(self) -> str:
        """`heat_template_version` as written."""

    @property
    def version_date(self) -> str:
        """The HOT date of `version`."""

    @property
    def parameters(self) -> Mapping[str, object]:
        """Declared parameters by name."""

    @property
    def resources(self) -> Mapping[str, ResourceDef]:
        """Resources by name."""

    @property
    def outputs(self) -> Mapping[str, OutputDef]:
        """Outputs by name."""

    @property
    def conditions(self) -> Mapping[str, Any]:
        """The `conditions` section as written."""
