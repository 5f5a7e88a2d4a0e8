"""`senlin.policy.affinity` 1.0: place a cluster's servers by a Nova server group.

Upstream Senlin (`senlin/policies/affinity_policy.py`): attaching the policy finds the
server group it names (`servergroup.name`, else the profile's scheduler hint `group`)
and inherits it when its policy matches, or makes one (`server_group_<random>` when
unnamed, `anti-affinity` unless told); each node created while it is attached carries
the group in `data.placement.servergroup` (and `availability_zone` in
`data.placement.zone`), and its server is made with the scheduler hint `group`, so
Nova's scheduler spreads (or gathers) them. Detaching deletes the group the attach
made, never an inherited one. Only server clusters take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import Field, field_validator

from domain.cluster.policies.base import SpecModel

#: The profile types whose nodes the policy places (Senlin's `PROFILE_TYPE`).
PROFILE_TYPES: Final = ("os.nova.server",)
GroupPolicy = Literal["affinity", "soft-affinity", "anti-affinity", "soft-anti-affinity"]


class ServerGroupSpec(SpecModel):
    """The server group: its name (found or made) and its policy."""

    name: str | None = Field(None, min_length=1, max_length=255)
    policies: GroupPolicy = "anti-affinity"


class AffinityProperties(SpecModel):
    """`senlin.policy.affinity` 1.0 properties."""

    servergroup: ServerGroupSpec = Field(default_factory=ServerGroupSpec)
    availability_zone: str | None = Field(None, min_length=1, max_length=255)
    enable_drs_extension: bool = False

    @field_validator("enable_drs_extension")
    @classmethod
    def _no_drs(cls, value: bool) -> bool:
        if value:
            raise ValueError("vSphere DRS placement is not supported by Warden")
        return value


def group_name(props: AffinityProperties, profile_spec: Mapping[str, Any]) -> str | None:
    """The group the attach looks for: the policy's, else the profile's `group` hint."""
    if props.servergroup.name:
        return props.servergroup.name
    hints = (profile_spec.get("properties") or {}).get("scheduler_hints") or {}
    found = hints.get("group") if isinstance(hints, Mapping) else None
    return str(found) if found else None


def group_policy(body: Mapping[str, Any]) -> str | None:
    """A Nova server group's policy, in any microversion's shape."""
    if body.get("policy"):
        return str(body["policy"])
    policies = body.get("policies")
    return str(policies[0]) if isinstance(policies, list) and policies else None


def mismatch(props: AffinityProperties, body: Mapping[str, Any]) -> str | None:
    """Senlin's refusal to inherit a group whose policy is not the one asked for."""
    existing = group_policy(body)
    if existing is not None and existing != props.servergroup.policies:
        return (
            f"Policies specified ({props.servergroup.policies}) doesn't match that of the "
            f"existing servergroup ({existing})."
        )
    return None
