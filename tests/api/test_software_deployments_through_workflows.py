"""Software deployments through the API, the real workflows and simcloud, as
heat-tempest-plugin's `test_deployments_metadata` drives them: the server's metadata
lists the configs deployed to it, each with its signal URL; a POST there completes it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from tests.api.test_cloud_resources_through_workflows import create, hot
from tests.api.test_stacks_through_workflows import resource, settled
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

STACKS = "/v1/demo/stacks"


async def test_deployments_show_in_the_servers_metadata_and_complete_on_their_signal(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    server = {
        "type": "OS::Nova::Server",
        "properties": {
            "image": "cirros",
            "flavor": "m1.tiny",
            "user_data_format": "SOFTWARE_CONFIG",
        },
    }
    server_url = await create(api, "box", hot({"server": server}))
    server_id = (await resource(api, server_url, "server"))["physical_resource_id"]

    configs = {
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {"config": "x" * 100}},
        **{
            f"dep_{i}": {
                "type": "OS::Heat::SoftwareDeployments",
                "properties": {"config": {"get_resource": "config"}, "servers": {"0": server_id}},
            }
            for i in range(3)
        },
    }
    made = await api.post(STACKS, json={"stack_name": "deploys", "template": hot(configs)})
    assert made.status_code == 201, made.text
    url = f"{STACKS}/deploys/{made.json()['stack']['id']}"

    async def three() -> list[dict[str, Any]] | None:
        metadata = (await api.get(f"{server_url}/resources/server/metadata")).json()["metadata"]
        deployments: list[dict[str, Any]] = metadata["deployments"]
        return deployments if len(deployments) == 3 else None

    deployments = await eventually(three, what="three deployments in the server's metadata")
    assert (await api.get(url)).json()["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
    for deployment in deployments:
        inputs = {i["name"]: i.get("value") for i in deployment["inputs"]}
        assert inputs["deploy_server_id"] == server_id
        answer = await api.post(
            urlsplit(inputs["deploy_signal_id"]).path,
            content=b"{}",
            headers={"X-Auth-Token": "", "Content-Type": "application/json"},
        )
        assert answer.status_code == 200, answer.text
    stack = await settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    listed = (
        await api.get("/v1/demo/software_deployments", params={"server_id": server_id})
    ).json()
    assert [d["status"] for d in listed["software_deployments"]] == ["COMPLETE"] * 3

    # A deployment completed through the deployments API goes on too (Heat polls it).
    again = await api.post(
        STACKS,
        json={
            "stack_name": "put",
            "template": hot(
                {
                    "config": configs["config"],
                    "dep": {
                        "type": "OS::Heat::SoftwareDeployment",
                        "properties": {"config": {"get_resource": "config"}, "server": server_id},
                    },
                }
            ),
        },
    )
    put_url = f"{STACKS}/put/{again.json()['stack']['id']}"

    async def started() -> str | None:
        listed = (
            await api.get("/v1/demo/software_deployments", params={"server_id": server_id})
        ).json()
        waiting = [d for d in listed["software_deployments"] if d["status"] == "IN_PROGRESS"]
        return waiting[0]["id"] if waiting else None

    deployment_id = await eventually(started, what="the deployment in progress")
    changed = await api.put(
        f"/v1/demo/software_deployments/{deployment_id}",
        json={"status": "FAILED", "status_reason": "by hand"},
    )
    assert changed.status_code == 200, changed.text
    failed = await settled(api, put_url)
    assert failed["stack_status"] == "CREATE_FAILED"
    assert failed["stack_status_reason"].endswith("Deployment to server failed: by hand")
