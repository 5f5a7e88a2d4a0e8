"""Heat's deployment records (`/v1/{project}/software_deployments`), as Heat answers."""

from __future__ import annotations

import httpx

CONFIGS = "/v1/demo/software_configs"
DEPLOYMENTS = "/v1/demo/software_deployments"


async def config(api: httpx.AsyncClient, name: str, group: str = "script") -> str:
    made = await api.post(CONFIGS, json={"name": name, "group": group, "config": "echo"})
    assert made.status_code == 200, made.text
    config_id: str = made.json()["software_config"]["id"]
    return config_id


async def test_a_deployment_is_recorded_updated_listed_and_deleted(api: httpx.AsyncClient) -> None:
    config_id = await config(api, "b-config")
    other = await config(api, "a-config", group="ansible")
    body = {"config_id": config_id, "server_id": "vm1", "action": "ACTION0", "input_values": {}}
    made = await api.post(DEPLOYMENTS, json=body)
    assert made.status_code == 200, made.text
    deployment = made.json()["software_deployment"]
    assert deployment["action"] == "ACTION0" and deployment["config_id"] == config_id
    assert deployment["server_id"] == "vm1" and deployment["status"] is None
    assert "updated_time" not in deployment
    url = f"{DEPLOYMENTS}/{deployment['id']}"
    assert (await api.get(url)).json()["software_deployment"] == deployment
    await api.post(DEPLOYMENTS, json={"config_id": other, "server_id": "vm1"})

    # The server's metadata: each deployment's config, by config name.
    metadata = (await api.get(f"{DEPLOYMENTS}/metadata/vm1")).json()["metadata"]
    assert [m["name"] for m in metadata] == ["a-config", "b-config"]
    assert [m["group"] for m in metadata] == ["ansible", "script"]
    assert metadata[1]["config"] == "echo"

    changed = {"action": "ACTION1", "status": "COMPLETE", "status_reason": "completed"}
    updated = await api.put(url, json=changed)
    assert updated.status_code == 200, updated.text
    shown = updated.json()["software_deployment"]
    assert (shown["action"], shown["status"], shown["status_reason"]) == (
        "ACTION1",
        "COMPLETE",
        "completed",
    )
    assert "updated_time" in shown

    listed = (await api.get(DEPLOYMENTS, params={"server_id": "vm1"})).json()
    assert len(listed["software_deployments"]) == 2
    assert (await api.get(DEPLOYMENTS, params={"server_id": "vm2"})).json() == {
        "software_deployments": []
    }

    # A config a deployment uses stays until the deployment goes.
    refused = await api.delete(f"{CONFIGS}/{config_id}")
    assert refused.status_code == 400
    assert "can not be deleted as it is referenced" in refused.json()["error"]["message"]
    assert (await api.delete(url)).status_code == 204
    assert (await api.get(url)).status_code == 404
    assert (await api.delete(f"{CONFIGS}/{config_id}")).status_code == 204


async def test_bad_deployments_are_400s_and_nothing_is_stored(api: httpx.AsyncClient) -> None:
    config_id = await config(api, "c")
    for body, message in (
        ({"server_id": "vm1"}, "config_id must be specified"),
        ({"config_id": config_id}, "server_id must be specified"),
        ({"config_id": "nope", "server_id": "vm1"}, "Config with id nope not found"),
        (
            {"config_id": config_id, "server_id": "vm1", "stack_user_project_id": "x" * 65},
            "should be no more than 64 characters",
        ),
    ):
        answer = await api.post(DEPLOYMENTS, json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert message in answer.json()["error"]["message"]
    assert (await api.get(DEPLOYMENTS)).json() == {"software_deployments": []}
    assert (await api.put(f"{DEPLOYMENTS}/nope", json={"status": "COMPLETE"})).status_code == 404
    assert (await api.delete(f"{DEPLOYMENTS}/nope")).status_code == 404
