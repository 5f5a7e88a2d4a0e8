"""Health detection and recovery: what probes report and what the rules decide.

The health manager probes every node of a cluster in one batched activity, then
`assess()` turns the probes into a decision under the policy's safety envelope.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.cluster.nodes import NodeState
from domain.cluster.stack_calls import stack_of


class ProbeState(StrEnum):
    """What one probe found; UNKNOWN (e.g. the cloud API is down) never triggers recovery."""

    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"
    UNKNOWN = "UNKNOWN"


class ProbeTarget(BaseModel):
    """A node to probe."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    name: str
    physical_id: str | None = None
    #: Load-balancer member address (LB_STATUS_POLLING matches members by address).
    addresses: list[str] = Field(default_factory=list)
    #: The name of the node's stack when the node is one (`os.heat.stack`): then
    #: NODE_STATUS_POLLING judges the stack, `physical_id` being its id.
    stack_name: str | None = None


def probe_target(node: NodeState) -> ProbeTarget:
    """What a probe needs of a node."""
    stack = stack_of(node)
    return ProbeTarget(
        node_id=node.node_id,
        name=node.name,
        physical_id=node.physical_id,
        stack_name=stack.name if stack else None,
    )


class ProbeRequest(BaseModel):
    """Probe these nodes with the policy's detection modes (its `detection` section)."""

    model_config = ConfigDict(frozen=True)

    cluster_id: str
    #: `HealthPolicyProperties.detection` as JSON (parsed in the activity).
    detection: dict[str, object]
    targets: list[ProbeTarget]
    concurrency: int = Field(20, ge=1, le=500)
    #: Whether a server listing made for another cluster's probe moments ago (at most
    #: `WARDEN_HEALTH_LISTING_MAX_AGE_S`) will do. Health rounds share; a recovery's
    #: verification, which must see the state after its own step, does not.
    share_listing: bool = False


class NodeProbe(BaseModel):
    """One node's result across the detection modes (worst mode wins)."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    state: ProbeState
    reason: str = ""
    #: The compute API's status, when NODE_STATUS_POLLING looked (SHUTOFF, PAUSED, …).
    server_status: str | None = None


class ProbeResult(BaseModel):
    """All nodes' results; `cloud_error` set when a backend could not be asked at all."""

    model_config = ConfigDict(frozen=True)

    probes: list[NodeProbe]
    cloud_error: str = ""
    at: datetime | None = None


class FenceRequest(BaseModel):
    """Make sure an old server can no longer run before its replacement is created."""

    model_config = ConfigDict(frozen=True)

    physical_id: str
    #: Delete it (True) or only power it off (False); either is confirmed before returning.
    delete: bool = True
    timeout_s: int = Field(20, ge=1, le=3600)


class RecoveryStep(BaseModel):
    """One thing to try on a node: a built-in action, an event hint, or a user workflow."""

    model_config = ConfigDict(frozen=True)

    #: REBOOT, REBUILD, RECREATE, START, UNPAUSE, or the user workflow's name.
    name: str
    params: dict[str, object] = Field(default_factory=dict)
    workflow: bool = False


#: Lifecycle events whose cheap fix is tried before the policy's list
#: (docs/api-contract.md §Health policy).
EVENT_HINTS: dict[str, str] = {
    "compute.instance.pause.end": "UNPAUSE",
    "compute.instance.power_off.end": "START",
    "compute.instance.shutdown.end": "START",
}
#: Server statuses with the same cheap fix (seen by NODE_STATUS_POLLING).
STATUS_HINTS: dict[str, str] = {"PAUSED": "UNPAUSE", "SHUTOFF": "START"}
BUILTIN = frozenset({"REBOOT", "REBUILD", "RECREATE"})


def plan_recovery(actions: list[RecoveryStep], *, hint: str | None = None) -> list[RecoveryStep]:
    """The ordered steps for one node: the hint's cheap fix first, then the list.

    `hint` is a notification event type or a server status; an empty list means
    Senlin's default, RECREATE.
    """
    steps = list(actions) or [RecoveryStep(name="RECREATE")]
    cheap = EVENT_HINTS.get(hint or "") or STATUS_HINTS.get((hint or "").upper())
    if cheap and all(s.name != cheap for s in steps):
        steps.insert(0, RecoveryStep(name=cheap))
    return steps


def expand_params(params: dict[str, object], node: dict[str, str]) -> dict[str, object]:
    """`{{ node.physical_id }}`-style placeholders in a user workflow's params."""

    def expand(value: object) -> object:
        if isinstance(value, str):
            for key, replacement in node.items():
                value = value.replace("{{ node.%s }}" % key, replacement)  # noqa: UP031
                value = value.replace("{{node.%s}}" % key, replacement)  # noqa: UP031
            return value
        if isinstance(value, dict):
            return {k: expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [expand(v) for v in value]
        return value

    return {k: expand(v) for k, v in params.items()}


class RecoverParams(BaseModel):
    """`recover {operation?, operation_params?, check?}` (and the health manager's `nodes`,
    `hints`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: str | None = Field(None, max_length=32)
    operation_params: dict[str, str] = Field(default_factory=dict, max_length=4)
    #: Senlin's `check`: refresh each node's status from the cloud first, and recover only
    #: those the check finds unhealthy (or marked unhealthy).
    check: bool = False
    #: Senlin's `check_capacity` (refill to desired_capacity afterwards): refused, 400.
    check_capacity: bool = False
    nodes: list[str] = Field(default_factory=list, max_length=10_000)
    hints: dict[str, str] = Field(default_factory=dict, max_length=10_000)


class RecoveryPlan(BaseModel):
    """Which nodes a recover operation works on, with what, and how carefully."""

    model_config = ConfigDict(frozen=True)

    node_ids: list[str]
    steps: dict[str, list[RecoveryStep]]
    #: Check `node_ids` first; recover only those found unhealthy or marked unhealthy.
    check: bool = False
    detection: dict[str, object] | None = None
    fencing: bool = True
    node_delete_timeout: int = 20
    node_force_recreate: bool = False
    concurrency: int = 1


class HealthView(BaseModel):
    """What the cluster workflow tells its health manager whenever it changes."""

    model_config = ConfigDict(frozen=True)

    targets: list[ProbeTarget] = Field(default_factory=list)
    #: node id → NodeStatus value (RECOVERING/DELETING/CREATING nodes are not judged).
    node_status: dict[str, str] = Field(default_factory=dict)
    #: node id → when the node was created or last recovered (warm-up grace).
    updated_at: dict[str, datetime] = Field(default_factory=dict)
    #: Node ids a user or app marked unhealthy.
    marked: list[str] = Field(default_factory=list)
    #: The cluster runs an operation of its own: checks pause (docs/api-contract.md §Health policy).
    paused: bool = False
    locked: bool = False
    #: The pool of the cluster's load-balancing policy (LB_STATUS_POLLING's default).
    lb_pool: str | None = None


def detection_with_pool(detection: Mapping[str, Any], lb_pool: str | None) -> dict[str, Any]:
    """The policy's `detection` (as JSON) with each LB_STATUS_POLLING mode that names no
    pool reading `lb_pool`, the pool of the cluster's load-balancing policy."""
    modes = []
    for mode in detection.get("detection_modes") or ():
        options = dict(mode.get("options") or {})
        if mode.get("type") == "LB_STATUS_POLLING" and not options.get("pool_id") and lb_pool:
            modes.append({**mode, "options": {**options, "pool_id": lb_pool}})
        else:
            modes.append(mode)
    return {**detection, "detection_modes": modes}


class NodeHealth(BaseModel):
    """The health manager's memory of one node."""

    node_id: str
    name: str
    state: ProbeState = ProbeState.UNKNOWN
    reason: str = ""
    hint: str = ""
    attempts: int = 0
    next_attempt_at: datetime | None = None
    recovering: bool = False
    checked_at: datetime | None = None


class Assessment(BaseModel):
    """What one round decided: per-node health, who to recover, what to warn about."""

    nodes: dict[str, NodeHealth]
    recover: list[str] = Field(default_factory=list)
    hints: dict[str, str] = Field(default_factory=dict)
    warning: str = ""
    changed: list[str] = Field(default_factory=list)


#: Node statuses the health manager leaves alone (something else is changing them).
NOT_JUDGED = frozenset({"RECOVERING", "DELETING", "CREATING", "INIT"})


def judge(
    previous: NodeHealth | None,
    target: ProbeTarget,
    probe: NodeProbe | None,
    view: HealthView,
    *,
    warm_up_s: int,
    now: datetime,
) -> NodeHealth:
    """One node's health after a probe, with the warm-up grace and user marks applied."""
    node = previous or NodeHealth(node_id=target.node_id, name=target.name)
    node = node.model_copy(update={"name": target.name, "checked_at": now})
    if view.node_status.get(target.node_id) in NOT_JUDGED:
        return node
    if target.node_id in view.marked:
        return node.model_copy(
            update={"state": ProbeState.UNHEALTHY, "reason": "marked unhealthy", "hint": ""}
        )
    if probe is None or probe.state == ProbeState.UNKNOWN:
        return node  # no news is not good news: keep what we knew
    if probe.state == ProbeState.UNHEALTHY:
        since = view.updated_at.get(target.node_id)
        if since is not None and (now - since).total_seconds() < warm_up_s:
            return node.model_copy(
                update={"state": ProbeState.HEALTHY, "reason": f"warm-up: {probe.reason}"}
            )
        return node.model_copy(
            update={
                "state": ProbeState.UNHEALTHY,
                "reason": probe.reason,
                "hint": probe.server_status or node.hint,
            }
        )
    return node.model_copy(
        update={
            "state": ProbeState.HEALTHY,
            "reason": "",
            "hint": "",
            "attempts": 0,
            "next_attempt_at": None,
        }
    )


def choose_recoveries(
    nodes: dict[str, NodeHealth],
    *,
    max_unhealthy: int,
    max_concurrent: int,
    retry_limit: int,
    backoff_s: int,
    now: datetime,
) -> Assessment:
    """The safety envelope: how many may be recovered now, and warnings when not."""
    unhealthy = [n for n in nodes.values() if n.state == ProbeState.UNHEALTHY or n.recovering]
    size = len(nodes)
    if len(unhealthy) > max_unhealthy:
        return Assessment(
            nodes=nodes,
            warning=(
                f"{len(unhealthy)} of {size} nodes are unhealthy, above max_unhealthy "
                f"({max_unhealthy}); automatic recovery is paused"
            ),
        )
    gave_up = [n.name for n in unhealthy if n.attempts >= retry_limit and not n.recovering]
    eligible = [
        n
        for n in sorted(unhealthy, key=lambda n: n.name)
        if not n.recovering
        and n.attempts < retry_limit
        and (n.next_attempt_at is None or n.next_attempt_at <= now)
    ]
    slots = max(0, max_concurrent - sum(n.recovering for n in nodes.values()))
    chosen = eligible[:slots]
    updated = dict(nodes)
    for n in chosen:
        attempts = n.attempts + 1
        updated[n.node_id] = n.model_copy(
            update={
                "attempts": attempts,
                "recovering": True,
                "next_attempt_at": now + timedelta(seconds=backoff_s * 2 ** (attempts - 1)),
            }
        )
    warning = (
        f"Automatic recovery gave up on {', '.join(gave_up)} after {retry_limit} attempt(s)"
        if gave_up
        else ""
    )
    return Assessment(
        nodes=updated,
        recover=[n.node_id for n in chosen],
        hints={n.node_id: n.hint for n in chosen if n.hint},
        warning=warning,
    )
