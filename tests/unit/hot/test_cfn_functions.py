"""HOT's CloudFormation-style functions (2013-05-23's `Ref`, `Fn::GetAtt`, `Fn::Join`,
`Fn::Select`, …), read and evaluated as Heat's are, and refused where Heat removed them."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.functions import ResolvedResource, resolve
from domain.hot.template import load_template
from domain.hot.versions import template_functions

RESOURCES = {
    "box": ResolvedResource(reference="vm-1", attributes={"name": "web"}, type="OS::Heat::None")
}


def outputs(version: str, values: dict[str, Any]) -> dict[str, Any]:
    template = load_template(
        {
            "heat_template_version": version,
            "parameters": {"who": {"type": "string", "default": "ops"}},
            "resources": {"box": {"type": "OS::Heat::None"}},
            "outputs": {k: {"value": v} for k, v in values.items()},
        }
    )
    return {k: resolve(o.value, {"who": "ops"}, RESOURCES) for k, o in template.outputs.items()}


def test_hot_2013_05_23_evaluates_its_cfn_functions_as_heat() -> None:
    assert outputs(
        "2013-05-23",
        {
            "param": {"Ref": "who"},
            "resource": {"Ref": "box"},
            "attribute": {"Fn::GetAtt": ["box", "name"]},
            "joined": {"Fn::Join": ["-", [{"Ref": "who"}, "x"]]},
            "split": {"Fn::Split": [",", "a,b"]},
            "picked": {"Fn::Select": ["1", ["a", "b"]]},
            "keyed": {"Fn::Select": ["k", {"k": "v"}]},
            "from_json": {"Fn::Select": ["k", '{"k": "j"}']},
            "missing": {"Fn::Select": [5, ["a"]]},
            "replaced": {"Fn::Replace": [{"$who": {"Ref": "who"}}, "hi $who"]},
            "base64": {"Fn::Base64": "plain"},
            "members": {
                "Fn::MemberListToMap": [
                    "Name",
                    "Value",
                    [".member.0.Name=a", ".member.0.Value=1", ".member.1.Name=b"],
                ]
            },
        },
    ) == {
        "param": "ops",
        "resource": "vm-1",
        "attribute": "web",
        "joined": "ops-x",
        "split": ["a", "b"],
        "picked": "b",
        "keyed": "v",
        "from_json": "j",
        "missing": "",
        "replaced": "hi ops",
        "base64": "plain",
        "members": {"a": "1", "b": ""},
    }


def test_a_ref_to_a_resource_makes_a_dependency() -> None:
    template = load_template(
        {
            "heat_template_version": "2013-05-23",
            "resources": {
                "a": {"type": "OS::Heat::None"},
                "b": {"type": "OS::Heat::None", "properties": {"x": {"Ref": "a"}}},
            },
        }
    )
    assert template.required_by(lambda _: True)["a"] == ["b"]


@pytest.mark.parametrize(
    ("version", "call"),
    [
        ("2014-10-16", {"Fn::Join": [",", ["a"]]}),
        ("2015-10-15", {"Fn::Select": [0, ["a"]]}),
        ("2021-04-16", {"Ref": "who"}),
    ],
)
def test_a_version_that_removed_the_function_refuses_it(version: str, call: Any) -> None:
    name = next(iter(call))
    with pytest.raises(
        InvalidRequest, match=f"The function {name} is not supported in this version of HOT"
    ):
        outputs(version, {"x": call})


def test_select_stays_until_2015_04_30_and_the_functions_list_says_so() -> None:
    assert outputs("2015-04-30", {"x": {"Fn::Select": [0, ["a"]]}}) == {"x": "a"}
    listed = {f["functions"] for f in template_functions("heat_template_version.2013-05-23")}
    assert {"Ref", "Fn::GetAtt", "Fn::Join", "Fn::Select", "Fn::Base64"} <= listed
    kept = {f["functions"] for f in template_functions("heat_template_version.2015-04-30")}
    assert "Fn::Select" in kept and "Ref" not in kept
    later = {f["functions"] for f in template_functions("heat_template_version.2016-10-14")}
    assert not {f for f in later if f.startswith("Fn::")}


def test_what_warden_does_not_have_yet_is_a_400() -> None:
    with pytest.raises(InvalidRequest, match="Fn::GetAZs is not supported by Warden yet"):
        outputs("2013-05-23", {"x": {"Fn::GetAZs": ""}})
