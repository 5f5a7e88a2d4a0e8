"""OS::Heat::ResourceGroup and group attributes on the time-skipping server."""

from __future__ import annotations

from typing import Any

from domain.stack.requests import MarkResourceRequest, StackOperationRequest
from tests.workflows.support import Harness
from tests.workflows.test_stack_workflow import (
    create_stack,
    nested_of,
    resources,
    send,
    stack_settles,
)


def group_template(count: int, **extra: Any) -> dict[str, Any]:
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"prefix": {"type": "string", "default": "web"}},
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": count,
                    "resource_def": {
                        "type": "OS::Heat::TestResource",
                        "properties": {
                            "value": {"list_join": ["-", [{"get_param": "prefix"}, "%index%"]]}
                        },
                    },
                    **extra,
                },
            }
        },
        "outputs": {
            "values": {"value": {"get_attr": ["group", "attributes", "output"]}},
            "refs": {"value": {"get_attr": ["group", "refs"]}},
            "first": {"value": {"get_attr": ["group", "resource.0"]}},
            "second_value": {"value": {"get_attr": ["group", "resource.1.output"]}},
            "removed": {"value": {"get_attr": ["group", "removed_rsrc_list"]}},
        },
    }


async def test_resource_group_names_members_by_index_and_reads_their_attributes(
    harness: Harness,
) -> None:
    _, stack_id = await create_stack(harness, group_template(3))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    members = resources(harness, group.id)
    assert sorted(members) == ["0", "1", "2"]
    assert stack.outputs["values"] == {"0": "web-0", "1": "web-1", "2": "web-2"}
    assert stack.outputs["refs"] == [members[n].physical_id for n in ("0", "1", "2")]
    assert stack.outputs["first"] == members["0"].physical_id
    assert stack.outputs["second_value"] == "web-1"
    assert stack.outputs["removed"] == []


async def test_scale_down_removes_the_unhealthy_member_then_the_highest_index(
    harness: Harness,
) -> None:
    handle, stack_id = await create_stack(harness, group_template(4))
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    nested = harness.env.client.get_workflow_handle(f"stack:{group.id}")
    await send(
        nested, "mark_unhealthy", MarkResourceRequest(resource_name="1", mark_unhealthy=True)
    )
    await send(handle, "update", StackOperationRequest(template=group_template(2)))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert sorted(resources(harness, group.id)) == ["0", "2"]
    assert stack.outputs["values"] == {"0": "web-0", "2": "web-2"}


async def test_removal_policies_remove_named_members_and_never_reuse_their_names(
    harness: Harness,
) -> None:
    handle, stack_id = await create_stack(harness, group_template(3))
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    before = resources(harness, group.id)
    removal = {"removal_policies": [{"resource_list": ["1", before["2"].physical_id]}]}
    await send(handle, "update", StackOperationRequest(template=group_template(3, **removal)))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    after = resources(harness, group.id)
    assert sorted(after) == ["0", "3", "4"]
    assert after["0"].physical_id == before["0"].physical_id
    assert stack.outputs["removed"] == ["1", "2"]
    # Append mode: an update without the policy keeps the list; growing skips those names.
    await send(handle, "update", StackOperationRequest(template=group_template(4)))
    stack = await stack_settles(harness, stack_id)
    assert sorted(resources(harness, group.id)) == ["0", "3", "4", "5"]
    assert stack.outputs["removed"] == ["1", "2"]


MEMBER_TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {"config": {"type": "OS::Heat::TestResource", "properties": {"value": "up"}}},
    "outputs": {"state": {"value": {"get_attr": ["config", "output"]}}},
}
SCALING_GROUP = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "asg": {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {
                "min_size": 1,
                "max_size": 3,
                "desired_capacity": 2,
                "resource": {
                    "type": "OS::Heat::Stack",
                    "properties": {"template": MEMBER_TEMPLATE},
                },
            },
        }
    },
    "outputs": {
        "states": {"value": {"get_attr": ["asg", "outputs_list", "state"]}},
        "by_member": {"value": {"get_attr": ["asg", "outputs", "state"]}},
        "size": {"value": {"get_attr": ["asg", "current_size"]}},
    },
}


async def test_scaling_group_outputs_read_each_nested_member_output(harness: Harness) -> None:
    _, stack_id = await create_stack(harness, SCALING_GROUP)
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    group = nested_of(harness, stack_id)
    harness.started.append(f"stack:{group.id}")
    members = resources(harness, group.id)
    harness.started.extend(f"stack:{m.physical_id}" for m in members.values())
    assert stack.outputs["size"] == 2
    assert stack.outputs["states"] == ["up", "up"]
    assert stack.outputs["by_member"] == dict.fromkeys(members, "up")
