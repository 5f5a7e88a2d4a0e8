"""Heat's software deployments through the stack workflow: a deployment derives its
config with the step's inputs, waits durably for the agent's signal, and takes the
outputs it reports as its attributes (heat-tempest-plugin's `test_software_config`).

Tests that skip time use `own_harness`: on the shared server, work left by earlier tests
can hold the clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from domain.stack.requests import ResourceSignalRequest, StackOperationRequest
from store.software_configs import SoftwareConfigRecord
from store.software_deployments import SoftwareDeploymentRecord
from store.stacks import StackRecord
from tests.support.eventually import eventually
from tests.workflows.support import SIGNAL_BASE, Harness
from tests.workflows.test_stack_workflow import create_stack, resources, send, stack_settles

CONFIG: dict[str, Any] = {
    "type": "OS::Heat::SoftwareConfig",
    "properties": {
        "group": "script",
        "config": "#!/bin/sh\necho $foo",
        "inputs": [{"name": "foo"}, {"name": "bar", "default": "b"}],
        "outputs": [{"name": "result"}, {"name": "oops", "error_output": True}],
    },
}


def deploying(**props: Any) -> dict[str, Any]:
    return {
        "heat_template_version": "2015-04-30",
        "resources": {
            "config": CONFIG,
            "deployment": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {
                    "config": {"get_resource": "config"},
                    "server": "vm-1",
                    "input_values": {"foo": "hello", "extra": 3},
                    **props,
                },
            },
        },
        "outputs": {
            "stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}},
            "result": {"value": {"get_attr": ["deployment", "result"]}},
        },
    }


async def deployment_row(h: Harness, stack_id: str, status: str) -> SoftwareDeploymentRecord:
    async def found() -> SoftwareDeploymentRecord | None:
        rows = h.rows(SoftwareDeploymentRecord, stack_id=stack_id)
        return rows[0] if rows and rows[0].status == status else None

    row: SoftwareDeploymentRecord = await eventually(found, timeout=30)
    return row


def signal(details: dict[str, Any], name: str = "deployment") -> ResourceSignalRequest:
    return ResourceSignalRequest(resource_name=name, details=details, deployment=True)


async def test_a_deployment_waits_for_its_signal_and_takes_its_outputs(
    own_harness: Harness,
) -> None:
    harness = own_harness
    handle, stack_id = await create_stack(harness, deploying(), wait=False)
    row = await deployment_row(harness, stack_id, "IN_PROGRESS")
    assert (row.server_id, row.action, row.status_reason) == (
        "vm-1",
        "CREATE",
        "Deploy data available",
    )
    derived = harness.rows(SoftwareConfigRecord, id=row.config_id)[0]
    inputs = {i["name"]: i.get("value") for i in derived.body["inputs"]}
    assert inputs["foo"] == "hello" and inputs["bar"] == "b" and inputs["extra"] == 3
    assert inputs["deploy_server_id"] == "vm-1" and inputs["deploy_action"] == "CREATE"
    assert inputs["deploy_signal_transport"] == "CFN_SIGNAL"
    assert inputs["deploy_signal_id"] == f"{SIGNAL_BASE}/v1/signal/{row.id}"
    assert inputs["deploy_stack_id"] == f"shop/{stack_id}"
    assert derived.group == "script" and derived.body["config"] == "#!/bin/sh\necho $foo"

    await harness.env.sleep(timedelta(hours=2))  # durably waiting, the stack in progress
    assert harness.rows(StackRecord, id=stack_id)[0].status == "IN_PROGRESS"
    await send(handle, "deliver_signal", signal({"deploy_stdout": "hi", "result": "42"}))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"stdout": "hi", "result": "42"}
    done = harness.rows(SoftwareDeploymentRecord, id=row.id)[0]
    assert (done.status, done.status_reason) == ("COMPLETE", "Outputs received")
    assert done.output_values == {
        "result": "42",
        "deploy_stdout": "hi",
        "deploy_stderr": None,
        "deploy_status_code": None,
    }


async def test_a_non_zero_status_code_or_an_error_output_fails_it(harness: Harness) -> None:
    handle, stack_id = await create_stack(harness, deploying(), wait=False)
    await deployment_row(harness, stack_id, "IN_PROGRESS")
    await send(handle, "deliver_signal", signal({"deploy_status_code": 2, "oops": "bad disk"}))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    assert stack.status_reason == (
        "Resource CREATE failed: deployment: Deployment to server failed: deploy_status_code "
        ": Deployment exited with non-zero status code: 2, oops : bad disk"
    )


async def test_no_signal_completes_at_once_and_delete_removes_the_record(
    harness: Harness,
) -> None:
    handle, stack_id = await create_stack(harness, deploying(signal_transport="NO_SIGNAL"))
    stack = harness.rows(StackRecord, id=stack_id)[0]
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    row = harness.rows(SoftwareDeploymentRecord, stack_id=stack_id)[0]
    assert (row.status, row.status_reason) == ("COMPLETE", "Not waiting for outputs signal")
    derived = row.config_id

    await send(handle, "delete", StackOperationRequest())

    async def gone() -> bool:
        return not harness.rows(StackRecord, id=stack_id)

    await eventually(gone, timeout=30)
    assert harness.rows(SoftwareDeploymentRecord, id=row.id) == []
    assert harness.rows(SoftwareConfigRecord, id=derived) == []


async def test_the_stacks_timeout_fails_the_deployment_as_cancelled(own_harness: Harness) -> None:
    """A group's nested stack has its parent's timeout, as in Heat, so its deployments
    stop waiting too (heat-tempest-plugin's `test_deployments_timeout_failed`)."""
    harness = own_harness
    template = deploying()
    template["resources"]["group"] = {
        "type": "OS::Heat::SoftwareDeploymentGroup",
        "properties": {"config": {"get_resource": "config"}, "servers": {"0": "vm-1"}},
    }
    _, stack_id = await create_stack(harness, template, wait=False, timeout_mins=1)
    row = await deployment_row(harness, stack_id, "IN_PROGRESS")
    await harness.env.sleep(timedelta(minutes=2))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "CREATE_FAILED"
    failed = await deployment_row(harness, stack_id, "FAILED")
    assert failed.id == row.id and failed.status_reason == "Deployment cancelled."

    async def all_failed() -> list[str] | None:
        statuses = [r.status for r in harness.rows(SoftwareDeploymentRecord, server_id="vm-1")]
        return statuses if statuses == ["FAILED", "FAILED"] else None

    await eventually(all_failed, timeout=30, what="the group's deployment cancelled too")


async def test_a_group_deploys_to_each_server_of_its_map(harness: Harness) -> None:
    template = {
        "heat_template_version": "2015-04-30",
        "resources": {
            "config": CONFIG,
            "deployments": {
                "type": "OS::Heat::SoftwareDeployments",
                "properties": {
                    "config": {"get_resource": "config"},
                    "servers": {"a": "vm-a", "b": "vm-b"},
                    "signal_transport": "NO_SIGNAL",
                },
            },
        },
        "outputs": {"codes": {"value": {"get_attr": ["deployments", "deploy_status_codes"]}}},
    }
    _, stack_id = await create_stack(harness, template)
    stack = harness.rows(StackRecord, id=stack_id)[0]
    assert f"{stack.action}_{stack.status}" == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"codes": {"a": None, "b": None}}
    nested = resources(harness, stack_id)["deployments"].physical_id
    rows = harness.rows(SoftwareDeploymentRecord, stack_id=nested)
    assert sorted((r.resource_name, r.server_id) for r in rows) == [("a", "vm-a"), ("b", "vm-b")]


async def test_a_changed_replace_on_change_input_replaces_the_deployment(harness: Harness) -> None:
    """Heat's `UpdateReplace` for an input with `replace_on_change`: a new deployment (a
    new record), the old one deleted; another input's change updates it in place."""
    template = deploying(signal_transport="NO_SIGNAL")
    config = template["resources"]["config"]["properties"]
    config["inputs"] = [{"name": "foo", "replace_on_change": True}, {"name": "bar"}]
    handle, stack_id = await create_stack(harness, template)
    first = resources(harness, stack_id)["deployment"].physical_id

    template["resources"]["deployment"]["properties"]["input_values"] = {"foo": "hello", "bar": 2}
    await send(handle, "update", StackOperationRequest(template=template))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    assert resources(harness, stack_id)["deployment"].physical_id == first  # in place

    template["resources"]["deployment"]["properties"]["input_values"] = {"foo": "bye", "bar": 2}
    await send(handle, "update", StackOperationRequest(template=template))
    stack = await stack_settles(harness, stack_id)
    assert f"{stack.action}_{stack.status}" == "UPDATE_COMPLETE", stack.status_reason
    second = resources(harness, stack_id)["deployment"].physical_id
    assert second != first

    async def old_gone() -> bool:
        return harness.rows(SoftwareDeploymentRecord, id=first) == []

    await eventually(old_gone, timeout=30, what="the replaced deployment deleted")
    assert harness.rows(SoftwareDeploymentRecord, id=second)[0].status == "COMPLETE"
