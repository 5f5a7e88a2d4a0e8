"""Deletion policy 1.1 (`senlin.policy.deletion`): victims, grace period, lifecycle hooks.

The contract: docs/api-contract.md §Lifecycle hooks. Parsed from user input by
`domain.cluster.policies.specs.parse_policy_spec()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from domain.cluster.lifecycle import HookType
from domain.cluster.policies.base import MAX_SECONDS, FieldError, SpecModel, url_allowlist
from domain.hook_urls import URL_MAX_LENGTH, url_problem


class DeletionCriteria(StrEnum):
    """How victims are chosen after the failed and not-yet-created ones."""

    RANDOM = "RANDOM"
    OLDEST_FIRST = "OLDEST_FIRST"
    OLDEST_PROFILE_FIRST = "OLDEST_PROFILE_FIRST"
    YOUNGEST_FIRST = "YOUNGEST_FIRST"


class HookParams(SpecModel):
    """Where lifecycle messages go: a webhook `url` (+ HMAC `secret`) or a Zaqar `queue`."""

    url: str | None = Field(None, max_length=URL_MAX_LENGTH)
    queue: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    secret: str | None = Field(None, min_length=8, max_length=256, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _empty_means_unset(cls, data: Any) -> Any:
        # Senlin's schema defaults these to "", so specs written for it carry them.
        if isinstance(data, Mapping):
            return {key: (None if value == "" else value) for key, value in data.items()}
        return data


class LifecycleHooks(SpecModel):
    """`hooks`: tell an app before its node is deleted, and wait up to `timeout` seconds."""

    type: HookType = HookType.ZAQAR
    params: HookParams = Field(default_factory=HookParams)
    timeout: int = Field(0, ge=0, le=MAX_SECONDS, description="0 = do not wait")

    @model_validator(mode="after")
    def _params_fit_type(self, info: ValidationInfo) -> Self:
        params = self.params
        if self.type == HookType.WEBHOOK:
            if params.url is None:
                raise FieldError("params.url", "required when type is webhook")
            if params.queue is not None:
                raise FieldError("params.queue", "not allowed when type is webhook")
            problem = url_problem(params.url, url_allowlist(info))
            if problem:
                raise FieldError("params.url", problem)
            return self
        if params.queue is None:
            raise FieldError("params.queue", "required when type is zaqar")
        for name in ("url", "secret"):
            if getattr(params, name) is not None:
                raise FieldError(f"params.{name}", "not allowed when type is zaqar")
        return self


class DeletionPolicyProperties(SpecModel):
    """`senlin.policy.deletion` 1.1 properties."""

    criteria: DeletionCriteria = DeletionCriteria.RANDOM
    destroy_after_deletion: bool = True
    grace_period: int = Field(0, ge=0, le=MAX_SECONDS)
    reduce_desired_capacity: bool = True
    hooks: LifecycleHooks | None = None

    @field_validator("hooks", mode="before")
    @classmethod
    def _empty_hooks_are_none(cls, value: Any) -> Any:
        return None if value == {} else value

    @property
    def secret(self) -> str | None:
        """The webhook HMAC secret, if any (stored apart from the spec)."""
        return self.hooks.params.secret if self.hooks is not None else None

    def without_secret(self) -> DeletionPolicyProperties:
        """A copy safe for workflow history, events and API responses."""
        if self.hooks is None or self.hooks.params.secret is None:
            return self
        params = self.hooks.params.model_copy(update={"secret": None})
        hooks = self.hooks.model_copy(update={"params": params})
        return self.model_copy(update={"hooks": hooks})
