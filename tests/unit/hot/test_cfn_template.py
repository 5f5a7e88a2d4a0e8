"""Heat's CFN template format, read as the HOT 2013-05-23 template it means."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.hot.cfn_template import hot_of_cfn
from domain.hot.functions import static_properties
from domain.hot.template import load_template, resolve_parameters

CFN: dict[str, Any] = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Description": "a web tier",
    "Parameters": {
        "Flavor": {
            "Type": "String",
            "Default": "m1.small",
            "AllowedValues": ["m1.small", "m1.tiny"],
            "ConstraintDescription": "a small one",
        },
        "Size": {"Type": "Number", "MinValue": 1, "MaxValue": 3, "Default": 2},
        "Secret": {"Type": "String", "NoEcho": "true", "Default": "x"},
        "Arch": {"Type": "String", "Default": "64"},
    },
    "Mappings": {"ArchToImage": {"32": {"Image": "cirros-i386"}, "64": {"Image": "cirros"}}},
    "Resources": {
        "net": {"Type": "OS::Neutron::Net", "Properties": {"name": {"Ref": "AWS::StackName"}}},
        "server": {
            "Type": "OS::Nova::Server",
            "DependsOn": "net",
            "DeletionPolicy": "Retain",
            "Properties": {
                "flavor": {"Ref": "Flavor"},
                "image": {"Fn::FindInMap": ["ArchToImage", {"Ref": "Arch"}, "Image"]},
                "networks": [{"network": {"Ref": "net"}}],
                "metadata": {
                    "region": {"Ref": "AWS::Region"},
                    "fixed": {"Fn::FindInMap": ["ArchToImage", "32", "Image"]},
                },
            },
        },
    },
    "Outputs": {
        "ip": {"Value": {"Fn::GetAtt": ["server", "first_address"]}, "Description": "its IP"}
    },
}


def test_sections_parameters_and_keys_become_hot_ones() -> None:
    hot = hot_of_cfn(CFN)
    assert hot["heat_template_version"] == "2013-05-23"
    assert hot["description"] == "a web tier"
    assert hot["parameters"]["Flavor"] == {
        "type": "string",
        "default": "m1.small",
        "constraints": [{"allowed_values": ["m1.small", "m1.tiny"], "description": "a small one"}],
    }
    assert hot["parameters"]["Size"]["constraints"] == [{"range": {"min": 1, "max": 3}}]
    assert hot["parameters"]["Secret"]["hidden"] is True
    server = hot["resources"]["server"]
    assert (server["type"], server["depends_on"], server["deletion_policy"]) == (
        "OS::Nova::Server",
        "net",
        "Retain",
    )
    assert hot["outputs"]["ip"] == {
        "value": {"Fn::GetAtt": ["server", "first_address"]},
        "description": "its IP",
    }


def test_refs_pseudo_parameters_and_find_in_map_resolve_as_heat_resolves_them() -> None:
    template = load_template(CFN)
    params = resolve_parameters(template, {"Arch": "32"}, pseudo={"OS::stack_name": "web"})
    server = static_properties(template.resources["server"], params)
    assert server["flavor"] == "m1.small"
    assert server["image"] == "cirros-i386"
    assert server["metadata"] == {"region": "ap-southeast-1", "fixed": "cirros-i386"}
    assert server["networks"] == [{"network": {"get_resource": "net"}}]
    assert static_properties(template.resources["net"], params)["name"] == "web"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"AWSTemplateFormatVersion": "2011-01-01"}, "The template version is invalid"),
        ({"Conditions": {}}, "Conditions in CFN templates are not supported by Warden yet"),
        ({"Foo": {}}, "The template section is invalid: Foo"),
        (
            {"Parameters": {"p": {"Type": "String", "Bogus": 1}}},
            "Invalid key 'Bogus' for parameter (p)",
        ),
        ({"Parameters": {"p": {"Type": "Text"}}}, "Parameters.p.Type: must be one of"),
        (
            {"Resources": {"r": {"Type": "OS::Heat::None", "Foo": 1}}},
            '"Foo" is not a valid keyword inside a resource definition',
        ),
        (
            {"Resources": {"r": {"Type": "AWS::EC2::Instance"}}},
            "The Resource Type (AWS::EC2::Instance) could not be found.",
        ),
        (
            {
                "Resources": {
                    "r": {
                        "Type": "OS::Heat::Value",
                        "Properties": {"value": {"Fn::FindInMap": ["Nope", "a", "b"]}},
                    }
                }
            },
            "Mapping 'Nope' is not in Mappings",
        ),
    ],
)
def test_what_heat_refuses_is_a_400(change: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        load_template({**CFN, **change})
    assert message in refused.value.message
