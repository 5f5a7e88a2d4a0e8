"""Nova's server rules: statuses, allowed transitions, fault persistence, JSON shape."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from simcloud.errors import SimError
from simcloud.flavors import BY_ID
from simcloud.state import ServerRecord, SimState, Task, isotime

#: vm_state → the `status` Nova shows when no task overrides it.
STATUS = {
    "building": "BUILD",
    "active": "ACTIVE",
    "stopped": "SHUTOFF",
    "paused": "PAUSED",
    "error": "ERROR",
    "deleted": "DELETED",
    "resized": "VERIFY_RESIZE",
}
#: vm_state → nova.compute.power_state (RUNNING 1, PAUSED 3, SHUTDOWN 4, NOSTATE 0).
POWER_STATE = {"active": 1, "paused": 3, "stopped": 4}
#: Fault kinds that hold the server in a vm_state.
FAULT_STATE = {"shutoff": "stopped", "error": "error", "pause": "paused"}
#: Server action → the `cured_by` word that makes it cure a fault.
CURED_BY_ACTION = {
    "reboot": "REBOOT",
    "rebuild": "REBUILD",
    "os-start": "START",
    "unpause": "UNPAUSE",
}

#: action → (allowed vm_states, task_state, status while running, vm_state after, event)
RULES: dict[str, tuple[frozenset[str], str, str | None, str | None, str | None]] = {
    "reboot_soft": (frozenset({"active"}), "rebooting", "REBOOT", "active", None),
    "reboot_hard": (
        frozenset({"active", "stopped", "paused", "error"}),
        "rebooting_hard",
        "HARD_REBOOT",
        "active",
        None,
    ),
    "rebuild": (frozenset({"active", "stopped", "error"}), "rebuilding", "REBUILD", None, None),
    "os-start": (frozenset({"stopped"}), "powering-on", None, "active", None),
    "os-stop": (
        frozenset({"active", "error"}),
        "powering-off",
        None,
        "stopped",
        "compute.instance.power_off.end",
    ),
    "pause": (frozenset({"active"}), "pausing", None, "paused", "compute.instance.pause.end"),
    "unpause": (frozenset({"paused"}), "unpausing", None, "active", None),
    "resize": (
        frozenset({"active", "stopped"}),
        "resize_prep",
        "RESIZE",
        "resized",
        "compute.instance.finish_resize.end",
    ),
    "revertResize": (frozenset({"resized"}), "resize_reverting", "REVERT_RESIZE", None, None),
    # Done at once (no task_state): Nova's confirm and password change.
    "confirmResize": (frozenset({"resized"}), "", None, None, None),
    "changePassword": (frozenset({"active"}), "", None, None, None),
}


def settle(state: SimState, record: ServerRecord, now: float) -> bool:
    """Finish a due transition; False when the server is gone for good."""
    if record.deleted_until is not None:
        if now >= record.deleted_until:
            state.drop_server(record.id)
            return False
        return True
    task = record.task
    if task is not None and now >= task.done_at:
        record.vm_state = task.vm_state
        record.task = None
        record.updated_at = task.done_at
        if task.vm_state == "active" and record.launched_at is None:
            record.launched_at = task.done_at
    return True


def live(state: SimState, server_id: str) -> ServerRecord:
    """The settled server, or Nova's 404."""
    record = state.servers.get(server_id)
    if record is None or not settle(state, record, state.now()):
        raise SimError(404, f"Instance {server_id} could not be found.")
    return record


def status_of(record: ServerRecord) -> str:
    """The `status` field Nova shows right now (call `settle` first)."""
    if record.task is not None:
        return record.task.status
    return STATUS[record.vm_state]


def new_server(
    state: SimState, name: str, image: str, flavor: str, metadata: dict[str, str]
) -> ServerRecord:
    """A server in BUILD that turns ACTIVE after the build latency."""
    now = state.now()
    record = ServerRecord(
        id=str(uuid.uuid4()),
        name=name,
        image_ref=image,
        flavor_ref=flavor,
        metadata=dict(metadata),
        project_id=state.project_id,
        user_id=state.user_id,
        address=state.next_address(),
        created_at=now,
        updated_at=now,
        flavor=state.flavors.get(flavor),
    )
    done = now + state.config.build_latency_ms / 1000
    record.task = Task("spawning", "BUILD", done, "active")
    record.static = {
        "id": record.id,
        "tenant_id": record.project_id,
        "user_id": record.user_id,
        "hostId": uuid.uuid5(uuid.NAMESPACE_DNS, record.project_id).hex,
        "created": isotime(now),
        "addresses": {
            "private": [
                {"addr": record.address, "version": 4, "OS-EXT-IPS:type": "fixed"},
            ]
        },
        "accessIPv4": "",
        "accessIPv6": "",
        "key_name": None,
        "config_drive": "",
        "OS-EXT-AZ:availability_zone": "nova",
        "OS-DCF:diskConfig": "MANUAL",
        "security_groups": [{"name": "default"}],
        "os-extended-volumes:volumes_attached": [],
    }
    state.add_server(record)
    return record


def check_action(record: ServerRecord, action: str) -> None:
    """Nova's 409s: a locked server, or a vm_state/task_state the action forbids."""
    if record.locked and action not in ("lock", "unlock"):
        raise SimError(409, f"Instance {record.id} is locked")
    if action in ("lock", "unlock", "delete"):
        return
    allowed = RULES[action][0]
    verb = action.split("_", maxsplit=1)[0]
    if record.task is not None and not (
        action == "reboot_hard" and record.task.task_state.startswith("rebooting")
    ):
        raise SimError(
            409,
            f"Cannot '{verb}' instance {record.id} while it is in task_state "
            f"{record.task.task_state}",
        )
    if record.vm_state not in allowed:
        raise SimError(
            409, f"Cannot '{verb}' instance {record.id} while it is in vm_state {record.vm_state}"
        )
    if record.launched_at is None:
        # Nova's InstanceInvalidState(attr="launched_at", state=None): with no state to
        # name, raise_http_conflict_for_instance_invalid_state falls back to this wording.
        raise SimError(409, f"Instance {record.id} is in an invalid state for '{verb}'")


def start_action(state: SimState, record: ServerRecord, action: str) -> Task:
    """Begin an allowed action; a fault not cured by it comes back when it ends."""
    _, task_state, shown, after, event = RULES[action]
    cure = CURED_BY_ACTION.get(action.split("_", maxsplit=1)[0])
    fault = record.fault
    if action == "revertResize":
        after = record.before_resize
    elif after is None:  # rebuild keeps a stopped server stopped, like Nova
        after = "stopped" if record.vm_state == "stopped" else "active"
    if fault is not None and cure is not None and cure in fault.cured_by:
        record.fault = None
        after = "active"
    elif fault is not None and fault.kind in FAULT_STATE:
        after = FAULT_STATE[fault.kind]
        if action == "rebuild" and fault.kind == "error":
            event = "compute.instance.rebuild.error"
    now = state.now()
    done = now + state.config.action_latency_ms / 1000
    task = Task(task_state, shown or STATUS[record.vm_state], done, after, event)
    record.task = task
    record.updated_at = now
    return task


def mark_deleted(state: SimState, record: ServerRecord) -> None:
    """Nova's delete: DELETED for the action latency, then 404."""
    now = state.now()
    record.vm_state = "deleted"
    record.task = None
    record.fault = None
    record.updated_at = now
    record.deleted_until = now + state.config.action_latency_ms / 1000


def to_json(record: ServerRecord, base: str) -> dict[str, Any]:
    """The server as Nova 2.73 shows it in `GET /servers/{id}` and `detail`."""
    body = dict(record.static)
    task = record.task
    body["name"] = record.name
    body["status"] = task.status if task is not None else STATUS[record.vm_state]
    body["OS-EXT-STS:vm_state"] = record.vm_state
    body["OS-EXT-STS:task_state"] = task.task_state if task is not None else None
    body["OS-EXT-STS:power_state"] = POWER_STATE.get(record.vm_state, 0)
    body["updated"] = isotime(record.updated_at)
    launched = record.launched_at
    body["OS-SRV-USG:launched_at"] = (
        datetime.fromtimestamp(launched, UTC)
        .replace(tzinfo=None)
        .isoformat(timespec="microseconds")
        if launched is not None
        else None
    )
    body["OS-SRV-USG:terminated_at"] = None
    body["locked"] = record.locked
    body["locked_reason"] = record.locked_reason
    body["metadata"] = record.metadata
    body["tags"] = list(record.tags)
    if record.addresses is not None:
        body["addresses"] = record.addresses()
    body["progress"] = 100 if record.vm_state == "active" and task is None else 0
    # A server booted from a volume shows "" as its image, as Nova does.
    body["image"] = record.image_ref and {
        "id": record.image_ref,
        "links": [{"rel": "bookmark", "href": f"{base}/compute/images/{record.image_ref}"}],
    }
    embedded = record.flavor
    flavor = (
        embedded if embedded and embedded.id == record.flavor_ref else BY_ID.get(record.flavor_ref)
    )
    body["flavor"] = {
        "original_name": flavor.name if flavor else record.flavor_ref,
        "vcpus": flavor.vcpus if flavor else 1,
        "ram": flavor.ram if flavor else 512,
        "disk": flavor.disk if flavor else 1,
        "ephemeral": flavor.ephemeral if flavor else 0,
        "swap": flavor.swap if flavor else 0,
        "extra_specs": dict(flavor.extra_specs) if flavor else {},
    }
    body["links"] = [
        {"rel": "self", "href": f"{base}/compute/v2.1/servers/{record.id}"},
        {"rel": "bookmark", "href": f"{base}/compute/servers/{record.id}"},
    ]
    if record.vm_state == "error":
        fault = {"code": 500, "message": record.fault_message, "created": body["updated"]}
        body["fault"] = fault
    return body


def to_json_text(record: ServerRecord, base: str) -> str:
    """`to_json` as compact JSON text, reused while the server does not change.

    Metadata is never mutated in place (always replaced), so holding the dict the text
    was built from and comparing identity is enough to notice a change.
    """
    addresses = json.dumps(record.addresses()) if record.addresses is not None else None
    key = (
        base,
        addresses,
        record.name,
        record.vm_state,
        record.task,
        record.locked,
        record.locked_reason,
        record.image_ref,
        record.flavor_ref,
        tuple(record.tags),
        record.updated_at,
        record.launched_at,
        record.fault_message,
    )
    cached = record.cached_json
    if cached is not None and cached[0] == key and cached[1] is record.metadata:
        return cached[2]
    text = json.dumps(to_json(record, base), separators=(",", ":"))
    record.cached_json = (key, record.metadata, text)
    return text
