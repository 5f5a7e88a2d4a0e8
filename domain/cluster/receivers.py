"""Senlin's webhook receivers: a URL that runs one cluster action when called.

An alarm service (Aodh, Prometheus' Alertmanager, a script) calls the receiver's
`alarm_url`; the action runs with the receiver's `params`, over which the call's own
parameters are laid. As in Senlin, the call's parameters that the action does not take
are ignored: an alarm's own JSON body (`alarm_name`, `current`, …) is posted there too.
A locked cluster refuses the action like any other (409).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from domain.actions import ActionName
from domain.errors import InvalidRequest

#: The actions a receiver may run, with the Senlin action key of each and the
#: parameters it takes.
RECEIVER_ACTIONS: Final[dict[str, tuple[str, frozenset[str]]]] = {
    ActionName.CLUSTER_SCALE_OUT: ("scale_out", frozenset({"count"})),
    ActionName.CLUSTER_SCALE_IN: ("scale_in", frozenset({"count"})),
    ActionName.CLUSTER_RESIZE: (
        "resize",
        frozenset({"adjustment_type", "number", "min_size", "max_size", "min_step", "strict"}),
    ),
    ActionName.CLUSTER_CHECK: ("check", frozenset()),
    ActionName.CLUSTER_RECOVER: ("recover", frozenset({"operation", "operation_params", "check"})),
}
WEBHOOK: Final = "webhook"


def check_receiver(receiver_type: str, action: str, params: Mapping[str, Any]) -> None:
    """A receiver Warden can run, or InvalidRequest saying what is wrong."""
    if receiver_type != WEBHOOK:
        raise InvalidRequest(f"Receiver type {receiver_type!r} is not supported; use 'webhook'.")
    if action not in RECEIVER_ACTIONS:
        allowed = ", ".join(RECEIVER_ACTIONS)
        raise InvalidRequest(
            f"action: {action!r} cannot be run by a receiver; use one of {allowed}."
        )
    unknown = sorted(set(params) - RECEIVER_ACTIONS[action][1])
    if unknown:
        raise InvalidRequest(f"params: {action} does not take {', '.join(unknown)}.")


def triggered_action(
    action: str, stored: Mapping[str, Any], given: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The Senlin action key and its parameters for one call of the webhook: the
    receiver's own, overlaid with the call's, keeping only those the action takes."""
    key, accepted = RECEIVER_ACTIONS[action]
    merged = {**stored, **given}
    return key, {name: value for name, value in merged.items() if name in accepted}
