"""Wait conditions through the API, the real workflows and the store: the handle's URL
takes a POST without a token, the resource signal route takes one with a token, and
`…/resources/{handle}/metadata` shows the signals, as Heat's do."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from tests.api.test_cloud_resources_through_workflows import hot
from tests.api.test_stacks_through_workflows import resource, settled
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

STACKS = "/v1/demo/stacks"
RESOURCES: dict[str, Any] = {
    "handle": {"type": "OS::Heat::WaitConditionHandle"},
    "wait": {
        "type": "OS::Heat::WaitCondition",
        "properties": {"handle": {"get_resource": "handle"}, "count": 2, "timeout": 600},
    },
}
OUTPUTS = {"data": {"value": {"get_attr": ["wait", "data"]}}}


async def test_a_wait_condition_is_signalled_by_url_and_by_resource_signal(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    created = await api.post(
        STACKS, json={"stack_name": "waits", "template": hot(RESOURCES, OUTPUTS)}
    )
    assert created.status_code == 201, created.text
    url = f"{STACKS}/waits/{created.json()['stack']['id']}"

    async def handle_ready() -> dict[str, Any] | None:
        answer = await api.get(f"{url}/resources/handle")
        if answer.status_code != 200:
            return None
        found: dict[str, Any] = answer.json()["resource"]
        return found if found["resource_status"] == "CREATE_COMPLETE" else None

    handle = await eventually(handle_ready, what="the handle made")
    endpoint = handle["attributes"]["endpoint"]
    assert handle["attributes"]["curl_cli"].endswith(endpoint)
    path = urlsplit(endpoint).path
    assert path == f"/v1/signal/{handle['physical_resource_id']}"

    # The URL is the credential: no token.
    anonymous = {"X-Auth-Token": ""}
    first = await api.post(path, json={"status": "SUCCESS", "data": "db"}, headers=anonymous)
    assert first.status_code == 200, first.text
    assert (await api.post("/v1/signal/" + "0" * 32, json={})).status_code == 404
    malformed = await api.post(path, json={"status": "SUCCES"})
    assert malformed.status_code == 400, malformed.text  # while waiting, too

    second = await api.post(f"{url}/resources/handle/signal", json={"data": "web", "id": "w"})
    assert second.status_code == 200, second.text
    stack = await settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
    assert json.loads(outputs["data"]) == {"1": "db", "w": "web"}

    metadata = (await api.get(f"{url}/resources/handle/metadata")).json()["metadata"]
    assert metadata["w"] == {"data": "web", "reason": "Signal 2 received", "status": "SUCCESS"}
    assert (await api.get(f"{url}/resources/wait/metadata")).json() == {"metadata": {}}
    assert (await api.get(f"{url}/resources/nope/metadata")).status_code == 404

    # On an idle stack a malformed signal is Heat's 400, and nothing is kept.
    refused = await api.post(path, json={"status": "MAYBE"})
    assert refused.status_code == 400 and refused.json()["error"]["message"] == (
        "Metadata format invalid"
    )
    assert len((await api.get(f"{url}/resources/handle/metadata")).json()["metadata"]) == 2
    assert (await resource(api, url, "wait"))["resource_status"] == "CREATE_COMPLETE"
