"""`OS::Heat::Stack` with a `context`: what makes it remote, where it lives, what is sent,
and when a change replaces it."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.template import load_template
from domain.stack.resource_types import resource_type
from domain.stack.types.nested_stack import is_remote, remote_fields, remote_region

STACK = resource_type("OS::Heat::Stack")
INNER = {"heat_template_version": "2013-05-23", "resources": {}}


def template(props: dict[str, Any]) -> dict[str, Any]:
    return {
        "heat_template_version": "2013-05-23",
        "resources": {"my_stack": {"type": "OS::Heat::Stack", "properties": props}},
    }


def test_a_context_makes_the_stack_remote_in_its_region_or_warden_s_own() -> None:
    assert not is_remote({"template": INNER})
    assert is_remote({"template": INNER, "context": {}})
    assert remote_region({"context": {"region_name": "RegionTwo"}}) == "RegionTwo"
    assert remote_region({"context": {}}) is None
    assert remote_region({}) is None


def test_the_remote_create_sends_heat_s_fields_with_rollback_disabled() -> None:
    props = {"template": "t", "parameters": {"a": 1}, "timeout": 5, "context": {}}
    assert remote_fields(props) == {
        "template": "t",
        "parameters": {"a": 1},
        "files": {},
        "environment": {},
        "disable_rollback": True,
        "timeout_mins": 5,
    }
    assert "timeout_mins" not in remote_fields({"template": "t"})


@pytest.mark.parametrize(
    ("before", "after", "in_place"),
    [
        ({"region_name": "RegionOne"}, {"region_name": "RegionOne", "insecure": True}, True),
        ({"region_name": "RegionOne"}, {"region_name": "RegionTwo"}, False),
        (None, {"region_name": "RegionOne"}, False),  # nested → remote
        ({}, None, False),  # remote → nested
    ],
)
def test_a_context_change_replaces_the_stack_only_when_it_moves(
    before: Any, after: Any, in_place: bool
) -> None:
    old = {"template": INNER, "context": before}
    new = {"template": INNER, "context": after}
    assert STACK.updatable_in_place(old, new) is in_place


def test_a_remote_stack_s_template_is_left_to_its_heat_but_a_nested_one_is_checked() -> None:
    broken = {"heat_template_version": "2013-05-23", "resource": {}}
    load_template(template({"template": broken, "context": {"region_name": "RegionOne"}}))
    with pytest.raises(InvalidRequest, match="The template section is invalid: resource"):
        load_template(template({"template": broken}))


def test_the_context_keys_are_heat_s() -> None:
    with pytest.raises(InvalidRequest, match="context: Unknown Property regoin"):
        load_template(template({"template": INNER, "context": {"regoin": "x"}}))
