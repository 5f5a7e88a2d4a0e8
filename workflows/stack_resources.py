"""What each resource type does on create, update, delete, check, suspend and lock.

Types without I/O (`OS::Heat::None`, `RandomString`, `TestResource`) are handled in
the workflow itself: their waits are durable timers and their randomness comes from
`workflow.random()`, so a replay gives the same values. `OS::Nova::Server` goes through
the idempotent compute activities (a retried create finds the server its first
attempt made, by request id).
"""

from __future__ import annotations

import string
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from activities.recovery import RecoveryActivities
    from domain.recovery import RebuildRequest
    from domain.resource_types import (
        AUTO_SCALING_GROUP,
        NONE,
        RANDOM_STRING,
        SCALING_POLICY,
        SERVER,
        STACK,
        TEST_RESOURCE,
    )
    from domain.servers import ServerInfo, ServerRequest
    from domain.stacks import ResourceState, StackAction, StackLock, StackSpec
    from workflows.cluster_ops import CLOUD_RETRY, POLL_RETRY, SERVER_WAIT
    from workflows.entity import failure_reason
    from workflows.nested_stacks import (
        NestedContext,
        NestedFailed,
        act_on_nested,
        create_group,
        create_nested,
        delete_nested,
        update_group,
        update_nested,
    )

NESTED_STACK = STACK
GROUP = AUTO_SCALING_GROUP
POLICY = SCALING_POLICY
#: Types whose physical resource is a nested stack with its own workflow.
NESTED_TYPES = frozenset({NESTED_STACK, GROUP})
#: Types with no cloud side: a step of theirs can be stopped at any point.
PURE_TYPES = frozenset({NONE, RANDOM_STRING, TEST_RESOURCE, POLICY})

_SEQUENCES = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": string.digits + "abcdef",
    "octdigits": string.octdigits,
}


class Applied(BaseModel):
    """What a create or update left: the physical resource and its attributes."""

    model_config = ConfigDict(frozen=True)

    physical_id: str | None
    reference: str | None
    attributes: dict[str, Any] = Field(default_factory=dict)


class ResourceFailed(Exception):
    """A step failed; `physical_id` names anything it left behind (to clean up)."""

    def __init__(self, reason: str, physical_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.physical_id = physical_id


def _short(resource_id: str) -> str:
    return resource_id.replace("-", "")[:8]


async def _call(activity: Any, arg: Any, *, timeout_s: int = 60, poll: bool = False) -> Any:
    """Run a compute activity; its failure becomes ResourceFailed with the cloud's reason."""
    try:
        return await workflow.execute_activity_method(
            activity,
            arg,
            start_to_close_timeout=timedelta(seconds=timeout_s),
            schedule_to_close_timeout=SERVER_WAIT if poll else None,
            retry_policy=POLL_RETRY if poll else CLOUD_RETRY,
        )
    except ActivityError as err:
        raise ResourceFailed(failure_reason(err)) from err


async def _wait_for(action: str, props: dict[str, Any]) -> None:
    """TestResource's `action_wait_secs` (else `wait_secs`): a durable timer."""
    waits = props.get("action_wait_secs") or {}
    seconds = waits.get(action) if isinstance(waits, dict) else None
    if seconds is None:
        seconds = props.get("wait_secs") or 0
    if seconds:
        await workflow.sleep(timedelta(seconds=int(seconds)))


async def create_resource(
    ctx: NestedContext, name: str, rtype: str, props: dict[str, Any], resource_id: str
) -> Applied:
    """Create the physical resource for `name` (raises ResourceFailed)."""
    if rtype == SERVER:
        return await _create_server(ctx.parent(), name, props, resource_id)
    if rtype in NESTED_TYPES:
        create = create_nested if rtype == NESTED_STACK else create_group
        try:
            attributes = await create(ctx, name, props, resource_id)
        except NestedFailed as err:
            raise ResourceFailed(_nested_reason(err), resource_id) from err
        return Applied(physical_id=resource_id, reference=resource_id, attributes=attributes)
    if rtype == POLICY:
        spec = ctx.parent()
        url = f"/v1/{spec.project_id}/stacks/{spec.name}/{spec.stack_id}/resources/{name}/signal"
        return Applied(
            physical_id=resource_id,
            reference=resource_id,
            attributes={"signal_url": url, "alarm_url": url},
        )
    if rtype == TEST_RESOURCE:
        await _wait_for("create", props)
        if props.get("fail"):
            raise ResourceFailed(f"Test Resource failed {name}")
        value = props.get("value", "")
        return Applied(physical_id=resource_id, reference=resource_id, attributes={"output": value})
    if rtype == RANDOM_STRING:
        chars = _SEQUENCES.get(str(props.get("sequence") or "lettersdigits"), _SEQUENCES["letters"])
        rnd = workflow.random()
        value = "".join(rnd.choice(chars) for _ in range(int(props.get("length") or 32)))
        return Applied(physical_id=resource_id, reference=value, attributes={"value": value})
    # OS::Heat::None (and any type without a physical side): an id and nothing else.
    return Applied(physical_id=resource_id, reference=resource_id, attributes={})


async def _create_server(
    spec: StackSpec, name: str, props: dict[str, Any], resource_id: str
) -> Applied:
    metadata = {str(k): str(v) for k, v in (props.get("metadata") or {}).items()}
    metadata.update({"warden_stack": spec.stack_id, "warden_resource": name})
    request = ServerRequest(
        name=str(props.get("name") or f"{spec.name}-{name}-{_short(resource_id)}"),
        image=str(props["image"]),
        flavor=str(props["flavor"]),
        metadata=metadata,
        request_id=resource_id,
    )
    created: ServerInfo = await _call(ComputeActivities.create_server, request)
    if created.status.upper() == "ACTIVE" and workflow.patched("server-active-at-create"):
        return _server_applied(created)  # no need to wait for what is already there
    try:
        active: ServerInfo = await _call(
            ComputeActivities.wait_server_active, created.physical_id, timeout_s=30, poll=True
        )
    except ResourceFailed as err:
        raise ResourceFailed(err.reason, created.physical_id) from err
    return _server_applied(active)


def _server_applied(info: ServerInfo) -> Applied:
    return Applied(
        physical_id=info.physical_id,
        reference=info.physical_id,
        attributes={
            "name": info.name,
            "addresses": {},
            "networks": {},
            "show": info.model_dump(mode="json"),
        },
    )


def _nested_reason(err: NestedFailed) -> str:
    status = f" is {err.outcome.stack_status}" if err.outcome.stack_status else ""
    return f"Nested stack {err.outcome.stack_id}{status}: {err.outcome.reason}"


async def update_resource(
    ctx: NestedContext, current: ResourceState, props: dict[str, Any]
) -> Applied:
    """Apply new properties in place (only those the type allows to change)."""
    if current.type in NESTED_TYPES:
        update = update_nested if current.type == NESTED_STACK else update_group
        try:
            attributes = await update(ctx, current, props)
        except NestedFailed as err:
            raise ResourceFailed(_nested_reason(err)) from err
        return Applied(
            physical_id=current.physical_id, reference=current.reference, attributes=attributes
        )
    if current.type == SERVER and current.physical_id:
        if props.get("image") != current.resolved.get("image"):
            pid = current.physical_id
            await _call(
                RecoveryActivities.rebuild_server,
                RebuildRequest(physical_id=pid, image=str(props["image"])),
            )
            info = await _call(ComputeActivities.wait_server_active, pid, timeout_s=30, poll=True)
            return _server_applied(info)
        return Applied(
            physical_id=current.physical_id,
            reference=current.reference,
            attributes=current.attributes,
        )
    if current.type == TEST_RESOURCE:
        await _wait_for("update", props)
        if props.get("fail"):
            raise ResourceFailed(f"Test Resource failed {current.name}")
        attributes = {"output": props.get("value", "")}
        return Applied(
            physical_id=current.physical_id, reference=current.reference, attributes=attributes
        )
    return Applied(
        physical_id=current.physical_id, reference=current.reference, attributes=current.attributes
    )


async def delete_physical(
    ctx: NestedContext, rtype: str, physical_id: str | None, props: dict[str, Any]
) -> None:
    """Delete a physical resource and wait until it is gone (gone already is fine)."""
    if rtype in NESTED_TYPES and physical_id:
        try:
            await delete_nested(ctx, physical_id)
        except NestedFailed as err:
            raise ResourceFailed(_nested_reason(err)) from err
        return
    if rtype == TEST_RESOURCE:
        await _wait_for("delete", props)
        return
    if rtype != SERVER or not physical_id:
        return
    await _call(RecoveryActivities.unlock_server, physical_id)
    await _call(ComputeActivities.delete_server, physical_id)
    await _call(ComputeActivities.wait_server_deleted, physical_id, timeout_s=30, poll=True)


async def act_on_resource(
    ctx: NestedContext, current: ResourceState, action: StackAction, lock: StackLock | None
) -> None:
    """check / suspend / resume / lock / unlock one resource (raises ResourceFailed)."""
    if current.type in NESTED_TYPES and current.physical_id:
        try:
            await act_on_nested(ctx, current, action, lock)
        except NestedFailed as err:
            failed = f" (failed: {', '.join(err.outcome.failed)})" if err.outcome.failed else ""
            raise ResourceFailed(_nested_reason(err) + failed) from err
        return
    if current.type != SERVER:
        return
    if not current.physical_id:
        if action == StackAction.CHECK:
            raise ResourceFailed("Server was never created")
        return
    pid = current.physical_id
    if action == StackAction.CHECK:
        await _check_server(pid)
    elif action == StackAction.SUSPEND:
        await _call(RecoveryActivities.pause_server, pid)
    elif action == StackAction.RESUME:
        await _call(RecoveryActivities.unpause_server, pid)
    elif action == StackAction.LOCK and lock is not None and lock.level.value == "all":
        await _call(RecoveryActivities.lock_server, pid)
    elif action in (StackAction.LOCK, StackAction.UNLOCK):
        await _call(RecoveryActivities.unlock_server, pid)


async def _check_server(pid: str) -> None:
    statuses = await _call(ComputeActivities.get_server_statuses, [pid])
    status = statuses.statuses.get(pid)
    if status is None:
        raise ResourceFailed(f"Server {pid} no longer exists")
    if status.upper() != "ACTIVE":
        raise ResourceFailed(f"Server {pid} is {status.upper()}, not ACTIVE")


def has_lock_state(current: ResourceState) -> bool:
    """Whether lock/unlock change this resource (servers and nested stacks)."""
    return (current.type == SERVER or current.type in NESTED_TYPES) and bool(current.physical_id)
