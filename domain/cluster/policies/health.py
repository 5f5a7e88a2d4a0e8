"""Health policy 1.1 (`senlin.policy.health`): how failures are detected and recovered.

The contract: docs/api-contract.md §Health policy. Parsed from user input by
`domain.cluster.policies.specs.parse_policy_spec()`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Final, Literal, Self

from pydantic import Field, JsonValue, ValidationInfo, field_validator, model_validator

from domain.cluster.policies.base import (
    MAX_SECONDS,
    FieldError,
    SpecModel,
    url_allowlist,
    validation_context,
)
from domain.hook_urls import URL_MAX_LENGTH, expand_poll_url, url_problem

#: The only profile type whose servers Warden can reboot, rebuild or recreate.
NOVA_SERVER = "os.nova.server"
HEAT_STACK = "os.heat.stack"
#: Recovery action `type` that runs a user's own Temporal workflow as a child.
TEMPORAL_WORKFLOW = "TEMPORAL_WORKFLOW"
#: Stands in for `{nodename}` when a poll URL is checked before any node exists.
PROBE_NODE_NAME = "node-0"

_PERCENT = re.compile(r"(\d{1,3}(\.\d{1,2})?)%")
_WORKFLOW_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,254}")
_MAX_PARAMS_BYTES = 16_384


class DetectionType(StrEnum):
    """How the health manager notices a failed node."""

    NODE_STATUS_POLLING = "NODE_STATUS_POLLING"
    NODE_STATUS_POLL_URL = "NODE_STATUS_POLL_URL"
    LIFECYCLE_EVENTS = "LIFECYCLE_EVENTS"
    LB_STATUS_POLLING = "LB_STATUS_POLLING"


class RecoveryConditional(StrEnum):
    """With several detection modes: recover when any fails, or only when all do."""

    ANY_FAILED = "ANY_FAILED"
    ALL_FAILED = "ALL_FAILED"


class RecoveryActionName(StrEnum):
    """Built-in recovery actions. REBOOT and REBUILD need an `os.nova.server` profile,
    STACK_UPDATE an `os.heat.stack` one; RECREATE fits both."""

    REBOOT = "REBOOT"
    REBUILD = "REBUILD"
    RECREATE = "RECREATE"
    #: Update the node's stack with its existing template: Heat replaces the failed and
    #: CHECK_FAILED resources and keeps the stack (Senlin's health policy design names
    #: it as a stack's recovery).
    STACK_UPDATE = "STACK_UPDATE"


#: Which profile types each built-in action applies to.
ACTION_PROFILES: Final = {
    RecoveryActionName.REBOOT: (NOVA_SERVER,),
    RecoveryActionName.REBUILD: (NOVA_SERVER,),
    RecoveryActionName.RECREATE: (NOVA_SERVER, HEAT_STACK),
    RecoveryActionName.STACK_UPDATE: (HEAT_STACK,),
}


class RebootType(StrEnum):
    """`REBOOT` params `type`."""

    SOFT = "SOFT"
    HARD = "HARD"


class FencingType(StrEnum):
    """What is made certainly dead before RECREATE."""

    COMPUTE = "COMPUTE"


class NoOptions(SpecModel):
    """Detection modes without options."""


class PollUrlOptions(SpecModel):
    """`NODE_STATUS_POLL_URL` options; `poll_url` may contain `{nodename}`."""

    poll_url: str = Field(min_length=1, max_length=URL_MAX_LENGTH)
    poll_url_healthy_response: str = Field("", max_length=1024, description='"" = any 2xx')
    poll_url_conn_error_as_unhealthy: bool = True
    poll_url_retry_limit: int = Field(3, ge=0, le=100)
    poll_url_retry_interval: int = Field(3, ge=0, le=3600)
    poll_url_ssl_verify: bool = True

    @field_validator("poll_url")
    @classmethod
    def _probe_url_allowed(cls, value: str, info: ValidationInfo) -> str:
        problem = url_problem(expand_poll_url(value, PROBE_NODE_NAME), url_allowlist(info))
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("poll_url_healthy_response")
    @classmethod
    def _pattern_compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"is not a valid regular expression: {exc}") from exc
        return value


class LbStatusOptions(SpecModel):
    """`LB_STATUS_POLLING` options: the pool to read (default: the pool of the cluster's
    load-balancing policy)."""

    pool_id: str | None = Field(None, min_length=1, max_length=255)


class NodeStatusPolling(SpecModel):
    """Poll the compute API: ERROR, SHUTOFF, PAUSED, DELETED/404 = failed."""

    type: Literal[DetectionType.NODE_STATUS_POLLING]
    options: NoOptions = Field(default_factory=NoOptions)


class NodeStatusPollUrl(SpecModel):
    """Poll an application URL per node."""

    type: Literal[DetectionType.NODE_STATUS_POLL_URL]
    options: PollUrlOptions


class LifecycleEvents(SpecModel):
    """Listen to the backend's notifications (`POST /v1/notifications`)."""

    type: Literal[DetectionType.LIFECYCLE_EVENTS]
    options: NoOptions = Field(default_factory=NoOptions)


class LbStatusPolling(SpecModel):
    """Poll the load balancer pool: member ERROR/OFFLINE = failed."""

    type: Literal[DetectionType.LB_STATUS_POLLING]
    options: LbStatusOptions = Field(default_factory=LbStatusOptions)


DetectionMode = Annotated[
    NodeStatusPolling | NodeStatusPollUrl | LifecycleEvents | LbStatusPolling,
    Field(discriminator="type"),
]


class Detection(SpecModel):
    """`detection`: how often and how failures are noticed."""

    interval: int = Field(60, ge=1, le=MAX_SECONDS)
    node_update_timeout: int = Field(300, ge=0, le=MAX_SECONDS)
    recovery_conditional: RecoveryConditional = RecoveryConditional.ANY_FAILED
    detection_modes: list[DetectionMode] = Field(min_length=1, max_length=len(DetectionType))

    @field_validator("interval")
    @classmethod
    def _not_below_minimum(cls, value: int, info: ValidationInfo) -> int:
        minimum = validation_context(info).get("min_interval")
        if minimum is not None and value < minimum:
            raise ValueError(
                f"Specified interval of {value} seconds is below the configured minimum "
                f"health check interval of {minimum} seconds."
            )
        return value

    @model_validator(mode="after")
    def _modes_combine(self) -> Self:
        seen: list[DetectionType] = []
        for index, mode in enumerate(self.detection_modes):
            if mode.type in seen:
                raise FieldError(
                    f"detection_modes[{index}].type", f"duplicate detection mode {mode.type}"
                )
            seen.append(mode.type)
        if DetectionType.LIFECYCLE_EVENTS in seen and len(seen) > 1:
            raise FieldError(
                "detection_modes",
                "LIFECYCLE_EVENTS cannot be combined with polling detection modes "
                f"({', '.join(seen)})",
            )
        return self


class RecoveryAction(SpecModel):
    """One step of `recovery.actions`, tried in order until the node is healthy."""

    name: str = Field(min_length=1, max_length=255)
    type: Literal["TEMPORAL_WORKFLOW"] | None = None
    params: dict[str, JsonValue] = Field(default_factory=dict, max_length=32)

    @model_validator(mode="before")
    @classmethod
    def _normalize_builtin(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or data.get("type") is not None:
            return data
        name, params = data.get("name"), data.get("params")
        if not isinstance(name, str) or name.upper() not in RecoveryActionName.__members__:
            return data
        data = {**data, "name": name.upper()}
        if name.upper() == RecoveryActionName.REBOOT and isinstance(params or {}, Mapping):
            reboot_type = (params or {}).get("type", RebootType.SOFT.value)
            if isinstance(reboot_type, str):
                data["params"] = {**(params or {}), "type": reboot_type.upper()}
        return data

    @model_validator(mode="after")
    def _known_action(self) -> Self:
        if self.type is not None:
            return self._check_workflow()
        if self.name not in RecoveryActionName.__members__:
            raise FieldError(
                "name",
                f"unknown recovery action {self.name!r}; expected REBOOT, REBUILD, RECREATE, "
                f"STACK_UPDATE "
                f"or a workflow name with type {TEMPORAL_WORKFLOW}",
            )
        allowed = {"type"} if self.name == RecoveryActionName.REBOOT else set()
        for key in self.params:
            if key not in allowed:
                raise FieldError(f"params.{key}", f"not a parameter of {self.name}")
        if allowed and self.params.get("type") not in RebootType.__members__:
            raise FieldError("params.type", "must be SOFT or HARD")
        return self

    def _check_workflow(self) -> Self:
        if not _WORKFLOW_NAME.fullmatch(self.name):
            raise FieldError("name", "is not a valid workflow name")
        task_queue = self.params.get("task_queue")
        if task_queue is not None and not (
            isinstance(task_queue, str) and 0 < len(task_queue) <= 255
        ):
            raise FieldError("params.task_queue", "must be a string of 1 to 255 characters")
        if len(json.dumps(self.params)) > _MAX_PARAMS_BYTES:
            raise FieldError("params", f"must be at most {_MAX_PARAMS_BYTES} bytes as JSON")
        return self

    @property
    def builtin(self) -> RecoveryActionName | None:
        """The built-in action this step names, None for a user's workflow."""
        return RecoveryActionName(self.name) if self.type is None else None

    @property
    def reboot_type(self) -> RebootType | None:
        """SOFT or HARD for REBOOT, else None."""
        if self.builtin != RecoveryActionName.REBOOT:
            return None
        return RebootType(str(self.params["type"]))


def _percent(value: str) -> float | None:
    match = _PERCENT.fullmatch(value.strip())
    if match is None or float(match.group(1)) > 100:
        return None
    return float(match.group(1))


def _threshold(value: Any, *, minimum: int) -> Any:
    """Check an `int | "N%"` field before pydantic's union sees it (clean messages)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        # pydantic reports ValueError as a validation error; TypeError would escape it.
        raise ValueError("must be an integer or a percentage string such as '10%'")  # noqa: TRY004
    if isinstance(value, int):
        if not minimum <= value <= 100_000:
            raise ValueError(f"must be between {minimum} and 100000, or a percentage")
        return value
    pct = _percent(value)
    if pct is None or (minimum > 0 and pct == 0):
        low = "0%" if minimum == 0 else "more than 0%"
        raise ValueError(f"must be a percentage from {low} to 100%, or an integer")
    return value


class Recovery(SpecModel):
    """`recovery`: what to try, and the safety limits on automatic recovery."""

    actions: list[RecoveryAction] = Field(min_length=1, max_length=10)
    fencing: list[FencingType] = Field(
        default_factory=lambda: [FencingType.COMPUTE], max_length=len(FencingType)
    )
    node_delete_timeout: int = Field(20, ge=1, le=3600)
    node_force_recreate: bool = False
    max_unhealthy: int | str = "49%"
    max_concurrent_recoveries: int | str | None = None
    node_retry_limit: int = Field(3, ge=0, le=100)
    retry_backoff: int = Field(30, ge=1, le=3600)

    @field_validator("max_unhealthy", mode="before")
    @classmethod
    def _max_unhealthy(cls, value: Any) -> Any:
        return _threshold(value, minimum=0)

    @field_validator("max_concurrent_recoveries", mode="before")
    @classmethod
    def _max_concurrent(cls, value: Any) -> Any:
        return None if value is None else _threshold(value, minimum=1)


class HealthPolicyProperties(SpecModel):
    """`senlin.policy.health` 1.1 properties."""

    detection: Detection
    recovery: Recovery

    def max_unhealthy_count(self, cluster_size: int) -> int:
        """Most unhealthy nodes automatic recovery tolerates; above it, the cluster warns.

        A positive percentage always allows at least one node, so a one- or two-node
        cluster still heals; `0` or `"0%"` turns automatic recovery off.
        """
        limit = self.recovery.max_unhealthy
        if isinstance(limit, int):
            return limit
        pct = _percent(limit) or 0.0
        return 0 if pct == 0 else max(1, math.floor(cluster_size * pct / 100))

    def max_concurrent(self, cluster_size: int) -> int:
        """How many nodes may be recovering at once (default max(1, 5%))."""
        limit = self.recovery.max_concurrent_recoveries
        if isinstance(limit, int):
            return limit
        pct = 5.0 if limit is None else (_percent(limit) or 5.0)
        return max(1, math.ceil(cluster_size * pct / 100))
