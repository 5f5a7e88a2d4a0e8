"""Stack routes followed into StackWorkflow and back out through the store.

Each test drives the API in process against a real worker on the time-skipping server
(`running_warden`), so a route, its update, the workflow's rule and the projection a
GET reads are proven together — what tests/api's Temporal-less `api` fixture cannot.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.api.test_stacks_api import assert_error
from tests.support.eventually import eventually
from tests.support.warden_in_process import InProcessWarden

STACKS = "/v1/demo/stacks"
TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "parameters": {"flavor": {"type": "string", "default": "m1.tiny"}},
    "resources": {
        "config": {"type": "OS::Heat::TestResource", "properties": {"value": "v1"}},
        "web": {
            "type": "OS::Nova::Server",
            "properties": {
                "image": "cirros",
                "flavor": {"get_param": "flavor"},
                "metadata": {"config": {"get_attr": ["config", "output"]}},
            },
        },
    },
    "outputs": {"web_id": {"value": {"get_resource": "web"}}},
}


async def create_stack(api: httpx.AsyncClient, name: str = "shop") -> str:
    """POST a stack; its URL once the workflow has settled it."""
    created = await api.post(STACKS, json={"stack_name": name, "template": TEMPLATE})
    assert created.status_code == 201, created.text
    url = f"{STACKS}/{name}/{created.json()['stack']['id']}"
    stack = await settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    return url


async def settled(api: httpx.AsyncClient, url: str) -> dict[str, Any]:
    """The stack once no operation is in progress on it."""

    async def done() -> dict[str, Any] | None:
        response = await api.get(url)
        if response.status_code == 404:
            return None  # the create's first projection is not written yet
        stack: dict[str, Any] = response.json()["stack"]
        return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

    return await eventually(done, timeout=30, what=f"{url} settled")


async def resource(api: httpx.AsyncClient, url: str, name: str) -> dict[str, Any]:
    response = await api.get(f"{url}/resources/{name}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["resource"]
    return found


async def server_status(warden: InProcessWarden, server_id: str) -> str | None:
    """The simcloud server's status, or None when it no longer exists."""
    servers = {s.id: s.status for s in await warden.cloud.compute.list_servers()}
    return servers.get(server_id)


async def test_created_stack_reads_create_complete_with_its_server(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create_stack(api)
    stack = (await api.get(url)).json()["stack"]
    web = await resource(api, url, "web")
    assert web["resource_status"] == "CREATE_COMPLETE"
    assert stack["outputs"] == [
        {
            "output_key": "web_id",
            "output_value": web["physical_resource_id"],
            "description": "No description given",
        }
    ]
    assert await server_status(running_warden, web["physical_resource_id"]) == "ACTIVE"


async def test_mark_unhealthy_reads_check_failed_at_once_and_update_replaces_it(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create_stack(api)
    old = await resource(api, url, "web")

    marked = await api.patch(
        f"{url}/resources/web", json={"mark_unhealthy": True, "resource_status_reason": "wedged"}
    )
    assert marked.status_code == 200 and marked.content == b"", marked.text
    # Read-your-writes: the 200 means the projection already shows the mark.
    web = await resource(api, url, "web")
    assert (web["resource_status"], web["resource_status_reason"]) == ("CHECK_FAILED", "wedged")

    updated = await api.put(url, json={"template": TEMPLATE})
    assert updated.status_code == 202, updated.text
    stack = await settled(api, url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    web = await resource(api, url, "web")
    assert web["resource_status"] == "CREATE_COMPLETE"  # the new server, as Heat shows it
    assert web["physical_resource_id"] not in ("", old["physical_resource_id"])
    assert await server_status(running_warden, old["physical_resource_id"]) is None
    assert await server_status(running_warden, web["physical_resource_id"]) == "ACTIVE"


async def test_locked_stack_refuses_update_with_409_until_unlocked(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create_stack(api)
    lock = {"lock": {"level": "all", "reason": "patching", "owner": "ops"}}
    assert (await api.post(f"{url}/actions", json=lock)).status_code == 200
    assert (await settled(api, url))["stack_status"] == "LOCK_COMPLETE"

    refused = await api.put(url, json={"template": TEMPLATE})
    assert_error(refused, 409, "Stack shop is locked (level all by ops: patching)")
    refused_mark = await api.patch(f"{url}/resources/web", json={"mark_unhealthy": True})
    assert_error(refused_mark, 409, "unlock it first")
    web = await resource(api, url, "web")
    assert web["resource_status"] == "LOCK_COMPLETE"  # not CHECK_FAILED: the mark was refused
    # Level `all` locks the server at the compute API too, saying why.
    server = await running_warden.cloud.compute.get_server(web["physical_resource_id"])
    assert server.locked
    assert server.locked_reason == "Stack shop is locked (level all by ops: patching)"

    assert (await api.post(f"{url}/actions", json={"unlock": None})).status_code == 200
    assert (await settled(api, url))["stack_status"] == "UNLOCK_COMPLETE"
    assert not (await running_warden.cloud.compute.get_server(web["physical_resource_id"])).locked
    assert (await api.put(url, json={"template": TEMPLATE})).status_code == 202
    assert (await settled(api, url))["stack_status"] == "UPDATE_COMPLETE"


async def test_operations_the_workflow_rejects_answer_the_documented_errors(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create_stack(api)
    not_locked = await api.post(f"{url}/actions", json={"unlock": None})
    assert_error(not_locked, 409, "Stack shop is not locked (it is CREATE_COMPLETE).")
    unknown = await api.patch(f"{url}/resources/ghost", json={"mark_unhealthy": True})
    assert_error(unknown, 404, "The Resource (ghost) could not be found in Stack shop.")
    not_updating = await api.post(f"{url}/actions", json={"cancel_update": None})
    assert_error(
        not_updating, 400, "Cancelling update when stack is CREATE_COMPLETE is not supported."
    )
    assert not_updating.json()["error"]["type"] == "NotSupported"
    idle = await api.post(f"{url}/actions", json={"cancel_without_rollback": None})
    assert_error(idle, 400, "Cancelling update when stack is CREATE_COMPLETE is not supported.")
    # Rejections leave no trace: the stack still reads as created.
    assert (await api.get(url)).json()["stack"]["stack_status"] == "CREATE_COMPLETE"


async def test_a_new_name_and_metadata_are_set_on_the_same_server_as_heat_does(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    url = await create_stack(api)
    before = await resource(api, url, "web")
    changed = {**TEMPLATE, "resources": {**TEMPLATE["resources"]}}
    changed["resources"]["web"] = {
        "type": "OS::Nova::Server",
        "properties": {
            "image": "cirros",
            "flavor": {"get_param": "flavor"},
            "name": "renamed-web",
            "metadata": {"config": {"get_attr": ["config", "output"]}, "tier": "front"},
        },
    }

    assert (await api.put(url, json={"template": changed})).status_code == 202

    stack = await settled(api, url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    after = await resource(api, url, "web")
    assert after["physical_resource_id"] == before["physical_resource_id"]
    server = await running_warden.cloud.compute.get_server(after["physical_resource_id"])
    assert server.name == "renamed-web"
    assert {k: v for k, v in server.metadata.items() if not k.startswith("warden_")} == {
        "config": "v1",
        "tier": "front",
    }
    # Warden's own keys stay, so a retried create or a later delete still finds it.
    assert server.request_id is not None and server.metadata["warden_resource"] == "web"


async def test_tags_are_kept_replaced_by_an_update_and_filter_lists(
    running_warden: InProcessWarden,
) -> None:
    """heat-tempest-plugin's test_stack_tag, and Heat's list filters."""
    api = running_warden.api
    created = await api.post(
        STACKS, json={"stack_name": "tagged", "template": TEMPLATE, "tags": "foo,bar"}
    )
    assert created.status_code == 201, created.text
    url = f"{STACKS}/tagged/{created.json()['stack']['id']}"
    assert (await settled(api, url))["tags"] == ["foo", "bar"]
    await create_stack(api, "plain")
    hidden = {"stack_name": "hidden", "template": TEMPLATE, "tags": ["data-processing-cluster"]}
    assert (await api.post(STACKS, json=hidden)).status_code == 201

    async def names(**query: str) -> set[str]:
        listed = await api.get(STACKS, params=query)
        assert listed.status_code == 200, listed.text
        return {s["stack_name"] for s in listed.json()["stacks"]}

    assert await names() == {"tagged", "plain"}  # Heat's hidden_stack_tags default
    assert await names(show_hidden="true") == {"tagged", "plain", "hidden"}
    assert await names(tags="foo,bar") == {"tagged"}
    assert await names(tags="foo,nope") == set()
    assert await names(tags_any="nope,bar") == {"tagged"}
    assert await names(not_tags="foo,bar") == {"plain"}
    assert await names(not_tags_any="bar") == {"plain"}

    # A PATCH without tags keeps them; a PUT with tags replaces them; one without clears.
    assert (await api.patch(url, json={"parameters": {"flavor": "m1.tiny"}})).status_code == 202
    assert (await settled(api, url))["tags"] == ["foo", "bar"]
    replaced = await api.put(url, json={"template": TEMPLATE, "tags": "tag1,tag2"})
    assert replaced.status_code == 202, replaced.text
    assert (await settled(api, url))["tags"] == ["tag1", "tag2"]
    assert (await api.put(url, json={"template": TEMPLATE})).status_code == 202
    assert not (await settled(api, url))["tags"]


async def test_an_events_detail_names_its_resource_type(running_warden: InProcessWarden) -> None:
    """heat-tempest-plugin's test_event: the detail adds `resource_type` (a stack's own
    events are OS::Heat::Stack's)."""
    api = running_warden.api
    url = await create_stack(api, "evented")
    for name, kind in (("web", "OS::Nova::Server"), ("evented", "OS::Heat::Stack")):
        listed = (await api.get(f"{url}/resources/{name}/events")).json()["events"]
        assert listed and "resource_type" not in listed[0]
        shown = await api.get(f"{url}/resources/{name}/events/{listed[0]['id']}")
        assert shown.status_code == 200, shown.text
        assert (shown.json()["event"]["resource_name"], shown.json()["event"]["resource_type"]) == (
            name,
            kind,
        )


async def test_a_nested_stack_pauses_at_its_hook_until_a_signal_clears_it(
    running_warden: InProcessWarden,
) -> None:
    """heat-tempest-plugin's test_hook_pre_create_nested: the environment's hook reaches
    the nested stack, found through the resource's `nested` link, and the signal route's
    `unset_hook` clears it."""
    api = running_warden.api
    steps = {
        "heat_template_version": "2014-10-16",
        "resources": {
            "one": {"type": "OS::Heat::RandomString"},
            "two": {"type": "OS::Heat::RandomString", "depends_on": "one"},
        },
    }
    body = {
        "stack_name": "hooked",
        "template": {
            "heat_template_version": "2014-10-16",
            "resources": {"inner": {"type": "inner.yaml"}},
        },
        "files": {"inner.yaml": json.dumps(steps)},
        "environment": {
            "resource_registry": {"resources": {"inner": {"two": {"hooks": "pre-create"}}}}
        },
    }
    created = await api.post(STACKS, json=body)
    assert created.status_code == 201, created.text
    url = f"{STACKS}/hooked/{created.json()['stack']['id']}"

    async def nested_url() -> str | None:
        shown = await api.get(f"{url}/resources/inner")
        if shown.status_code == 404:
            return None  # not projected yet
        links = shown.json()["resource"]["links"]
        nested = [link["href"] for link in links if link["rel"] == "nested"]
        # Heat shows the nested stack's id as the physical id while it is being made.
        assert not nested or nested[0].endswith(shown.json()["resource"]["physical_resource_id"])
        return "/".join(["/v1/demo/stacks", *nested[0].split("/")[-2:]]) if nested else None

    inner = await eventually(nested_url, timeout=30, what="the nested stack's link")

    async def paused() -> bool:
        events = (await api.get(f"{inner}/resources/two/events")).json().get("events") or []
        return any(
            e["resource_status_reason"] == "CREATE paused until Hook pre-create is cleared"
            for e in events
        )

    await eventually(paused, timeout=30, what="the pause event")
    assert (await resource(api, inner, "two"))["resource_status"] == "INIT_COMPLETE"
    refused = await api.post(f"{inner}/resources/one/signal", json={"unset_hook": "pre-create"})
    assert_error(refused, 400, 'The "pre-create" hook is not defined on one')
    cleared = await api.post(f"{inner}/resources/two/signal", json={"unset_hook": "pre-create"})
    assert cleared.status_code == 200, cleared.text
    stack = await settled(api, url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]


ERRING = """
heat_template_version: 2015-10-15
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a}}
outputs:
  out_a: {value: {get_attr: [a, output]}}
  out_b: {description: needs foo, value: {get_param: foo}}
"""


async def test_an_output_that_cannot_be_worked_out_is_an_output_error_not_a_failure(
    running_warden: InProcessWarden,
) -> None:
    parent = {
        "heat_template_version": "2015-10-15",
        "resources": {"parent": {"type": "1.yaml"}},
        "outputs": {
            "a": {"value": {"get_attr": ["parent", "out_a"]}},
            "b": {"value": {"get_attr": ["parent", "out_b"]}, "description": "parent b"},
        },
    }
    api = running_warden.api
    created = await api.post(
        STACKS, json={"stack_name": "erring", "template": parent, "files": {"1.yaml": ERRING}}
    )
    assert created.status_code == 201, created.text
    url = f"{STACKS}/erring/{created.json()['stack']['id']}"
    stack = await settled(api, url)
    one = (await api.get(f"{url}/outputs/b")).json()["output"]

    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    b = {
        "output_key": "b",
        "output_value": None,
        "output_error": "Error in parent output out_b: The Parameter (foo) was not provided.",
        "description": "parent b",
    }
    assert sorted(stack["outputs"], key=lambda o: o["output_key"]) == [
        {"output_key": "a", "output_value": "a", "description": "No description given"},
        b,
    ]
    assert one == b


MEMBER = """
heat_template_version: 2015-04-30
parameters:
  label: {type: string}
resources:
  box: {type: OS::Heat::TestResource, properties: {value: {get_param: label}}}
outputs:
  label: {value: {get_attr: [box, output]}}
"""


async def test_a_group_of_template_members_makes_each_a_stack_of_the_template(
    running_warden: InProcessWarden,
) -> None:
    template = {
        "heat_template_version": "2015-04-30",
        "resources": {
            "rg": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {"type": "My::Box", "properties": {"label": "box-%index%"}},
                },
            }
        },
        "outputs": {
            "labels": {"value": {"get_attr": ["rg", "attributes", "label"]}},
            "listed": {"value": {"get_attr": ["rg", "label"]}},
        },
    }
    api = running_warden.api
    created = await api.post(
        STACKS,
        json={
            "stack_name": "boxes",
            "template": template,
            "files": {"member.yaml": MEMBER},
            "environment": {"resource_registry": {"My::Box": "member.yaml"}},
        },
    )
    assert created.status_code == 201, created.text
    url = f"{STACKS}/boxes/{created.json()['stack']['id']}"
    stack = await settled(api, url)
    listed = await api.get(f"{url}/resources", params={"nested_depth": 2})

    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
    assert outputs["labels"] == {"0": "box-0", "1": "box-1"}
    assert outputs["listed"] == ["box-0", "box-1"]  # any other name: each member's, in order
    names = {(r["resource_name"], r["resource_type"]) for r in listed.json()["resources"]}
    assert {("0", "OS::Heat::Stack"), ("1", "OS::Heat::Stack")} <= names
    assert ("box", "OS::Heat::TestResource") in names
