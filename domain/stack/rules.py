"""Heat's rules for which operations a stack allows now, and what they target.

Every rule is `ensure_can_<operation>(state, request)` and raises a `WardenError`
(409 Conflict, 400, 404) to refuse. The `StackWorkflow` applies each in its update's
validator and again under its mutex (`workflows/stack/messages.py` binds them to the
operations).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import yaml

from domain.errors import Conflict, InvalidRequest, NotFound, NotSupported
from domain.guards import ensure_idle, locked_conflict
from domain.hot.template import Template, conditioned, load_template, resolve_parameters
from domain.stack.groups import GroupMember, group_target, scaled_size
from domain.stack.hooks import check_unset_hook
from domain.stack.requests import (
    LockStackRequest,
    MarkResourceRequest,
    ResourceSignalRequest,
    ScalingPlan,
    StackOperationRequest,
    UnsetHookRequest,
)
from domain.stack.resource_types import AUTO_SCALING_GROUP, SCALING_POLICY
from domain.stack.state import (
    RETARGETING,
    ResourceState,
    StackAction,
    StackLock,
    StackState,
    Status,
    pseudo_parameters,
)
from domain.stack.types.wait_condition import HANDLE, normalised_signal

#: Operations a stack in LOCK_FAILED / UNLOCK_FAILED still allows (Heat's table in
#: docs/openstack-designs.md §Heat stack lock).
_AFTER_FAILED_LOCK = {
    (StackAction.LOCK, Status.FAILED): frozenset({StackAction.DELETE}),
    (StackAction.UNLOCK, Status.FAILED): frozenset({StackAction.DELETE}),
}


def ensure_can_run(action: StackAction) -> Callable[[StackState, StackOperationRequest], None]:
    """The rule of an operation a `stack-op` child carries out (create, update, …)."""

    def ensure_can_run_it(state: StackState, req: StackOperationRequest) -> None:
        ensure_can_start(state, action)
        if action in RETARGETING:
            target_of(state, req)

    return ensure_can_run_it


def ensure_can_start(state: StackState, action: StackAction) -> None:
    """Raise Conflict unless `action` (create, update, delete, check, suspend, resume) may start."""
    name = state.spec.name
    if state.deleted:
        raise NotFound(f"The Stack ({name}) could not be found.")
    _ensure_idle(state)
    if state.locked:
        raise locked_conflict("Stack", name, _describe(state.lock))
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
        raise Conflict(
            f"Stack {name} is {state.stack_status}: only a suspended stack can be resumed."
        )
    if action == StackAction.SUSPEND and state.suspended:
        raise Conflict(f"Stack {name} is already suspended.")


def _failed_lock_message(state: StackState) -> str:
    also = "lock, " if state.action == StackAction.LOCK else ""
    return (
        f"Stack {state.spec.name} is {state.stack_status}: only {also}unlock and delete are "
        f"allowed; unlock it first."
    )


def ensure_can_lock(state: StackState, req: LockStackRequest | None = None) -> None:
    """Lock (or change the lock's level): from a *_COMPLETE stack (not INIT/DELETE),
    from LOCK_COMPLETE or LOCK_FAILED."""
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
    raise Conflict(f"Stack {name} cannot be locked while it is {state.stack_status}.")


def ensure_can_unlock(state: StackState, req: StackOperationRequest | None = None) -> None:
    """Unlock from LOCK_COMPLETE, LOCK_FAILED or UNLOCK_FAILED.

    A nested stack locked with its parent is unlocked with the parent (a request that
    notifies a parent), not alone.
    """
    by_parent = req is not None and req.notify is not None
    name = state.spec.name
    if state.deleted:
        raise NotFound(f"The Stack ({name}) could not be found.")
    _ensure_idle(state)
    lock = state.lock
    if lock is not None and lock.parent_id and not by_parent and state.locked:
        raise Conflict(
            f"Stack {name} is locked with its parent stack {lock.parent_id}; unlock that one."
        )
    if state.stack_status not in ("LOCK_COMPLETE", "LOCK_FAILED", "UNLOCK_FAILED"):
        raise Conflict(f"Stack {name} is not locked (it is {state.stack_status}).")


def ensure_can_cancel_update(state: StackState, req: StackOperationRequest | None = None) -> None:
    """cancel_update only means something while an update runs (Heat's 400 otherwise)."""
    if state.busy is None or state.busy.action != StackAction.UPDATE:
        raise NotSupported(
            f"Cancelling update when stack is {state.stack_status} is not supported."
        )


def ensure_can_cancel_without_rollback(
    state: StackState, req: StackOperationRequest | None = None
) -> None:
    """cancel_without_rollback stops a running create or update (Heat's 400 otherwise)."""
    if state.busy is None or state.busy.action not in (StackAction.CREATE, StackAction.UPDATE):
        raise NotSupported(
            f"Cancelling update when stack is {state.stack_status} is not supported."
        )


def ensure_can_unset_hook(state: StackState, req: UnsetHookRequest) -> None:
    """Heat's checks of `unset_hook`: a hook type the resource has, on a busy stack
    (only a running operation waits at a hook)."""
    check_unset_hook(state.hooks, req.resource_name, req.hook)
    if state.busy is None:
        raise InvalidRequest(f'The "{req.hook}" hook is not defined on {req.resource_name}')


def ensure_can_signal(state: StackState, req: ResourceSignalRequest) -> None:
    """A scaling policy's signal (whether it resizes is decided when it is handled)."""
    scaling_target(state, req)


def ensure_can_deliver(state: StackState, req: ResourceSignalRequest) -> None:
    """A signal to a wait condition handle, well-formed (Heat's `Metadata format
    invalid` otherwise). While an operation runs it is passed on (the operation knows the
    resources it made); on an idle stack the handle must exist."""
    if not req.deployment:
        normalised_signal(req.details, {})
    if state.busy is not None:
        return
    handle = find_resource(state, req.resource_name)
    if req.deployment:
        return  # no step waits for it: the record keeps what it has, as Heat's does
    if handle.type != HANDLE:
        raise InvalidRequest(
            f"Resource {handle.name} ({handle.type}) of stack {state.spec.name} does not "
            f"accept signals."
        )
    normalised_signal(req.details, handle.rsrc_metadata)


def _ensure_idle(state: StackState) -> None:
    ensure_idle("Stack", state.spec.name, state.busy.action.value if state.busy else None)


def _describe(lock: StackLock | None) -> str:
    return lock.describe() if lock is not None else ""


# ---- mark unhealthy (docs/api-contract.md §Mark unhealthy) ----
# After Heat's design: docs/openstack-designs.md §Heat mark-unhealthy.


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


def ensure_can_mark(state: StackState, req: MarkResourceRequest) -> ResourceState:
    """Mark a resource unhealthy or clear the mark: refused unless the stack is idle and
    unlocked; returns the resource (named, or by a physical id unique in the stack)."""
    if state.deleted:
        raise NotFound(f"The Stack ({state.spec.name}) could not be found.")
    _ensure_idle(state)
    if state.locked:
        raise locked_conflict("Stack", state.spec.name, _describe(state.lock))
    if (state.action, state.status) in _AFTER_FAILED_LOCK:
        raise Conflict(_failed_lock_message(state))
    return find_resource(state, req.resource_name)


# ---- the template and parameters an operation moves the stack to ----

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
        old = (state.template or {}).get("resources") or {}
        return group_target(members, req.group, old, new_name or _placeholder_names()), {}
    if req.existing:
        template = req.template if req.template is not None else state.template
        parameters = {**state.parameters, **(req.parameters or {})}
    else:
        if req.template is None:
            raise InvalidRequest("template: a template is required.")
        template, parameters = req.template, dict(req.parameters or {})
    loaded = load_template(template)
    ensure_supported(loaded)
    conditioned(
        loaded, resolve_parameters(loaded, parameters, pseudo=pseudo_parameters(state.spec))
    )
    return template, parameters


# ---- scaling signals ----


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
