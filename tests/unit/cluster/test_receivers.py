"""Which receivers Warden runs, and what one webhook call asks of its cluster."""

from __future__ import annotations

import pytest

from domain.cluster.receivers import check_receiver, triggered_action
from domain.errors import InvalidRequest


def test_a_webhook_for_a_cluster_action_with_its_parameters_is_accepted() -> None:
    check_receiver("webhook", "CLUSTER_SCALE_OUT", {"count": 2})
    check_receiver(
        "webhook", "CLUSTER_RESIZE", {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 1}
    )


@pytest.mark.parametrize(
    ("receiver_type", "action", "params", "needle"),
    [
        ("message", "CLUSTER_SCALE_OUT", {}, "Receiver type 'message' is not supported"),
        ("webhook", "CLUSTER_DELETE", {}, "'CLUSTER_DELETE' cannot be run by a receiver"),
        ("webhook", "CLUSTER_SCALE_IN", {"force": True}, "CLUSTER_SCALE_IN does not take force"),
    ],
)
def test_what_warden_cannot_run_is_a_400_saying_why(
    receiver_type: str, action: str, params: dict[str, object], needle: str
) -> None:
    with pytest.raises(InvalidRequest, match=needle):
        check_receiver(receiver_type, action, params)


def test_the_call_overlays_the_receivers_params_and_foreign_keys_are_dropped() -> None:
    alarm = {"alarm_name": "cpu high", "current": "alarm", "count": "3"}
    assert triggered_action("CLUSTER_SCALE_OUT", {"count": 1}, alarm) == (
        "scale_out",
        {"count": "3"},
    )
    assert triggered_action("CLUSTER_SCALE_IN", {"count": 2}, {}) == ("scale_in", {"count": 2})
    assert triggered_action("CLUSTER_CHECK", {}, alarm) == ("check", {})
