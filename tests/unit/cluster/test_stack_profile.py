"""`os.heat.stack` profiles: Senlin's spec, the stack a node's create asks for, and what
a stack's state says of its node."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from domain.cluster.health import probe_target
from domain.cluster.nodes import NodeState, NodeStatus
from domain.cluster.profiles import parse_profile_spec
from domain.cluster.stack_calls import (
    StackRef,
    node_status_from_stack,
    on_stack,
    stack_create_request,
    stack_of,
    timeout_minutes,
    without_stack,
)
from domain.cluster.stack_profile import (
    StackHealth,
    StackProfileSpec,
    judge_stack,
    stack_name,
)
from domain.errors import InvalidRequest, NotFound

#: senlin-tempest-plugin's `spec_heat_stack`, as is.
TEMPEST_SPEC: dict[str, Any] = {
    "type": "os.heat.stack",
    "version": "1.0",
    "properties": {
        "template": {
            "heat_template_version": "2014-10-16",
            "parameters": {"str_length": {"type": "number", "default": 64}},
            "resources": {
                "random": {
                    "type": "OS::Heat::RandomString",
                    "properties": {"length": {"get_param": "str_length"}},
                }
            },
            "outputs": {"result": {"value": {"get_attr": ["random", "value"]}}},
        }
    },
}


def node(**changes: Any) -> NodeState:
    fields: dict[str, Any] = {
        "node_id": "6f1c2a9e-0000-4000-8000-00000000abcd",
        "name": "node-1",
        "index": 1,
        "profile_id": "p",
        "created_at": datetime(2026, 12, 1, tzinfo=UTC),
        "updated_at": datetime(2026, 12, 1, tzinfo=UTC),
        **changes,
    }
    return NodeState(**fields)


def test_the_tempest_plugin_s_stack_spec_is_taken_as_written() -> None:
    parsed = parse_profile_spec(TEMPEST_SPEC)
    assert isinstance(parsed, StackProfileSpec)
    assert parsed.to_json() == TEMPEST_SPEC
    assert parsed.properties.disable_rollback is True  # Senlin's default
    assert parse_profile_spec({**TEMPEST_SPEC, "version": 1.0}).to_json()["version"] == "1.0"


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"bogus": 1}, "Unrecognizable spec item 'bogus'"),
        ({"timeout": "soon"}, "spec.properties.timeout: The value 'soon' is not a valid Integer"),
        ({"timeout": True}, "spec.properties.timeout: The value 'True' is not a valid Integer"),
        ({"template": "x"}, "spec.properties.template: 'x' is not a Map"),
        (
            {"template": {}, "template_url": "http://x/t.yaml"},
            "template_url is not supported: Warden fetches no URL",
        ),
    ],
)
def test_senlin_s_words_for_a_bad_stack_spec(properties: dict[str, Any], message: str) -> None:
    raw = {**TEMPEST_SPEC, "properties": {**TEMPEST_SPEC["properties"], **properties}}
    with pytest.raises(InvalidRequest) as refused:
        parse_profile_spec(raw)
    assert message in refused.value.message


def test_only_version_1_0_of_the_stack_profile_exists() -> None:
    with pytest.raises(
        NotFound, match=r"The profile_type 'os\.heat\.stack-1\.1' could not be found"
    ):
        parse_profile_spec({**TEMPEST_SPEC, "version": "1.1"})


def test_a_stack_name_is_the_node_s_and_the_request_s_in_heat_s_characters() -> None:
    assert stack_name("node-1", "6f1c2a9e-0000-4000-8000-00000000abcd") == "node-1-0000abcd"
    assert stack_name("my node/\u00e9", "r1") == "my-node---r1"
    assert stack_name("1st", "r") == "n1st-r"
    assert len(stack_name("n" * 300, "abcdefgh12")) == 255


def test_the_create_asks_heat_for_the_profile_s_template_and_settings() -> None:
    profile = {
        **TEMPEST_SPEC,
        "properties": {**TEMPEST_SPEC["properties"], "timeout": 5, "parameters": {"a": 1}},
    }
    request = stack_create_request(profile, node(), request_id="n1:action-42", cluster_id="c9")
    assert request.name == "node-1-action42"
    index = node().index
    assert request.fields == {
        "tags": f"cluster_node_id={node().node_id},cluster_id=c9,cluster_node_index={index}",
        "template": TEMPEST_SPEC["properties"]["template"],
        "parameters": {"a": 1},
        "files": {},
        "environment": {},
        "disable_rollback": True,
        "timeout_mins": 5,
    }
    assert timeout_minutes(profile) == 5
    assert timeout_minutes(TEMPEST_SPEC) == 60  # Senlin's default_action_timeout


def test_a_node_names_its_stack_once_heat_answered() -> None:
    bare = node()
    assert stack_of(bare) is None
    assert probe_target(bare).stack_name is None
    on = on_stack(bare, StackRef(name="node-1-abc", id="s-1"))
    assert stack_of(on) == StackRef(name="node-1-abc", id="s-1")
    assert probe_target(on).stack_name == "node-1-abc"
    assert without_stack(on.data) == {}


def test_a_marked_resource_makes_a_complete_stack_unhealthy() -> None:
    verdict = judge_stack(
        "s-1", "CREATE_COMPLETE", "", [("random", "CHECK_FAILED", "the app says so")]
    )
    assert verdict.health is StackHealth.UNHEALTHY
    assert verdict.reason == "Resource random is CHECK_FAILED: the app says so"
    two = judge_stack(
        "s-1", "UPDATE_COMPLETE", "", [("a", "CHECK_FAILED", ""), ("b", "X_FAILED", "")]
    )
    assert two.reason == "Resource a is CHECK_FAILED (and 1 more)"


@pytest.mark.parametrize(
    ("status", "health", "reason"),
    [
        (None, StackHealth.UNHEALTHY, "Stack s-1 not found"),
        ("CREATE_FAILED", StackHealth.UNHEALTHY, "Stack status is CREATE_FAILED: boom"),
        ("UPDATE_IN_PROGRESS", StackHealth.BUSY, "Stack status is UPDATE_IN_PROGRESS"),
        ("CHECK_COMPLETE", StackHealth.HEALTHY, "Stack status is CHECK_COMPLETE"),
    ],
)
def test_a_stack_s_own_status(status: str | None, health: StackHealth, reason: str) -> None:
    verdict = judge_stack("s-1", status, "boom")
    assert (verdict.health, verdict.reason) == (health, reason)


def test_the_node_status_a_verdict_gives() -> None:
    assert node_status_from_stack(None) == (NodeStatus.ERROR, "Node has no stack")
    assert node_status_from_stack(judge_stack("s", "CREATE_COMPLETE")) == (NodeStatus.ACTIVE, "")
    busy = node_status_from_stack(judge_stack("s", "UPDATE_IN_PROGRESS"))
    assert busy == (NodeStatus.ACTIVE, "Stack status is UPDATE_IN_PROGRESS")
    failed = node_status_from_stack(judge_stack("s", "UPDATE_FAILED", "quota"))
    assert failed == (NodeStatus.ERROR, "Stack status is UPDATE_FAILED: quota")


def test_a_stack_s_cluster_tags_follow_its_membership_as_senlin_refreshes_them() -> None:
    from domain.cluster.stack_calls import StackRef, StackRetagRequest, refreshed_tags

    ref = StackRef(name="web-1-abc", id="s1")
    joining = StackRetagRequest(stack=ref, node_id="n1", cluster_id="c2", index=4)
    assert refreshed_tags(["app=shop", "cluster_id=c1", "cluster_node_id=n1"], joining) == (
        "app=shop,cluster_id=c2,cluster_node_id=n1,cluster_node_index=4",
        True,
    )
    leaving = StackRetagRequest(stack=ref, node_id="n1")
    assert refreshed_tags(["app=shop", "cluster_id=c2"], leaving) == ("app=shop", True)
    assert refreshed_tags(["app=shop"], leaving) == ("app=shop", False)
