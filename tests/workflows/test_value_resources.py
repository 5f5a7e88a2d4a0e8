"""`OS::Heat::Value` through the stack workflow: its value is its attribute, typed, and
an update changes it in place."""

from __future__ import annotations

from typing import Any

from domain.stack.requests import StackOperationRequest
from store.stacks import StackRecord
from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import create_stack, resources, send, stack_settles


def valued(value: Any, kind: str = "json") -> dict[str, Any]:
    return {
        "heat_template_version": "2016-10-14",
        "parameters": {"port": {"type": "number", "default": 80}},
        "resources": {
            "settings": {
                "type": "OS::Heat::Value",
                "properties": {"type": kind, "value": value},
            }
        },
        "outputs": {"settings": {"value": {"get_attr": ["settings", "value"]}}},
    }


async def test_a_value_is_its_attribute_and_changes_in_place(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, valued({"port": {"get_param": "port"}}))
    stack = harness.rows(StackRecord, id=stack_id)[0]
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"settings": {"port": 80}}
    before = resources(harness, stack_id)["settings"].physical_id
    assert before is not None and before.startswith("shop-settings-")

    await send(handle, "update", StackOperationRequest(template=valued({"port": 8080})))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"settings": {"port": 8080}}
    assert resources(harness, stack_id)["settings"].physical_id == before


async def test_a_worked_out_value_not_of_its_type_fails_the_resource(harness: Harness) -> None:
    template = valued({"get_param": "word"}, kind="number")
    template["parameters"]["word"] = {"type": "string", "default": "many"}
    _, stack_id = await create_stack(harness, template)
    stack = harness.rows(StackRecord, id=stack_id)[0]
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert stack.status_reason.endswith(
        "settings: resources.settings.properties.value: must be a number"
    )
