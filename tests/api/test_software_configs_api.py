"""Heat's config store (`/v1/{project}/software_configs`), answered as Heat answers."""

from __future__ import annotations

import httpx

CONFIGS = "/v1/demo/software_configs"


async def test_a_config_is_stored_shown_listed_and_deleted(api: httpx.AsyncClient) -> None:
    body = {
        "name": "hello",
        "group": "script",
        "config": "#!/bin/sh -x\necho hello",
        "inputs": [{"name": "foo"}, {"name": "bar", "type": "Number", "replace_on_change": True}],
        "outputs": [{"name": "result"}],
    }
    created = await api.post(CONFIGS, json=body)
    assert created.status_code == 200, created.text
    config = created.json()["software_config"]
    assert config["group"] == "script" and config["options"] == {}
    assert config["inputs"] == [
        {"name": "foo", "type": "String"},
        {"name": "bar", "type": "Number", "replace_on_change": True},
    ]
    assert config["outputs"] == [{"name": "result", "type": "String", "error_output": False}]

    shown = await api.get(f"{CONFIGS}/{config['id']}")
    assert shown.status_code == 200 and shown.json()["software_config"] == config

    listed = (await api.get(CONFIGS)).json()["software_configs"]
    assert listed == [
        {
            "id": config["id"],
            "name": "hello",
            "group": "script",
            "creation_time": config["creation_time"],
        }
    ]

    assert (await api.delete(f"{CONFIGS}/{config['id']}")).status_code == 204
    gone = await api.get(f"{CONFIGS}/{config['id']}")
    assert gone.status_code == 404
    assert gone.json()["error"]["message"] == f"Software config with id {config['id']} not found"
    assert gone.json()["error"]["type"] == "NotFound"


async def test_the_list_pages_by_marker_and_limit(api: httpx.AsyncClient) -> None:
    ids = [
        (await api.post(CONFIGS, json={"name": f"c{i}", "config": "x"})).json()["software_config"][
            "id"
        ]
        for i in range(3)
    ]
    page = (await api.get(CONFIGS, params={"limit": 2})).json()["software_configs"]
    assert [c["id"] for c in page] == ids[:2]
    rest = (await api.get(CONFIGS, params={"marker": ids[1]})).json()["software_configs"]
    assert [c["id"] for c in rest] == ids[2:]


async def test_bad_requests_get_heats_400s(api: httpx.AsyncClient) -> None:
    cases = [
        ({"inputs": "foo"}, "Software Config I/O Schema must be in a list"),
        ({"inputs": ["foo"]}, "Software Config I/O Schema must be a dict"),
        ({"inputs": [{"type": "String"}]}, "Property name not assigned"),
        ({"outputs": [{"name": "a", "type": "Text"}]}, '"Text" is not an allowed value'),
        ({"inputs": [{"name": "a", "colour": "red"}]}, "Unknown Property colour"),
    ]
    for body, message in cases:
        answer = await api.post(CONFIGS, json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert message in answer.json()["error"]["message"]
    for params, message in (
        ({"limit": "two"}, "Only integer is acceptable by 'limit'."),
        ({"limit": "-1"}, "which only accepts non-negative integer"),
        ({"global_tenant": "maybe"}, 'Unrecognized value "maybe" for "global_tenant"'),
    ):
        answer = await api.get(CONFIGS, params=params)
        assert answer.status_code == 400 and message in answer.json()["error"]["message"]
    assert (await api.get(CONFIGS, params={"marker": "nope"})).status_code == 404
    # Nothing half-made: none of the refused configs was stored.
    assert (await api.get(CONFIGS)).json()["software_configs"] == []


async def test_another_projects_config_is_not_found_and_readers_cannot_write(
    api: httpx.AsyncClient,
) -> None:
    made = (await api.post(CONFIGS, json={"config": "x"})).json()["software_config"]
    other = {"X-Auth-Token": "member-other"}
    assert (
        await api.get(f"/v1/other/software_configs/{made['id']}", headers=other)
    ).status_code == 404
    assert (await api.get(f"{CONFIGS}/{made['id']}", headers=other)).status_code == 403
    reader = {"X-Auth-Token": "reader-demo"}
    assert (await api.post(CONFIGS, json={"config": "x"}, headers=reader)).status_code == 403
    assert (await api.delete(f"{CONFIGS}/{made['id']}", headers=reader)).status_code == 403
