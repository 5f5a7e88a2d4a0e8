"""The wait condition rules, as Heat's handle and wait condition apply them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.errors import InvalidRequest
from domain.stack.state import ResourceState
from domain.stack.types.wait_condition import (
    HANDLE,
    condition_data,
    handle_attributes,
    normalised_signal,
    record_signal,
    timeout_message,
    wait_outcome,
)

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def test_a_signal_without_values_is_a_success_numbered_by_arrival() -> None:
    assert normalised_signal({}, {"a": {}}) == (
        "2",
        {"reason": "Signal 2 received", "data": None, "status": "SUCCESS"},
    )
    assert normalised_signal(None, {})[0] == "1"


@pytest.mark.parametrize("bad", [{"status": "DONE"}, {"extra": 1}, ["SUCCESS"], "SUCCESS"])
def test_a_malformed_signal_is_heats_400(bad: object) -> None:
    with pytest.raises(InvalidRequest, match="Metadata format invalid"):
        normalised_signal(bad, {})


def test_a_signal_with_a_known_id_overwrites_it() -> None:
    handle = ResourceState(name="h", type=HANDLE, resource_id="r", created_at=NOW, updated_at=NOW)
    once, reason = record_signal(handle, {"id": "x", "reason": "first"}, NOW)
    assert reason == "Signal: status:SUCCESS reason:first"
    twice, _ = record_signal(once, {"id": "x", "status": "FAILURE", "reason": "again"}, NOW)
    assert twice.rsrc_metadata == {"x": {"data": None, "reason": "again", "status": "FAILURE"}}


def test_the_outcome_needs_count_successes_and_fails_at_any_failure() -> None:
    ok = {"status": "SUCCESS", "reason": "r", "data": None}
    assert wait_outcome({}, 1) is None
    assert wait_outcome({"1": ok}, 2) is None
    assert wait_outcome({"1": ok, "2": ok}, 2) == ""
    failed = {"status": "FAILURE", "reason": "boom", "data": None}
    assert wait_outcome({"1": ok, "2": failed}, 1) == "boom"


def test_heats_timeout_message_and_data() -> None:
    ok = {"status": "SUCCESS", "reason": "up", "data": "d"}
    assert timeout_message({}, 3) == "0 of 3 received"
    assert timeout_message({"1": ok}, 3) == "1 of 3 received - up"
    assert condition_data({"1": ok}) == '{"1": "d"}'


def test_a_handle_gives_its_url_and_the_curl_command_to_post_to_it() -> None:
    attributes = handle_attributes("http://w/v1/signal/abc")
    assert attributes["endpoint"] == "http://w/v1/signal/abc"
    assert attributes["curl_cli"] == (
        "curl -i -X POST -H 'Content-Type: application/json' "
        "-H 'Accept: application/json' http://w/v1/signal/abc"
    )
    assert handle_attributes(None)["endpoint"] is None
