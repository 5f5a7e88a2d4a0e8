"""Membership changes of a cluster: how many nodes to add or remove, and which.

The cluster workflow calls `plan_membership()` in its update validators (so bad
sizes are a 400 before anything is written) and again when it accepts the
operation; victims are then chosen with `choose_victims()`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from domain.actions import ActionName
from domain.cluster.health import RecoverParams, RecoveryPlan, RecoveryStep, plan_recovery
from domain.cluster.lifecycle import DeletionSettings, HookTarget
from domain.cluster.nodes import NodeState, NodeStatus
from domain.cluster.placement import zone_victims
from domain.cluster.policies.deletion import DeletionCriteria, DeletionPolicyProperties
from domain.cluster.policies.health import FencingType, HealthPolicyProperties, RecoveryAction
from domain.cluster.policies.specs import PolicyType, ensure_action_fits
from domain.cluster.scale_actions import SCALE_ACTIONS, decide_scale
from domain.cluster.scaling import (
    ResizeRequest,
    check_scale_count,
    check_size_params,
    plan_resize,
    validate_capacity,
)
from domain.cluster.state import MAX_CAPACITY, ClusterState
from domain.errors import Conflict, InvalidRequest, NotFound
from domain.victims import candidates_from_nodes, select_victims

#: Operations that change a cluster's membership.
MEMBERSHIP_OPERATIONS = frozenset(
    {
        ActionName.CLUSTER_SCALE_OUT,
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_RESIZE,
        ActionName.CLUSTER_DEL_NODES,
        ActionName.NODE_DELETE,
        ActionName.CLUSTER_ADD_NODES,
        ActionName.NODE_CREATE,
    }
)
#: Removals that pause health checks and fire lifecycle hooks.
REMOVALS = frozenset(
    {
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_RESIZE,
        ActionName.CLUSTER_DEL_NODES,
        ActionName.NODE_DELETE,
    }
)


class ScaleParams(BaseModel):
    """`scale_out {count}` / `scale_in {count}`; no count: the scaling policy's, else 1."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int | None = None


class DelNodesParams(BaseModel):
    """`del_nodes {nodes}` and node delete: node ids or names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: list[str] = Field(min_length=1, max_length=MAX_CAPACITY)
    #: `del_nodes` without a deletion policy: destroy the servers (Senlin: false).
    destroy_after_deletion: bool | None = None


class AddNodesParams(BaseModel):
    """`add_nodes {nodes}`: ids of standalone nodes (the API resolved names)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: list[str] = Field(min_length=1, max_length=MAX_CAPACITY)


class NodeCreateParams(BaseModel):
    """A member created by name (`POST /v1/nodes` with a cluster): the API chose its id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=255)
    profile_id: str = Field(min_length=1, max_length=64)
    role: str = Field("", max_length=255)
    metadata: dict[str, Any] = Field(default_factory=dict)


class MembershipPlan(BaseModel):
    """What an operation does to the cluster's size."""

    model_config = ConfigDict(frozen=True)

    desired_capacity: int
    min_size: int
    max_size: int
    add: int = 0
    remove: int = 0
    #: Victims the caller named (del_nodes, node delete); else the policy chooses.
    victim_ids: tuple[str, ...] = ()
    #: Standalone nodes the cluster takes over (add_nodes).
    joining: tuple[str, ...] = ()
    #: Why the action fails without changing anything (a scale Senlin's action refuses).
    refusal: str = ""


M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], params: Mapping[str, Any]) -> M:
    try:
        return model.model_validate(dict(params))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise InvalidRequest(f"{where}: {first['msg']}") from err


def deletion_settings(state: ClusterState) -> DeletionSettings:
    """The attached, enabled deletion policy's settings (defaults without one)."""
    found = _deletion_policy(state)
    if found is None:
        return DeletionSettings()
    policy_id, props = found
    hook = None
    if props.hooks is not None:
        hook = HookTarget(
            policy_id=policy_id,
            type=props.hooks.type,
            url=props.hooks.params.url,
            queue=props.hooks.params.queue,
            timeout=props.hooks.timeout,
        )
    return DeletionSettings(
        destroy_after_deletion=props.destroy_after_deletion,
        grace_period=props.grace_period,
        reduce_desired_capacity=props.reduce_desired_capacity,
        hook=hook,
    )


def removal_settings(
    state: ClusterState, name: ActionName, params: Mapping[str, Any]
) -> DeletionSettings:
    """How an operation's victims are removed: the deletion policy's settings; for
    `del_nodes` without a policy, Senlin's: the caller's `destroy_after_deletion`,
    default false (the nodes leave the cluster and live on standalone, servers kept)."""
    settings = deletion_settings(state)
    if name == ActionName.CLUSTER_DEL_NODES and _deletion_policy(state) is None:
        destroy = bool(params.get("destroy_after_deletion", False))
        settings = settings.model_copy(update={"destroy_after_deletion": destroy})
    return settings


def deletion_criteria(state: ClusterState) -> DeletionCriteria:
    """How victims are chosen after the failed and not-yet-created ones."""
    found = _deletion_policy(state)
    return found[1].criteria if found else DeletionCriteria.RANDOM


def _deletion_policy(state: ClusterState) -> tuple[str, DeletionPolicyProperties] | None:
    """The attached, enabled deletion policy's id and properties, if any."""
    for policy in state.policies:
        if policy.type == PolicyType.DELETION.value and policy.enabled:
            return policy.policy_id, DeletionPolicyProperties.model_validate(policy.properties)
    return None


class ReplaceNodesParams(BaseModel):
    """`replace_nodes {nodes: {member id: standalone node id}}` (the API resolved names)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: dict[str, str] = Field(min_length=1, max_length=MAX_CAPACITY)


def plan_replace(state: ClusterState, params: Mapping[str, Any]) -> dict[str, str]:
    """The members to replace and their replacements, or Senlin's 400."""
    pairs = _parse(ReplaceNodesParams, params).nodes
    if len(set(pairs.values())) != len(pairs):
        raise InvalidRequest("Map contains duplicated values")
    members = {n.node_id for n in state.nodes}
    strangers = [old for old in pairs if old not in members]
    if strangers:
        raise InvalidRequest(
            f"The specified nodes {strangers} to be replaced are not members of the "
            f"cluster {state.spec.cluster_id}."
        )
    owned = [new for new in pairs.values() if new in members]
    if owned:
        raise InvalidRequest(f"Nodes {owned} already member of a cluster.")
    return pairs


def plan_membership(
    state: ClusterState, name: ActionName, params: Mapping[str, Any]
) -> MembershipPlan:
    """Sizes after the operation, or InvalidRequest (400) / NotFound with the reason."""
    spec, current = state.spec, len(state.nodes)
    same = {"min_size": spec.min_size, "max_size": spec.max_size}
    if name in SCALE_ACTIONS:
        return _plan_scale(state, name, _parse(ScaleParams, params).count)
    if name == ActionName.CLUSTER_RESIZE:
        plan = plan_resize(current, spec.min_size, spec.max_size, _parse(ResizeRequest, params))
        return MembershipPlan(
            desired_capacity=plan.desired,
            min_size=plan.min_size,
            max_size=plan.max_size,
            add=max(0, plan.desired - current),
            remove=max(0, current - plan.desired),
        )
    if name in (ActionName.CLUSTER_DEL_NODES, ActionName.NODE_DELETE):
        return _plan_deletion(state, _parse(DelNodesParams, params).nodes)
    if name == ActionName.NODE_CREATE:
        _parse(NodeCreateParams, params)
        desired = state.desired_capacity + 1
        validate_capacity(desired, spec.min_size, spec.max_size)
        return MembershipPlan(desired_capacity=desired, add=1, **same)
    if name == ActionName.CLUSTER_ADD_NODES:
        joining = tuple(dict.fromkeys(_parse(AddNodesParams, params).nodes))
        members = [key for key in joining if key in {n.node_id for n in state.nodes}]
        if members:
            raise InvalidRequest(f"Nodes {members} already owned by some cluster.")
        desired = state.desired_capacity + len(joining)
        validate_capacity(desired, spec.min_size, spec.max_size)
        return MembershipPlan(desired_capacity=desired, joining=joining, **same)
    raise InvalidRequest(f"{name} does not change the cluster's membership")


def _plan_scale(state: ClusterState, name: ActionName, given: int | None) -> MembershipPlan:
    """A scale's sizes: the service's 400s first (a zero count, past the per-cluster
    maximum), then the action's own verdict, which may refuse it (`scale_actions`)."""
    spec, current = state.spec, len(state.nodes)
    same = {"min_size": spec.min_size, "max_size": spec.max_size}
    out = name == ActionName.CLUSTER_SCALE_OUT
    if given is not None:
        check_scale_count(given, "scale-out" if out else "scale-in")
        service_view = state.desired_capacity + given if out else state.desired_capacity - given
        check_size_params(
            service_view, None, None, current_min=spec.min_size, current_max=spec.max_size,
            strict=False,
        )  # fmt: skip
    decision = decide_scale(state, name, given)
    if decision.refusal:
        return MembershipPlan(
            desired_capacity=state.desired_capacity, refusal=decision.refusal, **same
        )
    if out:
        return MembershipPlan(desired_capacity=current + decision.nodes, add=decision.nodes, **same)
    return MembershipPlan(desired_capacity=current - decision.nodes, remove=decision.nodes, **same)


def _plan_deletion(state: ClusterState, wanted: list[str]) -> MembershipPlan:
    spec = state.spec
    by_key = {n.node_id: n for n in state.nodes} | {n.name: n for n in state.nodes}
    missing = [key for key in wanted if key not in by_key]
    if missing:
        raise InvalidRequest(f"Nodes not members of specified cluster: {missing}.")
    victims = list(dict.fromkeys(by_key[key].node_id for key in wanted))
    deleting = [by_key[v].name for v in victims if by_key[v].status == NodeStatus.DELETING]
    if deleting:
        raise Conflict(f"Nodes are already being deleted: {deleting}.")
    desired = state.desired_capacity
    if deletion_settings(state).reduce_desired_capacity:
        desired = max(0, desired - len(victims))
        validate_capacity(desired, spec.min_size, spec.max_size)
    return MembershipPlan(
        desired_capacity=desired,
        min_size=spec.min_size,
        max_size=spec.max_size,
        victim_ids=tuple(victims),
    )


def choose_victims(state: ClusterState, plan: MembershipPlan, rand: random.Random) -> list[str]:
    """Node ids to remove: named ones, else unhealthy first, then by the policy's criteria
    (zone by zone as a zone placement policy's plan says)."""
    if plan.victim_ids:
        return list(plan.victim_ids)
    if plan.remove == 0:
        return []
    zoned = zone_victims(state, plan.remove, deletion_criteria(state), rand)
    if zoned is not None:
        return zoned
    candidates = candidates_from_nodes(state.nodes)
    chosen = select_victims(candidates, plan.remove, deletion_criteria(state), rand=rand)
    return [c.id for c in chosen]


def find_node(state: ClusterState, node_id: str) -> NodeState:
    """A member of the cluster by id (NotFound otherwise)."""
    for node in state.nodes:
        if node.node_id == node_id:
            return node
    raise NotFound(f"The node '{node_id}' could not be found.")


def plan_recover(state: ClusterState, params: Mapping[str, Any]) -> RecoveryPlan:
    """Nodes to recover (named, else those in ERROR/WARNING) and the steps for each.

    With `check`, the nodes to check (named, else all), each recovered only if the check
    finds it unhealthy. An explicit `operation` wins; else the attached health policy's
    ordered list; else Senlin's default, RECREATE. Bad parameters are a 400.
    """
    req = _parse(RecoverParams, params)
    if req.check_capacity:
        raise InvalidRequest(
            "check_capacity: not supported; to bring the cluster back to its desired "
            f"capacity ({state.desired_capacity}), resize it to that capacity after the recover."
        )
    override: list[RecoveryStep] = []
    if req.operation is not None:
        action = _parse(
            RecoveryAction, {"name": req.operation, "params": dict(req.operation_params)}
        )
        if action.builtin is None:
            raise InvalidRequest(
                f"operation: {req.operation!r} is not one of REBOOT, REBUILD, RECREATE, "
                "STACK_UPDATE"
            )
        ensure_action_fits(action.builtin, str(state.profile.get("type", "")), "operation")
        override = [RecoveryStep(name=action.name, params=dict(action.params))]
    elif req.operation_params:
        raise InvalidRequest("operation_params: given without an operation")
    by_key = {n.node_id: n for n in state.nodes} | {n.name: n for n in state.nodes}
    missing = [key for key in req.nodes if key not in by_key]
    if missing:
        raise InvalidRequest(f"Nodes not members of specified cluster: {missing}.")
    chosen = [by_key[k] for k in dict.fromkeys(req.nodes)] or [
        n for n in state.nodes if req.check or n.status in (NodeStatus.ERROR, NodeStatus.WARNING)
    ]
    policy = health_policy(state)
    steps = override or (
        [
            RecoveryStep(name=a.name, params=dict(a.params), workflow=a.type is not None)
            for a in policy.recovery.actions
        ]
        if policy
        else []
    )
    size = len(state.nodes)
    return RecoveryPlan(
        node_ids=[n.node_id for n in chosen],
        steps={n.node_id: plan_recovery(steps, hint=req.hints.get(n.node_id)) for n in chosen},
        check=req.check,
        detection=policy.detection.model_dump(mode="json") if policy else None,
        fencing=FencingType.COMPUTE in policy.recovery.fencing if policy else True,
        node_delete_timeout=policy.recovery.node_delete_timeout if policy else 20,
        node_force_recreate=policy.recovery.node_force_recreate if policy else False,
        concurrency=policy.max_concurrent(size) if policy else max(1, -(-size * 5 // 100)),
    )


def health_policy(state: ClusterState) -> HealthPolicyProperties | None:
    """The attached, enabled health policy, if any."""
    for policy in state.policies:
        if policy.type == PolicyType.HEALTH.value and policy.enabled:
            return HealthPolicyProperties.model_validate(policy.properties)
    return None
