"""The software deployment rules, as Heat's deployment resources apply them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.properties import PropertySchema, convert_property
from domain.stack.types.software_deployment import (
    DeploymentStart,
    SoftwareDeployment,
    derived_inputs,
    group_template,
    signalled,
    structured_config,
)

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def start(**props: object) -> DeploymentStart:
    return DeploymentStart(
        deployment_id="d1",
        derived_config_id="c2",
        project_id="p",
        stack_id="s",
        stack_path="shop/s",
        resource_name="dep",
        action="UPDATE",
        properties={"server": "vm", **props},
        signal_url="http://w/v1/signal/d1",
    )


def test_derived_inputs_are_heats_values_then_the_deploy_inputs() -> None:
    inputs = derived_inputs(
        [{"name": "a", "type": "String", "default": "x"}, {"name": "b", "type": "Number"}],
        start(input_values={"b": 2, "c": "free"}, signal_transport="HEAT_SIGNAL"),
    )
    values = {i["name"]: i["value"] for i in inputs}
    assert [i["name"] for i in inputs][:3] == ["a", "b", "c"]
    assert values == {
        "a": "x",
        "b": 2,
        "c": "free",
        "deploy_server_id": "vm",
        "deploy_action": "UPDATE",
        "deploy_stack_id": "shop/s",
        "deploy_resource_name": "dep",
        "deploy_signal_transport": "HEAT_SIGNAL",
        "deploy_signal_id": "http://w/v1/signal/d1",
        "deploy_signal_verb": "POST",
    }


def test_a_structured_config_takes_its_inputs_values() -> None:
    inputs = [{"name": "port", "value": 80}]
    config = {"listen": {"get_input": "port"}, "list": [{"get_input": "port"}], "keep": "x"}
    assert structured_config(config, inputs, {}) == {"listen": 80, "list": [80], "keep": "x"}
    assert structured_config({"a": {"get_input": "nope"}}, inputs, {}) == {"a": None}
    with pytest.raises(InvalidRequest, match=r"The Parameter \(nope\) was not provided"):
        structured_config({"a": {"get_input": "nope"}}, inputs, {"input_values_validate": "STRICT"})
    assert structured_config({"a": {"my_in": "port"}}, inputs, {"input_key": "my_in"}) == {"a": 80}


def deployment(status: str) -> SoftwareDeployment:
    return SoftwareDeployment(
        id="d", project_id="p", config_id="c", server_id="vm", status=status, created_at=NOW
    )


def test_a_signal_completes_or_fails_an_in_progress_deployment_only() -> None:
    outputs: list[dict[str, Any]] = [{"name": "out"}, {"name": "err", "error_output": True}]
    done = signalled(deployment("IN_PROGRESS"), outputs, {"out": 1, "deploy_stdout": "s"})
    assert done == {
        "status": "COMPLETE",
        "status_reason": "Outputs received",
        "output_values": {
            "out": 1,
            "deploy_stdout": "s",
            "deploy_stderr": None,
            "deploy_status_code": None,
        },
    }
    failed = signalled(
        deployment("IN_PROGRESS"), outputs, {"err": "boom", "deploy_status_code": "0"}
    )
    assert failed is not None and failed["status"] == "FAILED"
    assert failed["status_reason"] == "err : boom"
    assert signalled(deployment("COMPLETE"), outputs, {}) is None


def test_a_group_is_a_stack_of_one_deployment_per_server() -> None:
    template = group_template(
        "OS::Heat::StructuredDeploymentGroup",
        {"servers": {"a": "vm-a"}, "config": "c", "name": None},
    )
    assert template["resources"] == {
        "a": {
            "type": "OS::Heat::StructuredDeployment",
            "properties": {"config": "c", "server": "vm-a"},
        }
    }
    assert template["outputs"]["deploy_stdouts"] == {
        "value": {"a": {"get_attr": ["a", "deploy_stdout"]}}
    }


def test_a_lists_allowed_values_apply_to_each_item_as_in_heat() -> None:
    schema = PropertySchema(type="list", allowed_values=("CREATE", "UPDATE"))
    assert convert_property(schema, ["CREATE", "UPDATE"], "actions") == ["CREATE", "UPDATE"]
    with pytest.raises(InvalidRequest, match="\"\\['CREATE', 'BOOT'\\]\" is not an allowed value"):
        convert_property(schema, ["CREATE", "BOOT"], "actions")
