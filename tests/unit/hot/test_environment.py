"""Heat environments, `files`, template versions and resource-type documents (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest, NotFound
from domain.hot.environment import (
    expand_template,
    merge_environments,
    parse_environment,
    stack_parameters,
    template_data,
)
from domain.hot.template import load_template
from domain.hot.versions import canonical_version, template_functions, template_versions
from domain.stack.resource_type_docs import generated_template, known_type, resource_schema

NESTED = """
heat_template_version: 2016-10-14
parameters:
  size: {type: number}
  zone: {type: string}
resources:
  box: {type: OS::Heat::TestResource, properties: {value: {get_param: zone}}}
outputs:
  where: {value: {get_attr: [box, output]}}
"""


def template(**resources: Any) -> dict[str, Any]:
    return {"heat_template_version": "2016-10-14", "resources": resources}


def test_registry_alias_and_glob_become_the_real_type() -> None:
    env = parse_environment(
        {"resource_registry": {"My::Thing": "OS::Heat::None", "Old::Heat::*": "OS::Heat::*"}}
    )
    out = expand_template(
        template(a={"type": "My::Thing"}, b={"type": "Old::Heat::RandomString"}), {}, env
    )
    assert out["resources"]["a"]["type"] == "OS::Heat::None"
    assert out["resources"]["b"]["type"] == "OS::Heat::RandomString"
    load_template(out)


def test_template_resource_from_files_becomes_a_nested_stack_reading_its_outputs() -> None:
    env = parse_environment({"parameter_defaults": {"zone": "az1", "unrelated": 1}})
    top = template(inner={"type": "box.yaml", "properties": {"size": 3}})
    top["outputs"] = {"where": {"value": {"get_attr": ["inner", "where"]}}}
    out = expand_template(top, {"box.yaml": NESTED}, env)
    inner = out["resources"]["inner"]
    assert inner["type"] == "OS::Heat::Stack"
    assert inner["properties"]["parameters"] == {"zone": "az1", "size": 3}
    assert inner["properties"]["template"]["resources"]["box"]["type"] == "OS::Heat::TestResource"
    assert out["outputs"]["where"]["value"] == {"get_attr": ["inner", "outputs", "where"]}
    load_template(out)


def test_a_stack_s_own_template_has_its_template_resources_resolved_from_the_files() -> None:
    """Heat resolves them from the parent's files (and sends those to a remote stack's
    Heat); Warden sends the template with them resolved."""
    middle = "heat_template_version: 2016-10-14\nresources:\n  base: {type: box.yaml}\n"
    props = {"template": {"get_file": "middle.yaml"}, "context": {"region_name": "R2"}}
    files = {"middle.yaml": middle, "box.yaml": NESTED}
    out = expand_template(
        template(remote={"type": "OS::Heat::Stack", "properties": props}), files, {}
    )
    inner = out["resources"]["remote"]["properties"]["template"]
    assert inner["resources"]["base"]["type"] == "OS::Heat::Stack"
    assert inner["resources"]["base"]["properties"]["template"]["resources"]["box"]
    assert out["resources"]["remote"]["properties"]["context"] == {"region_name": "R2"}
    # A template with nothing to resolve is sent as it was written.
    plain = {"template": {"get_file": "box.yaml"}}
    out = expand_template(template(n={"type": "OS::Heat::Stack", "properties": plain}), files, {})
    assert out["resources"]["n"]["properties"]["template"] == NESTED


def test_get_file_inlines_the_text_and_a_missing_file_is_a_400() -> None:
    top = template(a={"type": "OS::Heat::TestResource", "properties": {"value": {"get_file": "m"}}})
    assert expand_template(top, {"m": "hi"}, {})["resources"]["a"]["properties"]["value"] == "hi"
    with pytest.raises(InvalidRequest, match='"files" section for get_file path: m'):
        expand_template(top, {}, {})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"nonsense": {}}, 'wrong section "nonsense"'),
        ({"parameters": []}, "environment.parameters: must be a mapping"),
        ({"resource_registry": {"A::B": 3}}, "must name a resource type or a file"),
        (
            {"resource_registry": {"resources": {"x": {"A::B": "c.yaml"}}}},
            "per-resource type overrides",
        ),
        ("a: [unclosed", "environment: not valid YAML"),
    ],
)
def test_bad_environments_are_400s(env: Any, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        parse_environment(env)


def test_registry_loops_and_remote_templates_are_400s() -> None:
    loop = parse_environment({"resource_registry": {"A::A": "B::B", "B::B": "A::A"}})
    with pytest.raises(InvalidRequest, match="loops"):
        expand_template(template(x={"type": "A::A"}), {}, loop)
    with pytest.raises(InvalidRequest, match='not in "files"'):
        expand_template(template(x={"type": "http://example.com/t.yaml"}), {}, {})


def test_parameters_precedence_defaults_then_env_then_request() -> None:
    env = merge_environments(
        [
            {"parameter_defaults": {"a": 1, "b": 1, "undeclared": 1}},
            {"parameters": {"b": 2, "c": 2}},
        ]
    )
    declared: dict[str, Any] = {"a": {}, "b": {}, "c": {}}
    assert stack_parameters(declared, env, {"c": 3}) == {"a": 1, "b": 2, "c": 3}


def test_template_text_parses_dates_as_text() -> None:
    assert template_data("heat_template_version: 2016-04-08\n")["heat_template_version"] == (
        "2016-04-08"
    )


def test_template_versions_list_dates_with_release_aliases() -> None:
    versions = {v["version"]: v for v in template_versions()}
    assert versions["heat_template_version.2017-09-01"]["aliases"] == ["heat_template_version.pike"]
    assert canonical_version("pike") == "2017-09-01"
    with pytest.raises(InvalidRequest, match="template version is invalid"):
        canonical_version("2099-01-01")


def test_template_functions_by_version_and_alias() -> None:
    old = {f["functions"] for f in template_functions("heat_template_version.2013-05-23")}
    assert "get_file" in old and "list_join" in old and "repeat" not in old  # Heat's lists
    pike = {f["functions"] for f in template_functions("heat_template_version.pike")}
    assert {"list_join", "make_url", "if", "list_concat_unique"} <= pike
    conditions = template_functions("heat_template_version.2016-10-14", conditions=True)
    assert [f["functions"] for f in conditions] == ["get_param", "equals", "not", "and", "or"]
    assert template_functions("heat_template_version.2016-04-08", conditions=True) == []
    with pytest.raises(NotFound):
        template_functions("heat_template_version.1999-01-01")


def test_resource_type_documents_follow_heats_shapes() -> None:
    rtype = known_type("OS::Heat::TestResource")
    schema = resource_schema(rtype)
    assert schema["support_status"]["status"] == "SUPPORTED"
    assert schema["properties"]["wait_secs"]["default"] == 0
    generated = generated_template(rtype)
    assert generated["resources"]["TestResource"]["type"] == "OS::Heat::TestResource"
    load_template(generated)
    with pytest.raises(NotFound):
        known_type("OS::Nova::Nothing")
