"""What every policy spec model shares: frozen strict models, field-relative errors and
the validation context.

Checks that depend on settings (the health check interval minimum, the hook and probe
URL allow-list) reach the models through the validation context, so a spec stored
under older settings still loads with a plain `model_validate()` inside a workflow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo

#: The longest timeout or interval any policy accepts (one day).
MAX_SECONDS = 86_400


class SpecModel(BaseModel):
    """A part of a policy spec: frozen, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldError(ValueError):
    """A broken rule found by a model validator; `field` is relative to that model."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def validation_context(info: ValidationInfo) -> Mapping[str, Any]:
    """The settings `parse_policy_spec` passed in (empty when a stored spec is loaded)."""
    return info.context if isinstance(info.context, Mapping) else {}


def url_allowlist(info: ValidationInfo) -> Sequence[str]:
    """The hook and probe URL allow-list of the validation context (empty = any host)."""
    return tuple(validation_context(info).get("url_allowlist", ()))
