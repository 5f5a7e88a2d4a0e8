"""Heat's URL and document shapes in process: lookups that redirect, version documents,
template versions, resource types, preview and validate (no Temporal needed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import yaml

from store.db import make_engine, session_scope
from store.stacks import StackRecord

STACK_ID = "0f6b7c1e-1111-4222-8333-444455556666"
TEMPLATE = {
    "heat_template_version": "2016-04-08",
    "parameters": {"v": {"type": "string", "default": "x"}},
    "resources": {"t": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}}},
    "outputs": {"out": {"value": {"get_attr": ["t", "output"]}, "description": "the value"}},
}


@pytest.fixture
def stack(api: httpx.AsyncClient, tmp_path: Path) -> StackRecord:
    """A stack row as its workflow would have projected it."""
    now = datetime.now(UTC)
    record = StackRecord(
        id=STACK_ID,
        project_id="demo",
        name="shop",
        action="CREATE",
        status="COMPLETE",
        template=TEMPLATE,
        outputs={"out": "a"},
        created_at=now,
        updated_at=now,
    )
    engine = make_engine(f"sqlite:///{tmp_path / 'warden.db'}")
    with session_scope(engine) as session:
        session.add(record)
    engine.dispose()
    return record


CANONICAL = f"http://api/v1/demo/stacks/shop/{STACK_ID}"


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("shop", ""),
        (STACK_ID, ""),
        ("shop/resources", "/resources"),
        ("shop/events?sort_dir=desc&limit=2", "/events?sort_dir=desc&limit=2"),
        ("shop/actions", "/actions"),
        ("shop/outputs/out", "/outputs/out"),
        ("shop/resources/t/events", "/resources/t/events"),
    ],
)
async def test_name_only_urls_redirect_to_the_absolute_canonical_url(
    api: httpx.AsyncClient, stack: StackRecord, method: str, path: str, target: str
) -> None:
    response = await api.request(method, f"/v1/demo/stacks/{path}")
    assert response.status_code == 302, response.text
    assert response.headers["location"] == CANONICAL + target


async def test_lookup_of_unknown_stack_is_404(api: httpx.AsyncClient, stack: StackRecord) -> None:
    assert (await api.delete("/v1/demo/stacks/nope")).status_code == 404
    assert (await api.get("/v1/demo/stacks/nope/resources")).status_code == 404


async def test_outputs_list_keys_and_show_one(api: httpx.AsyncClient, stack: StackRecord) -> None:
    listed = await api.get(f"/v1/demo/stacks/shop/{STACK_ID}/outputs")
    assert listed.json() == {"outputs": [{"output_key": "out", "description": "the value"}]}
    shown = await api.get(f"/v1/demo/stacks/shop/{STACK_ID}/outputs/out")
    assert shown.json()["output"] == {
        "output_key": "out",
        "output_value": "a",
        "description": "the value",
    }
    missing = await api.get(f"/v1/demo/stacks/shop/{STACK_ID}/outputs/nope")
    assert missing.status_code == 404


async def test_stack_show_has_heats_fields_and_absolute_links(
    api: httpx.AsyncClient, stack: StackRecord
) -> None:
    shown = (await api.get(f"/v1/demo/stacks/shop/{STACK_ID}")).json()["stack"]
    assert shown["links"] == [{"href": CANONICAL, "rel": "self"}]
    assert shown["parameters"]["OS::stack_name"] == "shop"
    assert shown["capabilities"] == [] and shown["deletion_time"] is None


async def test_version_documents_at_root_and_v1(api: httpx.AsyncClient) -> None:
    for path in ("/", "/v1/"):
        response = await api.get(path)
        assert response.status_code == 300
        (version,) = response.json()["versions"]
        assert version["id"] == "v1.0"
        assert version["links"][0]["href"] == "http://api/v1/"


async def test_template_versions_and_functions(api: httpx.AsyncClient) -> None:
    versions = (await api.get("/v1/demo/template_versions")).json()["template_versions"]
    assert {"version": "heat_template_version.2016-04-08", "type": "hot", "aliases": []} in (
        versions
    )
    functions = await api.get("/v1/demo/template_versions/heat_template_version.wallaby/functions")
    assert "get_file" in {f["functions"] for f in functions.json()["template_functions"]}
    unknown = await api.get("/v1/demo/template_versions/nope/functions")
    assert unknown.status_code == 404


async def test_resource_types_list_show_and_template(api: httpx.AsyncClient) -> None:
    listed = (await api.get("/v1/demo/resource_types")).json()["resource_types"]
    assert "OS::Nova::Server" in listed
    shown = (await api.get("/v1/demo/resource_types/OS::Nova::Server")).json()
    assert shown["properties"]["flavor"]["required"] is True
    assert (await api.get("/v1/demo/resource_types/OS::Nope::Nope")).status_code == 404
    template = await api.get(
        "/v1/demo/resource_types/OS::Heat::RandomString/template", params={"template_type": "hot"}
    )
    assert template.json()["resources"]["RandomString"]["type"] == "OS::Heat::RandomString"


async def test_validate_reports_parameters_and_rejects_bad_templates(
    api: httpx.AsyncClient,
) -> None:
    ok = await api.post("/v1/demo/validate", json={"template": TEMPLATE})
    assert ok.status_code == 200
    assert ok.json()["Parameters"]["v"]["Type"] == "String"
    bad = await api.post(
        "/v1/demo/validate", json={"template": {**TEMPLATE, "heat_template_version": "1999"}}
    )
    assert bad.status_code == 400 and "template version is invalid" in bad.text


async def test_preview_lists_resources_without_creating(api: httpx.AsyncClient) -> None:
    preview = await api.post(
        "/v1/demo/stacks/preview", json={"stack_name": "maybe", "template": TEMPLATE}
    )
    assert preview.status_code == 200, preview.text
    (resource,) = preview.json()["stack"]["resources"]
    assert resource["resource_name"] == "t"
    assert (await api.get("/v1/demo/stacks")).json()["stacks"] == []


async def test_preview_of_a_group_of_template_members_lists_each_member_s_resources(
    api: httpx.AsyncClient,
) -> None:
    member = {
        "heat_template_version": "2015-04-30",
        "parameters": {"net": {"type": "string"}},
        "resources": {
            "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_param": "net"}}}
        },
    }
    template = {
        "heat_template_version": "2015-04-30",
        "resources": {
            "net": {"type": "OS::Neutron::Net"},
            "rg": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 2,
                    "resource_def": {
                        "type": "member.yaml",
                        "properties": {"net": {"get_resource": "net"}},
                    },
                },
            },
        },
    }
    preview = await api.post(
        "/v1/demo/stacks/preview",
        json={
            "stack_name": "grp",
            "template": template,
            "files": {"member.yaml": yaml.safe_dump(member)},
        },
    )
    assert preview.status_code == 200, preview.text
    net, members = preview.json()["stack"]["resources"]
    assert net["resource_name"] == "net"
    assert [[(r["resource_name"], r["stack_name"]) for r in m] for m in members] == [
        [("port", "grp-rg-0")],
        [("port", "grp-rg-1")],
    ]
    assert members[0][0]["parent_resource"] == "0"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"template_url": "http://example.com/t.yaml"}, "template_url is not supported"),
        ({"tags": "a," + "b" * 81}, f'Invalid tag, "{"b" * 81}" is longer than 80 characters'),
        ({"tags": ["a,b"]}, 'Invalid tag, "a,b" contains a comma'),
        ({"environment": {"bogus": {}}}, 'wrong section "bogus"'),
        ({"environment_files": ["env.yaml"]}, '"env.yaml" is not in "files"'),
        ({"adopt_stack_data": "{}"}, "adopt_stack_data"),
    ],
)
async def test_create_inputs_heat_takes_but_warden_does_not_are_400(
    api: httpx.AsyncClient, extra: dict[str, object], message: str
) -> None:
    response = await api.post(
        "/v1/demo/stacks", json={"stack_name": "s", "template": TEMPLATE, **extra}
    )
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


async def test_null_environment_files_are_none_as_heat_takes_them(api: httpx.AsyncClient) -> None:
    """heat-tempest-plugin's `stack_create` sends `"environment_files": null`."""
    body = {"stack_name": "maybe", "template": TEMPLATE, "environment_files": None}
    preview = await api.post("/v1/demo/stacks/preview", json=body)
    assert preview.status_code == 200, preview.text


async def test_preview_path_is_not_a_stack_name(api: httpx.AsyncClient) -> None:
    response = await api.get("/v1/demo/stacks/preview")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def test_validate_reads_show_nested_from_the_query_as_heatclient_sends_it(
    api: httpx.AsyncClient,
) -> None:
    nested = {"heat_template_version": "2021-04-16", "parameters": {"p": {"type": "string"}}}
    parent = {
        "heat_template_version": "2021-04-16",
        "resources": {"box": {"type": "box.yaml"}},
    }
    body = {"template": parent, "files": {"box.yaml": yaml.safe_dump(nested)}}
    shown = await api.post("/v1/demo/validate?show_nested=True", json=body)
    assert shown.status_code == 200, shown.text
    assert shown.json()["NestedParameters"]["box"]["Type"] == "box.yaml"
    assert "NestedParameters" not in (await api.post("/v1/demo/validate", json=body)).json()
    bad = await api.post("/v1/demo/validate?show_nested=maybe", json=body)
    assert bad.status_code == 400
    assert 'Unrecognized value "maybe" for "show_nested"' in bad.json()["error"]["message"]


PREVIEWED = """
heat_template_version: 2015-04-30
parameters:
  incomming:
    type: string
resources:
  one:
    type: OS::Heat::TestResource
    properties:
      value: fred
  main:
    type: nested.yaml
    properties:
      value: {get_param: incomming}
"""
NESTED = """
heat_template_version: 2015-04-30
parameters:
  value:
    type: string
resources:
  nested:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: value}
"""


async def test_preview_shows_resources_as_heat_with_nested_stacks_as_lists(
    api: httpx.AsyncClient,
) -> None:
    """heat-tempest-plugin's test_preview, in process."""
    body = {
        "stack_name": "pv",
        "template": PREVIEWED,
        "files": {"nested.yaml": NESTED},
        "environment": {"parameters": {"incomming": "abc"}},
    }
    shown = await api.post("/v1/demo/stacks/preview", json=body)
    assert shown.status_code == 200, shown.text
    stack = shown.json()["stack"]
    assert (stack["id"], stack["parent"], stack["template_description"]) == (
        "None",
        None,
        "No description",
    )
    assert stack["parameters"]["OS::stack_id"] == "None"
    assert stack["parameters"]["incomming"] == "abc"
    one, [nested] = stack["resources"]
    assert one["properties"] == {
        "value": "fred",
        "fail": False,
        "wait_secs": 0,
        "update_replace": False,
    }
    assert "output" in one["attributes"] and one["creation_time"] is None
    assert one["resource_identity"] == {
        "stack_name": "pv",
        "stack_id": "None",
        "tenant": "demo",
        "path": "/resources/one",
    }
    assert (nested["stack_name"], nested["parent_resource"]) == ("pv-main", "main")
    assert nested["properties"]["value"] == "abc"
    assert nested["stack_identity"]["path"] == ""
    broken = {**body, "template": PREVIEWED.replace("value: fred", "value: {get_param: missing}")}
    refused = await api.post("/v1/demo/stacks/preview", json=broken)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "Property error: : resources.one.properties.value: : "
        "The Parameter (missing) was not provided."
    )
