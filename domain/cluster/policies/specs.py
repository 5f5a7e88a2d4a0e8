"""Policy specs: the one entry point for user input, and the policy types Warden runs.

The contract: docs/api-contract.md §Lifecycle hooks and docs/api-contract.md §Health policy.

`parse_policy_spec()` turns `{type, version, properties}` into frozen, typed properties
(`domain.cluster.policies.deletion`, `domain.cluster.policies.health`) or raises
`InvalidRequest` naming the offending path (`spec.properties.hooks.timeout: ...`).
Settings-dependent checks reach the models through the validation context
(`domain.cluster.policies.base`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Final, Literal, Self

from pydantic import ValidationError, model_validator

from domain.cluster.policies.affinity import PROFILE_TYPES as AFFINITY_PROFILE_TYPES
from domain.cluster.policies.affinity import AffinityProperties
from domain.cluster.policies.base import FieldError, SpecModel
from domain.cluster.policies.batch import BatchPolicyProperties
from domain.cluster.policies.deletion import DeletionPolicyProperties
from domain.cluster.policies.health import (
    ACTION_PROFILES,
    DetectionType,
    HealthPolicyProperties,
    RecoveryActionName,
)
from domain.cluster.policies.loadbalance import PROFILE_TYPES as LB_PROFILE_TYPES
from domain.cluster.policies.loadbalance import LoadBalancePolicyProperties
from domain.cluster.policies.scaling import ScalingPolicyProperties
from domain.cluster.policies.zone_placement import PROFILE_TYPES as ZONE_PROFILE_TYPES
from domain.cluster.policies.zone_placement import ZonePlacementProperties
from domain.errors import InvalidRequest, NotFound

SUPPORTED_VERSION: Final = "1.1"


class PolicyType(StrEnum):
    """Policy types Warden implements, as Senlin names them."""

    DELETION = "senlin.policy.deletion"
    HEALTH = "senlin.policy.health"
    BATCH = "senlin.policy.batch"
    SCALING = "senlin.policy.scaling"
    LOADBALANCE = "senlin.policy.loadbalance"
    ZONE_PLACEMENT = "senlin.policy.zone_placement"
    AFFINITY = "senlin.policy.affinity"


PolicyProperties = (
    DeletionPolicyProperties
    | HealthPolicyProperties
    | BatchPolicyProperties
    | ScalingPolicyProperties
    | LoadBalancePolicyProperties
    | ZonePlacementProperties
    | AffinityProperties
)
_MODELS: dict[PolicyType, type[PolicyProperties]] = {
    PolicyType.DELETION: DeletionPolicyProperties,
    PolicyType.HEALTH: HealthPolicyProperties,
    PolicyType.BATCH: BatchPolicyProperties,
    PolicyType.SCALING: ScalingPolicyProperties,
    PolicyType.LOADBALANCE: LoadBalancePolicyProperties,
    PolicyType.ZONE_PLACEMENT: ZonePlacementProperties,
    PolicyType.AFFINITY: AffinityProperties,
}
#: The spec version each type accepts (Senlin's batch and scaling policies never went
#: past 1.0).
_VERSIONS: dict[PolicyType, str] = {
    PolicyType.DELETION: SUPPORTED_VERSION,
    PolicyType.HEALTH: SUPPORTED_VERSION,
    PolicyType.BATCH: "1.0",
    PolicyType.SCALING: "1.0",
    PolicyType.LOADBALANCE: "1.1",
    PolicyType.ZONE_PLACEMENT: "1.0",
    PolicyType.AFFINITY: "1.0",
}
#: Other versions a type also accepts, with the same properties (the load-balancing
#: policy's versions each added an optional property: 1.1 `lb_status_timeout` and
#: `loadbalancer`, 1.2 `availability_zone`, 1.3 `flavor_id`; the deletion policy's 1.0
#: and 1.1 share one schema in Senlin).
_ALSO_ACCEPTED: dict[PolicyType, tuple[str, ...]] = {
    PolicyType.LOADBALANCE: ("1.0", "1.2", "1.3"),
    PolicyType.DELETION: ("1.0",),
}


def policy_type_models() -> list[tuple[str, str, type[PolicyProperties]]]:
    """Each policy type Warden runs: its name, the spec version it accepts, its model."""
    return [(str(t), _VERSIONS[t], model) for t, model in _MODELS.items()]


class ParsedPolicy(SpecModel):
    """A validated policy spec."""

    type: PolicyType
    version: Literal["1.0", "1.1", "1.2", "1.3"] = SUPPORTED_VERSION
    properties: PolicyProperties

    @model_validator(mode="after")
    def _properties_fit_type(self) -> Self:
        if not isinstance(self.properties, _MODELS[self.type]):
            raise FieldError("properties", f"do not belong to a {self.type} policy")
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
        """The spec as stored and shown: what the user gave (as Senlin shows it; each
        reader validates it again, defaults and all), JSON-able, no secret."""
        return self.without_secret().model_dump(mode="json", exclude_unset=True, exclude_none=True)


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
    policy_type = _policy_type(spec.get("type"), spec.get("version"))
    _check_version(spec.get("version"), policy_type)
    properties = spec.get("properties", {})
    if not isinstance(properties, Mapping):
        raise InvalidRequest("spec.properties: must be an object")
    context = {"min_interval": min_interval, "url_allowlist": tuple(url_allowlist)}
    try:
        props = _MODELS[policy_type].model_validate(dict(properties), context=context)
    except ValidationError as exc:
        raise InvalidRequest(describe_validation_error(exc, "spec.properties")) from None
    version = str(spec.get("version"))
    if version not in _ALSO_ACCEPTED.get(policy_type, ()):
        version = _VERSIONS[policy_type]
    return ParsedPolicy(type=policy_type, version=version, properties=props)


def _policy_type(value: Any, version: Any) -> PolicyType:
    if value is None:
        raise InvalidRequest("spec.type: required")
    try:
        return PolicyType(value)
    except ValueError:
        # Senlin's 404: no plugin of that type and version.
        raise NotFound(f"The policy_type '{value}-{version}' could not be found.") from None


def _check_version(value: Any, policy_type: PolicyType) -> None:
    if value is None:
        raise InvalidRequest("spec.version: required")
    # YAML reads `version: 1.1` as a float; Senlin accepts it, so do we.
    text = (
        str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""
    )
    if text != _VERSIONS[policy_type] and text not in _ALSO_ACCEPTED.get(policy_type, ()):
        raise InvalidRequest(
            f"spec.version: unsupported version {value!r} of {policy_type}; "
            f"expected {_VERSIONS[policy_type]}"
        )


def describe_validation_error(exc: ValidationError, prefix: str) -> str:
    """One message naming every offending path below `prefix`, e.g. `spec.properties`."""
    parts = []
    for err in exc.errors():
        loc = [p for p in err["loc"] if p not in DetectionType.__members__]
        cause = (err.get("ctx") or {}).get("error")
        message = err["msg"]
        if isinstance(cause, FieldError):
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
    """Raise InvalidRequest if a health policy's recovery actions need another profile
    type, or a load-balancing policy is bound to nodes that are not servers (Senlin's
    `Policy.attach`)."""
    if isinstance(
        props, LoadBalancePolicyProperties | ZonePlacementProperties | AffinityProperties
    ):
        fits = (
            LB_PROFILE_TYPES
            if isinstance(props, LoadBalancePolicyProperties)
            else ZONE_PROFILE_TYPES
            if isinstance(props, ZonePlacementProperties)
            else AFFINITY_PROFILE_TYPES
        )
        if profile_type.split("-", maxsplit=1)[0] not in fits:
            raise InvalidRequest(f"Policy not applicable on profile type: {profile_type}")
        return
    if not isinstance(props, HealthPolicyProperties):
        return
    for index, action in enumerate(props.recovery.actions):
        if action.builtin is not None:
            ensure_action_fits(action.builtin, profile_type, f"recovery.actions[{index}].name")


def ensure_action_fits(action: RecoveryActionName, profile_type: str, where: str) -> None:
    """Raise InvalidRequest when a built-in recovery action cannot recover nodes of
    `profile_type` (REBOOT a stack, STACK_UPDATE a server)."""
    fits = ACTION_PROFILES[action]
    if profile_type not in fits:
        raise InvalidRequest(
            f"{where}: Recovery action {action.value} is only applicable to "
            f"{' and '.join(fits)} clusters (profile type is {profile_type})."
        )
