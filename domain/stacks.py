"""Stack state and the rules that decide which operations it allows (Heat's)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from domain.errors import Conflict, InvalidRequest, NotFound
from domain.groups import GroupMember, GroupSpec, group_members, group_template, scaled_size
from domain.resource_types import AUTO_SCALING_GROUP, SCALING_POLICY
from domain.templates import Template, load_template, resolve_parameters


class StackAction(StrEnum):
    """The ACTION half of Heat's `ACTION_STATUS`."""

    INIT = "INIT"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CHECK = "CHECK"
    SUSPEND = "SUSPEND"
    RESUME = "RESUME"
    LOCK = "LOCK"
    UNLOCK = "UNLOCK"
    ROLLBACK = "ROLLBACK"


class Status(StrEnum):
    """The STATUS half of Heat's `ACTION_STATUS`."""

    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class LockLevel(StrEnum):
    """`stacks` locks the stack tree; `all` also locks every resource that can be."""

    STACKS = "stacks"
    ALL = "all"


#: The reason Heat records when nobody gives one.
DEFAULT_UNHEALTHY_REASON = "state changed by resource_mark_unhealthy api"


class StackLock(BaseModel):
    """Who locked the stack, at which level, and why."""

    model_config = ConfigDict(frozen=True)

    level: LockLevel = LockLevel.ALL
    reason: str = ""
    owner: str = ""
    locked_at: datetime
    #: Set on a nested stack locked with its parent: only the parent may unlock it.
    parent_id: str | None = None


class ResourceState(BaseModel):
    """One resource of a stack as its workflow knows it."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str
    #: Stable id of the current physical generation (new on every replacement).
    resource_id: str
    physical_id: str | None = None
    #: What `get_resource` returns (the physical id, or a RandomString's value).
    reference: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    #: The static properties last applied (parameters resolved, references as written).
    properties: dict[str, Any] = Field(default_factory=dict)
    #: The fully resolved properties last applied (what the cloud was asked for).
    resolved: dict[str, Any] = Field(default_factory=dict)
    action: StackAction = StackAction.INIT
    status: Status = Status.COMPLETE
    status_reason: str = ""
    #: How many physical generations this resource has had (request ids use it).
    generation: int = 0
    #: Whether level `all` locked its physical resource.
    locked: bool = False
    #: Marked unhealthy by a user or app (a nested stack marked so is replaced whole).
    marked: bool = False
    created_at: datetime
    updated_at: datetime

    @property
    def state(self) -> str:
        """`ACTION_STATUS`, as the API shows it."""
        return f"{self.action.value}_{self.status.value}"

    @property
    def failed(self) -> bool:
        """Whether the next update replaces it (any FAILED state, CHECK_FAILED included)."""
        return self.status == Status.FAILED


class StackSpec(BaseModel):
    """What does not change over a stack's life."""

    model_config = ConfigDict(frozen=True)

    stack_id: str
    project_id: str
    name: str
    parent_id: str | None = None
    parent_resource: str | None = None


class StackOperation(BaseModel):
    """The operation a stack is busy with."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    action: StackAction
    #: The template and parameters this operation moves the stack to (create/update).
    template: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None
    lock: StackLock | None = None
    #: Workflow id of a parent's operation waiting for this one (nested stacks).
    notify: str | None = None
    #: Scaling groups of this stack to resize to these sizes (a scaling signal).
    group_sizes: dict[str, int] = Field(default_factory=dict)


class StackState(BaseModel):
    """The stack as its entity workflow knows it (the source of truth)."""

    spec: StackSpec
    template: dict[str, Any] = Field(default_factory=dict)
    #: Parameter values the user gave (defaults are applied at resolve time).
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_mins: int | None = None
    disable_rollback: bool = True
    action: StackAction = StackAction.INIT
    status: Status = Status.COMPLETE
    status_reason: str = "Stack is initializing"
    resources: dict[str, ResourceState] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    lock: StackLock | None = None
    busy: StackOperation | None = None
    #: Suspended (servers paused) until a resume completes, whatever ran in between.
    suspended: bool = False
    deleted: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def state(self) -> str:
        """`ACTION_STATUS`, as the API shows it."""
        return f"{self.action.value}_{self.status.value}"

    @property
    def locked(self) -> bool:
        """Whether maintenance mode refuses other operations (LOCK in progress or done)."""
        return self.action == StackAction.LOCK and self.status != Status.FAILED


#: Operations a stack in LOCK_FAILED / UNLOCK_FAILED still allows (Heat's table in
#: docs/openstack-designs.md §Heat stack lock).
_AFTER_FAILED_LOCK = {
    (StackAction.LOCK, Status.FAILED): frozenset({StackAction.DELETE}),
    (StackAction.UNLOCK, Status.FAILED): frozenset({StackAction.DELETE}),
}


def ensure_can_start(state: StackState, action: StackAction) -> None:
    """Raise Conflict unless `action` (create, update, delete, check, suspend, resume) may start."""
    name = state.spec.name
    if state.deleted:
        raise NotFound(f"The Stack ({name}) could not be found.")
    _ensure_idle(state)
    if state.locked:
        raise Conflict(f"Stack {name} is locked{_lock_suffix(state.lock)}; unlock it first.")
    allowed = _AFTER_FAILED_LOCK.get((state.action, state.status))
    if allowed is not None and action not in allowed:
        raise Conflict(_failed_lock_message(state))
    if action == StackAction.CREATE:
        if state.action != StackAction.INIT:
            raise Conflict(f"Stack {name} already exists.")
        return
    if state.action == StackAction.INIT:
        raise Conflict(f"Stack {name} is not created yet.")
    if action == StackAction.RESUME and not (
        state.suspended or state.action == StackAction.SUSPEND
    ):
        raise Conflict(f"Stack {name} is {state.state}: only a suspended stack can be resumed.")
    if action == StackAction.SUSPEND and state.suspended:
        raise Conflict(f"Stack {name} is already suspended.")


def _failed_lock_message(state: StackState) -> str:
    also = "lock, " if state.action == StackAction.LOCK else ""
    return (
        f"Stack {state.spec.name} is {state.state}: only {also}unlock and delete are "
        f"allowed; unlock it first."
    )


def ensure_can_lock(state: StackState) -> None:
    """Lock from a *_COMPLETE stack (not INIT/DELETE), from LOCK_COMPLETE or LOCK_FAILED."""
    name = state.spec.name
    if state.deleted:
        raise NotFound(f"The Stack ({name}) could not be found.")
    _ensure_idle(state)
    if state.action == StackAction.LOCK and state.status in (Status.COMPLETE, Status.FAILED):
        return
    if state.status == Status.COMPLETE and state.action not in (
        StackAction.INIT,
        StackAction.DELETE,
    ):
        return
    raise Conflict(f"Stack {name} cannot be locked while it is {state.state}.")


def ensure_can_unlock(state: StackState, *, by_parent: bool = False) -> None:
    """Unlock from LOCK_COMPLETE, LOCK_FAILED or UNLOCK_FAILED.

    A nested stack locked with its parent is unlocked with the parent, not alone.
    """
    name = state.spec.name
    if state.deleted:
        raise NotFound(f"The Stack ({name}) could not be found.")
    _ensure_idle(state)
    lock = state.lock
    if lock is not None and lock.parent_id and not by_parent and state.locked:
        raise Conflict(
            f"Stack {name} is locked with its parent stack {lock.parent_id}; unlock that one."
        )
    if state.state not in ("LOCK_COMPLETE", "LOCK_FAILED", "UNLOCK_FAILED"):
        raise Conflict(f"Stack {name} is not locked (it is {state.state}).")


def ensure_can_cancel_update(state: StackState) -> None:
    """cancel_update only means something while an update runs."""
    if state.busy is None or state.busy.action != StackAction.UPDATE:
        raise Conflict(
            f"Cancelling update when stack is {state.state} is not allowed; "
            f"it must be UPDATE_IN_PROGRESS."
        )


def _ensure_idle(state: StackState) -> None:
    if state.busy is not None:
        raise Conflict(
            f"Stack {state.spec.name} already has an action ({state.busy.action.value}) "
            f"in progress."
        )


def _lock_suffix(lock: StackLock | None) -> str:
    if lock is None:
        return ""
    who = f" by {lock.owner}" if lock.owner else ""
    why = f": {lock.reason}" if lock.reason else ""
    return f" (level {lock.level.value}{who}{why})"


# ---- mark unhealthy (docs/api-contract.md §Mark unhealthy) ----
# After Heat's design: docs/openstack-designs.md §Heat mark-unhealthy.


class MarkResourceRequest(BaseModel):
    """`PATCH …/resources/{resource_name}` as the stack workflow receives it."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    #: A resource name, or a physical id unique in the stack.
    resource_name: str
    mark_unhealthy: bool
    resource_status_reason: str = ""


def find_resource(state: StackState, key: str) -> ResourceState:
    """A resource by name, else by physical id (ambiguous → 400, unknown → 404)."""
    if key in state.resources:
        return state.resources[key]
    matches = [r for r in state.resources.values() if r.physical_id == key]
    if len(matches) > 1:
        names = ", ".join(sorted(r.name for r in matches))
        raise InvalidRequest(
            f"Multiple resources ({names}) of stack {state.spec.name} have the physical "
            f"resource id {key}; use the resource name."
        )
    if not matches:
        raise NotFound(f"The Resource ({key}) could not be found in Stack {state.spec.name}.")
    return matches[0]


def ensure_can_mark(state: StackState, key: str) -> ResourceState:
    """Raise unless a resource may be marked now; returns the resource."""
    if state.deleted:
        raise NotFound(f"The Stack ({state.spec.name}) could not be found.")
    _ensure_idle(state)
    if state.locked:
        raise Conflict(
            f"Stack {state.spec.name} is locked{_lock_suffix(state.lock)}; unlock it first."
        )
    if (state.action, state.status) in _AFTER_FAILED_LOCK:
        raise Conflict(_failed_lock_message(state))
    return find_resource(state, key)


def mark_resource(
    resource: ResourceState, req: MarkResourceRequest, at: datetime
) -> ResourceState | None:
    """The resource after the mark, or None when the rules say nothing changes."""
    if resource.action == StackAction.DELETE:
        return None  # being (or already) deleted: marking it means nothing
    if req.mark_unhealthy:
        reason = req.resource_status_reason or DEFAULT_UNHEALTHY_REASON
        return resource.model_copy(
            update={
                "action": StackAction.CHECK,
                "status": Status.FAILED,
                "status_reason": reason,
                "marked": True,
                "updated_at": at,
            }
        )
    if resource.state != "CHECK_FAILED":
        return None
    return resource.model_copy(
        update={
            "action": StackAction.CHECK,
            "status": Status.COMPLETE,
            "status_reason": req.resource_status_reason or DEFAULT_UNHEALTHY_REASON,
            "marked": False,
            "updated_at": at,
        }
    )


# ---- requests the API sends ----


class StackOperationRequest(BaseModel):
    """An operation on a stack: create/update carry a template, the rest nothing."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    template: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None
    timeout_mins: int | None = None
    disable_rollback: bool | None = None
    #: PATCH: keep the current template unless one is given, merge parameters.
    existing: bool = False
    #: Workflow id of a parent's operation waiting for the outcome (nested stacks).
    notify: str | None = None
    #: A scaling group's nested stack: resize to this (it picks the victims itself).
    group: GroupSpec | None = None


#: Types the template language knows but this Warden cannot run yet: refused with 400
#: rather than silently created as nothing.
NOT_YET_SUPPORTED: frozenset[str] = frozenset()


def ensure_supported(template: Template) -> None:
    """Refuse resource types Warden validates but cannot create yet."""
    for name, resource in sorted(template.resources.items()):
        if resource.type in NOT_YET_SUPPORTED:
            raise InvalidRequest(
                f"resources.{name}.type: The Resource Type ({resource.type}) is not "
                f"supported by this Warden yet."
            )


def template_object(raw: dict[str, Any] | str) -> dict[str, Any]:
    """A template property (object or YAML/JSON text) as JSON-safe data (dates as text)."""
    if isinstance(raw, dict):
        return raw
    load_template(raw)  # a 400 naming the problem if the text is not a template
    parsed: dict[str, Any] = json.loads(json.dumps(yaml.safe_load(raw), default=str))
    return parsed


def _placeholder_names() -> Callable[[], str]:
    counter = iter(range(1_000_000))
    return lambda: f"member-{next(counter)}"


def target_of(
    state: StackState,
    req: StackOperationRequest,
    new_name: Callable[[], str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The template and parameters a create/update moves the stack to (400 if invalid).

    `new_name` names new scaling-group members (workflows pass one built on
    `workflow.random()`; validators leave it out and get placeholders).
    """
    if req.group is not None:
        members = [
            GroupMember(
                name=r.name,
                failed=r.failed,
                created=r.physical_id is not None,
                created_at=r.created_at,
            )
            for r in sorted(state.resources.values(), key=lambda r: (r.created_at, r.name))
        ]
        names = group_members(members, req.group.size, new_name or _placeholder_names())
        return group_template(req.group.member, names), {}
    if req.existing:
        template = req.template if req.template is not None else state.template
        parameters = {**state.parameters, **(req.parameters or {})}
    else:
        if req.template is None:
            raise InvalidRequest("template: a template is required.")
        template, parameters = req.template, dict(req.parameters or {})
    loaded = load_template(template)
    ensure_supported(loaded)
    resolve_parameters(loaded, parameters, pseudo=pseudo_parameters(state.spec))
    return template, parameters


def pseudo_parameters(spec: StackSpec) -> dict[str, Any]:
    """Heat's pseudo parameters (`get_param: OS::stack_name`, …)."""
    return {
        "OS::stack_name": spec.name,
        "OS::stack_id": spec.stack_id,
        "OS::project_id": spec.project_id,
    }


class LockStackRequest(BaseModel):
    """`{"lock": {"level", "reason", "owner"}}`."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    level: LockLevel = LockLevel.ALL
    reason: str = ""
    owner: str = ""
    notify: str | None = None


class StackAccepted(BaseModel):
    """What a stack operation answers: its action id and the stack's state."""

    model_config = ConfigDict(frozen=True)

    action_id: str
    stack_status: str


# ---- scaling signals ----


class ResourceSignalRequest(BaseModel):
    """`POST …/resources/{resource_name}/signal` as the stack workflow receives it."""

    model_config = ConfigDict(frozen=True)

    action_id: str | None = None
    resource_name: str
    details: dict[str, Any] = Field(default_factory=dict)


class ScalingPlan(BaseModel):
    """What a scaling signal does: resize `group` from `current` to `size`, or nothing."""

    model_config = ConfigDict(frozen=True)

    policy: str
    group: str
    current: int
    size: int
    #: Why nothing happens (cooldown, already at a bound); empty when the group resizes.
    ignored: str = ""


def plan_scaling_signal(
    state: StackState, req: ResourceSignalRequest, now: datetime
) -> ScalingPlan:
    """Heat's scaling-policy signal: 409 when busy/locked, 400 for a non-policy, cooldown."""
    policy, group = scaling_target(state, req)
    props = policy.resolved
    current = int(group.attributes.get("current_size", 0))
    size = scaled_size(props, group.resolved, current)
    plan = ScalingPlan(policy=policy.name, group=group.name, current=current, size=size)
    cooldown = int(props.get("cooldown") or group.resolved.get("cooldown") or 0)
    last = policy.attributes.get("last_adjustment")
    if last and cooldown and (now - datetime.fromisoformat(last)).total_seconds() < cooldown:
        return plan.model_copy(update={"ignored": f"in cooldown ({cooldown} s) since {last}"})
    if size == current:
        bounds = f"[{group.resolved.get('min_size')}, {group.resolved.get('max_size')}]"
        return plan.model_copy(
            update={"ignored": f"{group.name} stays at {current} member(s) (bounds {bounds})"}
        )
    return plan


def scaling_target(
    state: StackState, req: ResourceSignalRequest
) -> tuple[ResourceState, ResourceState]:
    """The scaling policy signalled and the group it resizes (409 busy/locked, 400 else)."""
    ensure_can_start(state, StackAction.UPDATE)
    policy = find_resource(state, req.resource_name)
    if policy.type != SCALING_POLICY:
        raise InvalidRequest(
            f"Resource {policy.name} ({policy.type}) of stack {state.spec.name} does not "
            f"accept signals."
        )
    props = policy.resolved
    target = str(props.get("auto_scaling_group_id", ""))
    groups = [
        r
        for r in state.resources.values()
        if r.type == AUTO_SCALING_GROUP and target in (r.physical_id, r.name)
    ]
    if not groups:
        raise InvalidRequest(
            f"Scaling group {target} of policy {policy.name} is not a resource of stack "
            f"{state.spec.name}."
        )
    return policy, groups[0]
