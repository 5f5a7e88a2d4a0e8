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
    from domain.servers import ServerInfo, ServerRequest
    from domain.stacks import ResourceState, StackSpec
    from workflows.cluster_ops import CLOUD_RETRY, POLL_RETRY, SERVER_WAIT
    from workflows.entity import failure_reason

SERVER = "OS::Nova::Server"
TEST_RESOURCE = "OS::Heat::TestResource"
RANDOM_STRING = "OS::Heat::RandomString"

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
    """TestResource's `action_wait_secs`: a durable timer, skipped by the test server."""
    waits = props.get("action_wait_secs") or {}
    seconds = waits.get(action, 0) if isinstance(waits, dict) else 0
    if seconds:
        await workflow.sleep(timedelta(seconds=int(seconds)))


async def create_resource(
    spec: StackSpec, name: str, rtype: str, props: dict[str, Any], resource_id: str
) -> Applied:
    """Create the physical resource for `name` (raises ResourceFailed)."""
    if rtype == SERVER:
        return await _create_server(spec, name, props, resource_id)
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


async def update_resource(
    spec: StackSpec, current: ResourceState, props: dict[str, Any]
) -> Applied:
    """Apply new properties in place (only those the type allows to change)."""
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


async def delete_physical(rtype: str, physical_id: str | None, props: dict[str, Any]) -> None:
    """Delete a physical resource and wait until it is gone (gone already is fine)."""
    if rtype == TEST_RESOURCE:
        await _wait_for("delete", props)
        return
    if rtype != SERVER or not physical_id:
        return
    await _call(RecoveryActivities.unlock_server, physical_id)
    await _call(ComputeActivities.delete_server, physical_id)
    await _call(ComputeActivities.wait_server_deleted, physical_id, timeout_s=30, poll=True)


async def check_resource(current: ResourceState) -> None:
    """Raise ResourceFailed unless the physical resource is as Warden left it."""
    if current.type != SERVER:
        return
    if not current.physical_id:
        raise ResourceFailed("Server was never created")
    statuses = await _call(ComputeActivities.get_server_statuses, [current.physical_id])
    status = statuses.statuses.get(current.physical_id)
    if status is None:
        raise ResourceFailed(f"Server {current.physical_id} no longer exists")
    if status.upper() != "ACTIVE":
        raise ResourceFailed(f"Server {current.physical_id} is {status.upper()}, not ACTIVE")


async def suspend_resource(current: ResourceState) -> None:
    """Pause a server; other types have nothing to suspend."""
    if current.type == SERVER and current.physical_id:
        await _call(RecoveryActivities.pause_server, current.physical_id)


async def resume_resource(current: ResourceState) -> None:
    """Unpause a server; other types have nothing to resume."""
    if current.type == SERVER and current.physical_id:
        await _call(RecoveryActivities.unpause_server, current.physical_id)


def can_lock(current: ResourceState) -> bool:
    """Whether level `all` locks this resource (servers, through the compute API)."""
    return current.type == SERVER and bool(current.physical_id)


async def lock_resource(current: ResourceState, locked: bool) -> None:
    """Lock or unlock a server through the compute API."""
    if can_lock(current):
        activity = RecoveryActivities.lock_server if locked else RecoveryActivities.unlock_server
        await _call(activity, current.physical_id)
