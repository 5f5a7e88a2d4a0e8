"""Policy specs: deletion policy 1.1 (lifecycle hooks) and health policy 1.1.

The contract: docs/api-contract.md §Lifecycle hooks and docs/api-contract.md §Health policy.

`parse_policy_spec()` is the one entry point for user input: it turns `{type, version,
properties}` into frozen, typed properties or raises `InvalidRequest` naming the
offending path (`spec.properties.hooks.timeout: ...`). Checks that depend on settings
(the health check interval minimum, the hook and probe URL allow-list) reach the
models through the validation context, so a spec stored under older settings still
loads with a plain `model_validate()` inside a workflow.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any, Final, Literal, Self
from urllib.parse import SplitResult, quote, urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from domain.errors import InvalidRequest
from domain.lifecycle import HookType

SUPPORTED_VERSION: Final = "1.1"
MAX_SECONDS = 86_400
URL_MAX_LENGTH = 2048
#: The only profile type whose servers Warden can reboot, rebuild or recreate.
NOVA_SERVER = "os.nova.server"
#: Recovery action `type` that runs a user's own Temporal workflow as a child.
TEMPORAL_WORKFLOW = "TEMPORAL_WORKFLOW"
#: Stands in for `{nodename}` when a poll URL is checked before any node exists.
PROBE_NODE_NAME = "node-0"

_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|[0-9a-f:.]*:[0-9a-f:.]*")
_PERCENT = re.compile(r"(\d{1,3}(\.\d{1,2})?)%")
_WORKFLOW_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,254}")
_MAX_PARAMS_BYTES = 16_384


class PolicyType(StrEnum):
    """Policy types Warden implements, as Senlin names them."""

    DELETION = "senlin.policy.deletion"
    HEALTH = "senlin.policy.health"


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _FieldError(ValueError):
    """A broken rule found by a model validator; `field` is relative to that model."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _context(info: ValidationInfo) -> Mapping[str, Any]:
    return info.context if isinstance(info.context, Mapping) else {}


def _allowlist(info: ValidationInfo) -> Sequence[str]:
    return tuple(_context(info).get("url_allowlist", ()))


# --- URLs ------------------------------------------------------------------------


def validate_hook_url(url: str, allowlist: Sequence[str], *, field: str = "url") -> None:
    """Raise InvalidRequest unless `url` is a plain http(s) URL the allow-list permits.

    An allow-list entry is a host name (exact, case-insensitive), a `*.suffix` wildcard
    (any host below `suffix`), or a URL prefix starting with `http://` or `https://`
    (same scheme, host and port; path below the prefix's). An empty list allows any host.
    """
    problem = _url_problem(url, allowlist)
    if problem:
        raise InvalidRequest(f"{field}: {problem}")


def expand_poll_url(template: str, node_name: str) -> str:
    """The poll URL for one node; the name is percent-encoded so it cannot change the host."""
    return template.replace("{nodename}", quote(node_name, safe=""))


def _url_problem(url: str, allowlist: Sequence[str]) -> str | None:
    if len(url) > URL_MAX_LENGTH:
        return f"must be at most {URL_MAX_LENGTH} characters"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "must not contain whitespace or control characters"
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a malformed port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() not in ("http", "https"):
        return "must use the http or https scheme"
    if "@" in parts.netloc:
        return "must not contain user information (user:password@)"
    host = parts.hostname
    if not host or not _HOST.fullmatch(host):
        return "must have a valid host"
    if allowlist and not any(_allowed(parts, host, entry.strip()) for entry in allowlist):
        return f"host {host} is not in the allowed list of hook and probe URLs"
    return None


def _allowed(parts: SplitResult, host: str, entry: str) -> bool:
    low = entry.lower()
    if low.startswith(("http://", "https://")):
        return _under_prefix(parts, entry)
    if low.startswith("*."):
        return host.endswith(low[1:])
    return bool(low) and host == low


def _under_prefix(parts: SplitResult, entry: str) -> bool:
    try:
        prefix = urlsplit(entry)
        same_origin = (prefix.scheme.lower(), prefix.hostname, prefix.port) == (
            parts.scheme.lower(),
            parts.hostname,
            parts.port,
        )
    except ValueError:
        return False
    path, base = parts.path or "/", prefix.path or "/"
    if base.endswith("/"):
        return same_origin and path.startswith(base)
    return same_origin and (path == base or path.startswith(base + "/"))


# --- Deletion policy 1.1 --------------------------------------------------------------


class DeletionCriteria(StrEnum):
    """How victims are chosen after the failed and not-yet-created ones."""

    RANDOM = "RANDOM"
    OLDEST_FIRST = "OLDEST_FIRST"
    OLDEST_PROFILE_FIRST = "OLDEST_PROFILE_FIRST"
    YOUNGEST_FIRST = "YOUNGEST_FIRST"


class HookParams(_Spec):
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


class LifecycleHooks(_Spec):
    """`hooks`: tell an app before its node is deleted, and wait up to `timeout` seconds."""

    type: HookType = HookType.ZAQAR
    params: HookParams = Field(default_factory=HookParams)
    timeout: int = Field(0, ge=0, le=MAX_SECONDS, description="0 = do not wait")

    @model_validator(mode="after")
    def _params_fit_type(self, info: ValidationInfo) -> Self:
        params = self.params
        if self.type == HookType.WEBHOOK:
            if params.url is None:
                raise _FieldError("params.url", "required when type is webhook")
            if params.queue is not None:
                raise _FieldError("params.queue", "not allowed when type is webhook")
            problem = _url_problem(params.url, _allowlist(info))
            if problem:
                raise _FieldError("params.url", problem)
            return self
        if params.queue is None:
            raise _FieldError("params.queue", "required when type is zaqar")
        for name in ("url", "secret"):
            if getattr(params, name) is not None:
                raise _FieldError(f"params.{name}", "not allowed when type is zaqar")
        return self


class DeletionPolicyProperties(_Spec):
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


# --- Health policy 1.1 -----------------------------------------------------------------


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
    """Built-in recovery actions (all need an `os.nova.server` profile)."""

    REBOOT = "REBOOT"
    REBUILD = "REBUILD"
    RECREATE = "RECREATE"


class RebootType(StrEnum):
    """`REBOOT` params `type`."""

    SOFT = "SOFT"
    HARD = "HARD"


class FencingType(StrEnum):
    """What is made certainly dead before RECREATE."""

    COMPUTE = "COMPUTE"


class NoOptions(_Spec):
    """Detection modes without options."""


class PollUrlOptions(_Spec):
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
        problem = _url_problem(expand_poll_url(value, PROBE_NODE_NAME), _allowlist(info))
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


class LbStatusOptions(_Spec):
    """`LB_STATUS_POLLING` options."""

    pool_id: str = Field(min_length=1, max_length=255)


class NodeStatusPolling(_Spec):
    """Poll the compute API: ERROR, SHUTOFF, PAUSED, DELETED/404 = failed."""

    type: Literal[DetectionType.NODE_STATUS_POLLING]
    options: NoOptions = Field(default_factory=NoOptions)


class NodeStatusPollUrl(_Spec):
    """Poll an application URL per node."""

    type: Literal[DetectionType.NODE_STATUS_POLL_URL]
    options: PollUrlOptions


class LifecycleEvents(_Spec):
    """Listen to the backend's notifications (`POST /v1/notifications`)."""

    type: Literal[DetectionType.LIFECYCLE_EVENTS]
    options: NoOptions = Field(default_factory=NoOptions)


class LbStatusPolling(_Spec):
    """Poll the load balancer pool: member ERROR/OFFLINE = failed."""

    type: Literal[DetectionType.LB_STATUS_POLLING]
    options: LbStatusOptions


DetectionMode = Annotated[
    NodeStatusPolling | NodeStatusPollUrl | LifecycleEvents | LbStatusPolling,
    Field(discriminator="type"),
]


class Detection(_Spec):
    """`detection`: how often and how failures are noticed."""

    interval: int = Field(60, ge=1, le=MAX_SECONDS)
    node_update_timeout: int = Field(300, ge=0, le=MAX_SECONDS)
    recovery_conditional: RecoveryConditional = RecoveryConditional.ANY_FAILED
    detection_modes: list[DetectionMode] = Field(min_length=1, max_length=len(DetectionType))

    @field_validator("interval")
    @classmethod
    def _not_below_minimum(cls, value: int, info: ValidationInfo) -> int:
        minimum = _context(info).get("min_interval")
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
                raise _FieldError(
                    f"detection_modes[{index}].type", f"duplicate detection mode {mode.type}"
                )
            seen.append(mode.type)
        if DetectionType.LIFECYCLE_EVENTS in seen and len(seen) > 1:
            raise _FieldError(
                "detection_modes",
                "LIFECYCLE_EVENTS cannot be combined with polling detection modes "
                f"({', '.join(seen)})",
            )
        return self


class RecoveryAction(_Spec):
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
            raise _FieldError(
                "name",
                f"unknown recovery action {self.name!r}; expected REBOOT, REBUILD, RECREATE "
                f"or a workflow name with type {TEMPORAL_WORKFLOW}",
            )
        allowed = {"type"} if self.name == RecoveryActionName.REBOOT else set()
        for key in self.params:
            if key not in allowed:
                raise _FieldError(f"params.{key}", f"not a parameter of {self.name}")
        if allowed and self.params.get("type") not in RebootType.__members__:
            raise _FieldError("params.type", "must be SOFT or HARD")
        return self

    def _check_workflow(self) -> Self:
        if not _WORKFLOW_NAME.fullmatch(self.name):
            raise _FieldError("name", "is not a valid workflow name")
        task_queue = self.params.get("task_queue")
        if task_queue is not None and not (
            isinstance(task_queue, str) and 0 < len(task_queue) <= 255
        ):
            raise _FieldError("params.task_queue", "must be a string of 1 to 255 characters")
        if len(json.dumps(self.params)) > _MAX_PARAMS_BYTES:
            raise _FieldError("params", f"must be at most {_MAX_PARAMS_BYTES} bytes as JSON")
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


class Recovery(_Spec):
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


class HealthPolicyProperties(_Spec):
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


# --- Parsing ---------------------------------------------------------------------------

PolicyProperties = DeletionPolicyProperties | HealthPolicyProperties
_MODELS: dict[PolicyType, type[DeletionPolicyProperties] | type[HealthPolicyProperties]] = {
    PolicyType.DELETION: DeletionPolicyProperties,
    PolicyType.HEALTH: HealthPolicyProperties,
}


class ParsedPolicy(_Spec):
    """A validated policy spec."""

    type: PolicyType
    version: Literal["1.1"] = SUPPORTED_VERSION
    properties: DeletionPolicyProperties | HealthPolicyProperties

    @model_validator(mode="after")
    def _properties_fit_type(self) -> Self:
        if not isinstance(self.properties, _MODELS[self.type]):
            raise _FieldError("properties", f"do not belong to a {self.type} policy")
        return self

    @property
    def secret(self) -> str | None:
        """The webhook HMAC secret of a deletion policy, if any."""
        props = self.properties
        return props.secret if isinstance(props, DeletionPolicyProperties) else None

    def without_secret(self) -> ParsedPolicy:
        """A copy safe for workflow history."""
        props = self.properties
        if not isinstance(props, DeletionPolicyProperties) or props.secret is None:
            return self
        return self.model_copy(update={"properties": props.without_secret()})

    def public_spec(self) -> dict[str, Any]:
        """The spec as stored and shown: JSON-able, unset fields left out, no secret."""
        return self.without_secret().model_dump(mode="json", exclude_none=True)


def parse_policy_spec(
    spec: Mapping[str, Any], *, min_interval: int = 60, url_allowlist: Sequence[str] = ()
) -> ParsedPolicy:
    """Validate a user's policy spec; InvalidRequest names the offending path.

    Args:
        spec: `{"type": ..., "version": ..., "properties": {...}}`.
        min_interval: smallest health check `interval` allowed (seconds).
        url_allowlist: entries a hook or poll URL must match (see `validate_hook_url`).
    """
    if not isinstance(spec, Mapping):
        raise InvalidRequest("spec: must be an object with type, version and properties")
    unknown = sorted(str(key) for key in spec if key not in ("type", "version", "properties"))
    if unknown:
        raise InvalidRequest(f"spec.{unknown[0]}: unknown key")
    policy_type = _policy_type(spec.get("type"))
    _check_version(spec.get("version"), policy_type)
    properties = spec.get("properties", {})
    if not isinstance(properties, Mapping):
        raise InvalidRequest("spec.properties: must be an object")
    context = {"min_interval": min_interval, "url_allowlist": tuple(url_allowlist)}
    try:
        props = _MODELS[policy_type].model_validate(dict(properties), context=context)
    except ValidationError as exc:
        raise InvalidRequest(describe_validation_error(exc, "spec.properties")) from None
    return ParsedPolicy(type=policy_type, version=SUPPORTED_VERSION, properties=props)


def _policy_type(value: Any) -> PolicyType:
    if value is None:
        raise InvalidRequest("spec.type: required")
    try:
        return PolicyType(value)
    except ValueError:
        expected = ", ".join(PolicyType)
        raise InvalidRequest(
            f"spec.type: unsupported policy type {value!r}; expected one of {expected}"
        ) from None


def _check_version(value: Any, policy_type: PolicyType) -> None:
    if value is None:
        raise InvalidRequest("spec.version: required")
    # YAML reads `version: 1.1` as a float; Senlin accepts it, so do we.
    text = (
        str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""
    )
    if text != SUPPORTED_VERSION:
        raise InvalidRequest(
            f"spec.version: unsupported version {value!r} of {policy_type}; "
            f"expected {SUPPORTED_VERSION}"
        )


def describe_validation_error(exc: ValidationError, prefix: str) -> str:
    """One message naming every offending path below `prefix`, e.g. `spec.properties`."""
    parts = []
    for err in exc.errors():
        loc = [p for p in err["loc"] if p not in DetectionType.__members__]
        cause = (err.get("ctx") or {}).get("error")
        message = err["msg"]
        if isinstance(cause, _FieldError):
            loc += _split_path(cause.field)
            message = str(cause)
        elif isinstance(cause, ValueError):
            message = str(cause)
        elif err["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc.append("type")
            message = f"must be one of {', '.join(DetectionType)}"
        parts.append(f"{_format_path(prefix, loc)}: {message}")
    return "; ".join(parts)


def _split_path(field: str) -> list[str | int]:
    path: list[str | int] = []
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", field):
        path.append(int(token[1:-1]) if token.startswith("[") else token)
    return path


def _format_path(prefix: str, loc: Sequence[str | int]) -> str:
    text = prefix
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def ensure_profile_supports(props: PolicyProperties, profile_type: str) -> None:
    """Raise InvalidRequest if a health policy's recovery actions need another profile type."""
    if not isinstance(props, HealthPolicyProperties) or profile_type == NOVA_SERVER:
        return
    for index, action in enumerate(props.recovery.actions):
        if action.builtin is not None:
            raise InvalidRequest(
                f"recovery.actions[{index}].name: Recovery action {action.name} is only "
                f"applicable to {NOVA_SERVER} clusters (profile type is {profile_type})."
            )
