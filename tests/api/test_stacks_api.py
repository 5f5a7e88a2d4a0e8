"""Stack routes: what the API decides before any Temporal call (400/401/403/404).

The `api` fixture's Temporal address is unreachable, so a test that got as far as
Temporal would answer 503 and fail its status assertion.
"""

from __future__ import annotations

from typing import Any

import httpx

STACKS = "/v1/demo/stacks"
#: A stack that does not exist: enough for every rule decided before the lookup.
STACK = f"{STACKS}/web/6f1c1f4e-0000-4000-8000-000000000000"
NONE = "OS::Heat::None"


def hot(resources: dict[str, Any], **sections: Any) -> dict[str, Any]:
    return {"heat_template_version": "2021-04-16", "resources": resources, **sections}


def assert_error(response: httpx.Response, code: int, *needles: str) -> None:
    """The error body (docs/api-contract.md §Errors) with `code`, its message naming each needle."""
    assert response.status_code == code, response.text
    body = response.json()
    assert set(body) == {"code", "title", "explanation", "error"}, body
    assert set(body["error"]) == {"code", "title", "message", "type", "traceback"}, body
    assert body["code"] == body["error"]["code"] == code
    assert body["title"] == body["error"]["title"]
    assert body["error"]["traceback"] is None
    assert body["error"]["type"]
    assert isinstance(body["error"]["title"], str)
    assert body["error"]["title"]
    for needle in needles:
        assert needle in body["error"]["message"], body
    assert "Traceback" not in response.text


async def create(api: httpx.AsyncClient, template: Any, **body: Any) -> httpx.Response:
    return await api.post(STACKS, json={"stack_name": "web", "template": template, **body})


# --- POST /stacks: the template and the body -----------------------------------------


async def test_create_rejects_unknown_resource_type_with_400(api: httpx.AsyncClient) -> None:
    response = await create(api, hot({"a": {"type": "OS::Nope::Thing"}}))
    assert_error(response, 400, "resources.a.type", "OS::Nope::Thing")


async def test_create_rejects_cycle_naming_it_with_400(api: httpx.AsyncClient) -> None:
    cycle = {"a": {"type": NONE, "depends_on": "b"}, "b": {"type": NONE, "depends_on": "a"}}
    response = await create(api, hot(cycle))
    assert_error(response, 400, "Circular Dependency Found: a -> b -> a")


async def test_create_rejects_dangling_get_resource_with_400(api: httpx.AsyncClient) -> None:
    dangling = {"a": {"type": NONE, "properties": {"x": {"get_resource": "ghost"}}}}
    response = await create(api, hot(dangling))
    assert_error(response, 400, "resources.a.properties.x.get_resource", '"ghost"')


async def test_create_rejects_yaml_syntax_error_with_400(api: httpx.AsyncClient) -> None:
    response = await create(api, "heat_template_version: 2021-04-16\nresources: [a, b\n")
    assert_error(response, 400, "Invalid template: ", "(line 2)")


async def test_create_rejects_unknown_top_level_key_with_400(api: httpx.AsyncClient) -> None:
    response = await create(api, {**hot({}), "resourcez": {}})
    assert_error(response, 400, "The template section is invalid: resourcez")


async def test_create_rejects_missing_required_parameter_with_400(
    api: httpx.AsyncClient,
) -> None:
    template = hot({}, parameters={"flavor": {"type": "string"}})
    response = await create(api, template)
    assert_error(response, 400, "The Parameter (flavor) was not provided.")


async def test_create_rejects_unknown_body_key_with_400(api: httpx.AsyncClient) -> None:
    assert_error(await create(api, hot({}), colour="red"), 400, "Unknown key 'colour'")


async def test_create_rejects_stack_name_off_pattern_with_400(api: httpx.AsyncClient) -> None:
    response = await api.post(STACKS, json={"stack_name": "1web", "template": hot({})})
    assert_error(response, 400, "Invalid value for 'stack_name'")


# --- POST …/actions: the body is parsed before the stack is looked up -----------------


async def test_action_without_key_is_400(api: httpx.AsyncClient) -> None:
    assert_error(await api.post(f"{STACK}/actions", json={}), 400, "No action specified")


async def test_action_with_two_keys_is_400(api: httpx.AsyncClient) -> None:
    body = {"suspend": None, "resume": None}
    assert_error(await api.post(f"{STACK}/actions", json=body), 400, "Multiple actions specified")


async def test_unknown_action_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(f"{STACK}/actions", json={"explode": None})
    assert_error(response, 400, "Invalid action explode specified")


async def test_lock_with_unknown_level_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(f"{STACK}/actions", json={"lock": {"level": "bogus"}})
    assert_error(response, 400, "lock.level")


async def test_check_with_arguments_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(f"{STACK}/actions", json={"check": {"x": 1}})
    assert_error(response, 400, "check: takes no arguments")


async def test_valid_action_reaches_the_lookup_and_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(f"{STACK}/actions", json={"check": None})
    assert_error(response, 404, "The Stack (web) could not be found.")


# --- PATCH …/resources/{resource_name}: the body model is checked first ---------------


async def test_mark_without_mark_unhealthy_is_400(api: httpx.AsyncClient) -> None:
    response = await api.patch(f"{STACK}/resources/vm", json={})
    assert_error(response, 400, "Missing required field 'mark_unhealthy'")


async def test_mark_unhealthy_yes_is_400(api: httpx.AsyncClient) -> None:
    response = await api.patch(f"{STACK}/resources/vm", json={"mark_unhealthy": "yes"})
    assert_error(response, 400, "mark_unhealthy", "'yes'")


async def test_mark_unhealthy_one_is_400(api: httpx.AsyncClient) -> None:
    response = await api.patch(f"{STACK}/resources/vm", json={"mark_unhealthy": 1})
    assert_error(response, 400, "mark_unhealthy")


async def test_mark_with_unknown_key_is_400(api: httpx.AsyncClient) -> None:
    body = {"mark_unhealthy": True, "colour": "red"}
    response = await api.patch(f"{STACK}/resources/vm", json=body)
    assert_error(response, 400, "Unknown key 'colour'")


async def test_valid_mark_reaches_the_lookup_and_is_404(api: httpx.AsyncClient) -> None:
    response = await api.patch(f"{STACK}/resources/vm", json={"mark_unhealthy": True})
    assert_error(response, 404, "The Stack (web) could not be found.")


# --- who may ask, and what is not there ----------------------------------------------


async def test_other_project_in_path_is_403(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/v1/other/stacks"), 403, "project other")


async def test_request_without_token_is_401(api: httpx.AsyncClient) -> None:
    request = api.build_request("GET", STACKS)
    del request.headers["X-Auth-Token"]
    assert_error(await api.send(request), 401, "X-Auth-Token")


async def test_reader_cannot_create_a_stack(api: httpx.AsyncClient) -> None:
    body = {"stack_name": "web", "template": hot({"a": {"type": NONE}})}
    response = await api.post(STACKS, json=body, headers={"X-Auth-Token": "reader-demo"})
    assert_error(response, 403, "reader")


async def test_get_unknown_stack_id_is_404(api: httpx.AsyncClient) -> None:
    assert_error(await api.get(STACK), 404, "The Stack (web) could not be found.")


async def test_find_unknown_stack_name_is_404(api: httpx.AsyncClient) -> None:
    assert_error(await api.get(f"{STACKS}/ghost"), 404, "The Stack (ghost) could not be found.")
