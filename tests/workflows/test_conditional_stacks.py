"""Conditions through the stack workflow: what parameters enable is made, what they
disable on update is deleted, and outputs follow (Heat's `conditions` section)."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import WorkflowUpdateFailedError

from domain.stack.requests import StackOperationRequest
from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import (
    create_stack,
    rejection,
    resources,
    send,
    stack_settles,
)

SIZED: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "parameters": {"env": {"type": "string", "default": "prod"}},
    "conditions": {
        "prod": {"equals": [{"get_param": "env"}, "prod"]},
        "dev": {"not": "prod"},
    },
    "resources": {
        "vm": {
            "type": "OS::Nova::Server",
            "condition": "prod",
            "properties": {"image": "cirros", "flavor": "m1.tiny"},
        },
        "note": {
            "type": "OS::Heat::TestResource",
            "properties": {
                "value": {
                    "if": [
                        "prod",
                        {
                            "str_replace": {
                                "template": "vm=$v",
                                "params": {"$v": {"get_resource": "vm"}},
                            }
                        },
                        {"list_join": ["-", {"str_split": [",", "dev,box"]}]},
                    ]
                }
            },
        },
        "scratch": {"type": "OS::Heat::TestResource", "condition": "dev", "depends_on": "vm"},
    },
    "outputs": {
        "vm": {"value": {"get_resource": "vm"}, "condition": "prod"},
        "note": {"value": {"get_attr": ["note", "output"]}},
        "ports": {"value": {"repeat": {"template": "p%n%", "for_each": {"%n%": [80, 443]}}}},
        "total": {"value": {"yaql": {"expression": "$.data.sum()", "data": [3, 2, 1]}}},
    },
}


async def test_parameters_decide_what_the_stack_holds(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, SIZED)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    rows = resources(harness, stack_id)
    assert sorted(rows) == ["note", "vm"]
    vm = rows["vm"].physical_id or ""
    assert harness.cloud.servers[vm].status == "ACTIVE"
    assert stack.outputs == {"vm": vm, "note": f"vm={vm}", "ports": ["p80", "p443"], "total": 6}

    await send(handle, "update", StackOperationRequest(existing=True, parameters={"env": "dev"}))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    rows = resources(harness, stack_id)
    assert sorted(rows) == ["note", "scratch"]
    assert vm not in harness.cloud.servers  # its condition turned false: deleted
    assert stack.outputs == {"vm": None, "note": "dev-box", "ports": ["p80", "p443"], "total": 6}


async def test_a_reference_to_a_disabled_resource_is_refused_before_anything_runs(
    harness: Harness,
) -> None:
    template = {
        **SIZED,
        "resources": {
            **SIZED["resources"],
            "user": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_resource": "vm"}},
            },
        },
    }
    handle, stack_id = await create_stack(harness, template)
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await send(
            handle, "update", StackOperationRequest(existing=True, parameters={"env": "dev"})
        )
    assert rejection(refused.value) == (
        'The specified reference "vm" (in resources.user) is incorrect.'
    )
    assert sorted(resources(harness, stack_id)) == ["note", "user", "vm"]
