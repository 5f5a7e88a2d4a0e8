"""Remote stacks end to end: an `OS::Heat::Stack` with a `context` is made through the
orchestration endpoint of its region in simcloud's Keystone catalog (this Warden),
and every operation of its parent reaches it there: update, suspend, resume, check,
replacement when marked unhealthy, delete.

The caller holds a Keystone token of the project Warden's cloud account is in, as
Heat's own functional tests do: the remote stack is made in that project.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.integration.conftest import Warden
from tests.integration.test_keystone import keystone_token
from tests.support.eventually import eventually

pytestmark = pytest.mark.integration

REMOTE = """
heat_template_version: 2013-05-23
resources:
  random1:
    type: OS::Heat::RandomString
outputs:
  remote_key:
    value: {get_attr: [random1, value]}
"""


def parent(region: str = "RegionOne", remote: str = REMOTE) -> dict[str, Any]:
    return {
        "heat_template_version": "2013-05-23",
        "resources": {
            "my_stack": {
                "type": "OS::Heat::Stack",
                "properties": {
                    "context": {"region_name": region},
                    "template": {"get_file": "remote_stack.yaml"},
                },
            }
        },
        "outputs": {"key": {"value": {"get_attr": ["my_stack", "outputs"]}}},
    }


async def settled(api: httpx.AsyncClient, url: str) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        stack: dict[str, Any] = (await api.get(url)).json()["stack"]
        return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

    return await eventually(done, timeout=60, what=f"{url} settled")


def output(stack: dict[str, Any], key: str) -> Any:
    return next(o["output_value"] for o in stack["outputs"] if o["output_key"] == key)


async def resource_names(api: httpx.AsyncClient, url: str) -> dict[str, str]:
    listed = (await api.get(f"{url}/resources")).json()["resources"]
    return {r["resource_name"]: r["resource_type"] for r in listed}


async def test_a_remote_stack_follows_its_parent_through_create_update_suspend_delete(
    warden: Warden,
) -> None:
    token, project = await keystone_token(warden)
    base = f"/v1/{project}/stacks"
    name = f"r{uuid.uuid4().hex[:8]}"
    async with warden.client(token) as api:
        created = await api.post(
            base,
            json={"stack_name": name, "template": parent(), "files": {"remote_stack.yaml": REMOTE}},
        )
        assert created.status_code == 201, created.text
        url = f"{base}/{name}/{created.json()['stack']['id']}"
        stack = await settled(api, url)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]

        rsrc = (await api.get(f"{url}/resources/my_stack")).json()["resource"]
        remote_id = rsrc["physical_resource_id"]
        assert "nested" not in {link["rel"] for link in rsrc["links"]}  # not Heat's nested
        remote = (await api.get(f"{base}/{remote_id}", follow_redirects=True)).json()["stack"]
        assert remote["id"] == remote_id
        assert remote["parent"] is None  # a stack of its own, not a nested one
        assert remote["stack_name"].startswith(f"{name}-my_stack-")
        remote_url = f"{base}/{remote['stack_name']}/{remote_id}"
        assert len(output(remote, "remote_key")) == 32
        assert output(stack, "key") == {"remote_key": output(remote, "remote_key")}
        assert await resource_names(api, remote_url) == {"random1": "OS::Heat::RandomString"}

        changed = REMOTE.replace("random1", "random2")
        updated = await api.put(
            url, json={"template": parent(), "files": {"remote_stack.yaml": changed}}
        )
        assert updated.status_code == 202, updated.text
        stack = await settled(api, url)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        rsrc = (await api.get(f"{url}/resources/my_stack")).json()["resource"]
        assert rsrc["physical_resource_id"] == remote_id  # updated in place
        assert await resource_names(api, remote_url) == {"random2": "OS::Heat::RandomString"}

        for action, status in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE")):
            answer = await api.post(f"{url}/actions", json={action: None})
            assert answer.status_code == 200, answer.text
            assert (await settled(api, url))["stack_status"] == status
            assert (await settled(api, remote_url))["stack_status"] == status

        checked = await api.post(f"{url}/actions", json={"check": None})
        assert checked.status_code == 200, checked.text
        assert (await settled(api, url))["stack_status"] == "CHECK_COMPLETE"
        assert (await settled(api, remote_url))["stack_status"] == "CHECK_COMPLETE"

        # Marked unhealthy, the remote stack is replaced by the next update (Heat's
        # `RemoteStack._needs_update`), and the old one deleted.
        marked = await api.patch(
            f"{url}/resources/my_stack",
            json={"mark_unhealthy": True, "resource_status_reason": "broken"},
        )
        assert marked.status_code == 200, marked.text
        assert (await api.patch(url, json={})).status_code == 202
        stack = await settled(api, url)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        rsrc = (await api.get(f"{url}/resources/my_stack")).json()["resource"]
        assert rsrc["physical_resource_id"] != remote_id
        await gone(api, remote_url)
        new_id = rsrc["physical_resource_id"]
        new = (await api.get(f"{base}/{new_id}", follow_redirects=True)).json()["stack"]
        assert output(stack, "key") == {"remote_key": output(new, "remote_key")}

        assert (await api.delete(url)).status_code == 204
        await gone(api, f"{base}/{new['stack_name']}/{new_id}")


async def gone(api: httpx.AsyncClient, url: str) -> None:
    async def absent() -> bool | None:
        return (await api.get(url)).status_code == 404 or None

    await eventually(absent, timeout=60, what=f"{url} deleted")


async def test_a_remote_stack_heat_refuses_is_a_400_naming_the_region(warden: Warden) -> None:
    token, project = await keystone_token(warden)
    base = f"/v1/{project}/stacks"
    names = [f"r{uuid.uuid4().hex[:8]}" for _ in range(2)]
    async with warden.client(token) as api:
        dark = await api.post(
            base,
            json={
                "stack_name": names[0],
                "template": parent(region="DARKHOLE"),
                "files": {"remote_stack.yaml": REMOTE},
            },
        )
        bad = await api.post(
            base,
            json={
                "stack_name": names[1],
                "template": parent(),
                "files": {"remote_stack.yaml": REMOTE.replace("resources", "resource")},
            },
        )
        listed = (await api.get(base)).json()["stacks"]

    assert dark.status_code == 400, dark.text
    assert dark.json()["error"]["message"] == (
        'Cannot establish connection to Heat endpoint at region "DARKHOLE" due to '
        '"public endpoint for orchestration service in DARKHOLE region not found"'
    )
    assert bad.status_code == 400, bad.text
    assert bad.json()["error"]["message"] == (
        'Failed validating stack template using Heat endpoint at region "RegionOne" due to '
        '"ERROR: The template section is invalid: resource"'
    )
    assert not [s for s in listed if s["stack_name"] in names]  # nothing was made
