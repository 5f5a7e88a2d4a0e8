"""Heat's `OS::Heat::WaitConditionHandle` and `OS::Heat::WaitCondition`.

A handle is where a server (or anything else) reports back: each signal it receives is
kept in the handle's metadata under its id, as Heat keeps it. A wait condition holds
its stack's operation until its handle has `count` SUCCESS signals, fails at the first
FAILURE, and fails when `timeout` seconds pass first: a durable Temporal wait, so a
wait of hours costs nothing and survives a worker restart.

The handle's `endpoint` is Warden's signal URL for it, which takes a POST without a
token: the URL is the credential, as a Swift TempURL or a CFN-signed URL is in Heat
(Warden has no stack-domain users to mint a Keystone token for). Its `curl_cli` is the
command to POST to it; `token` is empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from domain.errors import InvalidRequest
from domain.stack.state import ResourceState
from domain.stack.types.heat_schema import heat_type

HANDLE: Final = "OS::Heat::WaitConditionHandle"
CONDITION: Final = "OS::Heat::WaitCondition"
HANDLE_TYPE: Final = heat_type(HANDLE)
CONDITION_TYPE: Final = heat_type(CONDITION)

SUCCESS: Final = "SUCCESS"
FAILURE: Final = "FAILURE"
_KEYS: Final = frozenset({"data", "reason", "status", "id"})


def signal_path(signal_id: str) -> str:
    """The path of the token-free signal URL of a handle (or deployment) `signal_id`."""
    return f"/v1/signal/{signal_id}"


def handle_attributes(endpoint: str | None) -> dict[str, Any]:
    """`endpoint`, `curl_cli`, `token` and `signal` of a handle signalled at `endpoint`
    (None: NO_SIGNAL, nothing to signal)."""
    if endpoint is None:
        return {"endpoint": None, "curl_cli": None, "token": None, "signal": "{}"}
    curl = (
        "curl -i -X POST -H 'Content-Type: application/json' "
        f"-H 'Accept: application/json' {endpoint}"
    )
    return {
        "endpoint": endpoint,
        "curl_cli": curl,
        "token": "",
        "signal": json.dumps({"alarm_url": endpoint}),
    }


def normalised_signal(details: object, received: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Heat's `normalise_signal_data` and check: (id, entry) of a signal to a handle
    that has `received` so far; missing values default to a SUCCESS numbered by arrival."""
    number = len(received) + 1
    if details is None:
        details = {}
    if not isinstance(details, Mapping):
        raise InvalidRequest("Metadata format invalid")
    signal = dict(details)
    signal.setdefault("reason", f"Signal {number} received")
    signal.setdefault("data", None)
    signal.setdefault("id", number)
    signal.setdefault("status", SUCCESS)
    if set(signal) != _KEYS or signal["status"] not in (SUCCESS, FAILURE):
        raise InvalidRequest("Metadata format invalid")
    unique = str(signal.pop("id"))
    return unique, signal


def record_signal(
    handle: ResourceState, details: object, now: datetime
) -> tuple[ResourceState, str]:
    """The handle with one more signal in its metadata, and the event's reason (a
    signal with an id already received overwrites it, as in Heat)."""
    key, entry = normalised_signal(details, handle.rsrc_metadata)
    received = {**handle.rsrc_metadata, key: entry}
    changed = handle.model_copy(update={"rsrc_metadata": received, "updated_at": now})
    return changed, f"Signal: {signal_reason(entry)}"


def signal_reason(entry: Mapping[str, Any]) -> str:
    """The event reason Heat writes for a handle's signal."""
    return f"status:{entry['status']} reason:{entry['reason']}"


def wait_outcome(received: Mapping[str, Any], count: int) -> str | None:
    """None while still waiting; "" once `count` SUCCESS signals came; else the failure
    (Heat's `WaitConditionFailure`: the reasons of the FAILURE signals)."""
    statuses = [entry.get("status") for entry in received.values()]
    if any(status != SUCCESS for status in statuses):
        reasons = [str(e.get("reason")) for e in received.values() if e.get("status") == FAILURE]
        return ";".join(reasons) or "Wait condition failed"
    if len(statuses) >= count:
        return ""
    return None


def timeout_message(received: Mapping[str, Any], count: int) -> str:
    """Heat's `WaitConditionTimeout`: how many of `count` arrived, with their reasons."""
    reasons = [str(e.get("reason")) for e in received.values() if e.get("status") == SUCCESS]
    if reasons:
        return f"{len(reasons)} of {count} received - {';'.join(reasons)}"
    return f"{len(reasons)} of {count} received"


def condition_data(received: Mapping[str, Any]) -> str:
    """The wait condition's `data`: each signal's data by id, as JSON."""
    return json.dumps({key: entry.get("data") for key, entry in received.items()})
