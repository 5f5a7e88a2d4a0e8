"""The types Senlin's type API lists, and their schemas in Senlin's format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from domain.cluster.policies.specs import PolicyType, parse_policy_spec
from domain.cluster.type_catalog import (
    POLICY_TYPES,
    PROFILE_TYPES,
    SpecType,
    find_type,
    senlin_schema,
)
from domain.errors import InvalidRequest, NotFound


def _refusal(spec: Mapping[str, object]) -> str:
    """Why `parse_policy_spec` refuses `spec` ("" when it accepts it)."""
    try:
        parse_policy_spec(spec)
    except InvalidRequest as err:
        return str(err)
    return ""


def test_every_policy_type_warden_parses_is_listed_at_the_version_it_accepts() -> None:
    assert {t.name for t in POLICY_TYPES} == {str(t) for t in PolicyType}
    for spec_type in POLICY_TYPES:
        spec = {"type": spec_type.name, "version": "9.9", "properties": {}}
        assert "spec.version" in _refusal(spec)
        # A bare health spec is refused for its missing detection, not for its version.
        assert "spec.version" not in _refusal(spec | {"version": spec_type.version})


@pytest.mark.parametrize("spec_type", [*PROFILE_TYPES, *POLICY_TYPES], ids=lambda t: t.name)
def test_the_schema_names_every_property_the_model_accepts(spec_type: SpecType) -> None:
    schema = spec_type.shown(versioned=True)["schema"]
    assert set(schema) == set(spec_type.properties.model_fields)
    assert all(
        p["type"] in {"String", "Integer", "Number", "Boolean", "Map", "List"}
        for p in schema.values()
    )


class Inner(BaseModel):
    """Where to go."""

    url: str = Field(max_length=10)


class Choice(BaseModel):
    type: Literal["A"] = "A"
    options: Inner


class Other(BaseModel):
    type: Literal["B"] = "B"
    options: dict[str, int] = Field(default_factory=dict)


class Sample(BaseModel):
    name: str
    size: int = Field(3, ge=1, le=9, description="How many")
    mode: Literal["x", "y"] = "x"
    note: str | None = None
    inner: Inner | None = None
    items: list[Inner] = Field(default_factory=list)
    choices: list[Choice | Other] = Field(default_factory=list)


def test_pydantic_fields_become_senlin_properties() -> None:
    schema = senlin_schema(Sample)
    assert schema["name"] == {"type": "String", "required": True, "updatable": False}
    assert schema["size"] == {
        "type": "Integer",
        "required": False,
        "updatable": False,
        "description": "How many (1 to 9)",
        "default": 3,
    }
    assert schema["mode"]["constraints"] == [{"type": "AllowedValues", "constraint": ["x", "y"]}]
    assert schema["note"] == {"type": "String", "required": False, "updatable": False}
    assert schema["inner"]["type"] == "Map"
    assert schema["inner"]["description"] == "Where to go."
    assert schema["inner"]["schema"]["url"]["required"] is True
    assert schema["items"]["schema"]["*"]["schema"]["url"]["type"] == "String"
    merged = schema["choices"]["schema"]["*"]["schema"]
    assert merged["type"]["constraints"][0]["constraint"] == ["A", "B"]


def test_a_type_is_found_by_its_versioned_or_bare_name() -> None:
    assert find_type(PROFILE_TYPES, "os.nova.server-1.0", "profile_type").version == "1.0"
    assert find_type(PROFILE_TYPES, "os.nova.server", "profile_type").name == "os.nova.server"
    assert find_type(PROFILE_TYPES, "os.heat.stack-1.0", "profile_type").name == "os.heat.stack"
    with pytest.raises(NotFound, match=r"The profile_type 'os.heat.stack-1.1' could not be found"):
        find_type(PROFILE_TYPES, "os.heat.stack-1.1", "profile_type")
    assert find_type(PROFILE_TYPES, "os.nova.server-1.1", "profile_type").version == "1.1"
    # Senlin's 1.2 (a block device's `volume_type`) was never registered as a plugin.
    with pytest.raises(NotFound):
        find_type(PROFILE_TYPES, "os.nova.server-1.2", "profile_type")


def test_lists_before_and_from_microversion_1_5() -> None:
    assert [t.listed(versioned=False) for t in PROFILE_TYPES] == [
        {"name": "os.nova.server-1.0"},
        {"name": "os.nova.server-1.1"},
        {"name": "os.heat.stack-1.0"},
    ]
    # Each entry carries its own version's status, as Senlin's `Registry.get_types`.
    assert [t.listed(versioned=True) for t in PROFILE_TYPES] == [
        {
            "name": "os.nova.server",
            "version": "1.0",
            "support_status": {"1.0": [{"status": "SUPPORTED", "since": "2016.04"}]},
        },
        {
            "name": "os.nova.server",
            "version": "1.1",
            "support_status": {"1.1": [{"status": "SUPPORTED", "since": "2023.04"}]},
        },
        {
            "name": "os.heat.stack",
            "version": "1.0",
            "support_status": {"1.0": [{"status": "SUPPORTED", "since": "2016.04"}]},
        },
    ]


def test_a_shown_type_has_the_status_of_every_version_as_senlin_s_versions() -> None:
    server = find_type(PROFILE_TYPES, "os.nova.server-1.1", "profile_type")
    assert server.shown(versioned=True)["support_status"] == {
        "1.0": [{"status": "SUPPORTED", "since": "2016.04"}],
        "1.1": [{"status": "SUPPORTED", "since": "2023.04"}],
    }
    deletion = find_type(POLICY_TYPES, "senlin.policy.deletion-1.1", "policy_type")
    assert deletion.shown(versioned=True)["support_status"] == deletion.support_status()


def test_both_server_versions_show_senlin_s_whole_property_set() -> None:
    senlin_keys = {
        "context", "admin_pass", "auto_disk_config", "availability_zone",
        "block_device_mapping_v2", "config_drive", "flavor", "image", "key_name",
        "metadata", "name", "networks", "personality", "security_groups", "user_data",
        "scheduler_hints",
    }  # fmt: skip
    for spec_type in PROFILE_TYPES[:2]:
        schema = spec_type.shown(versioned=False)["schema"]
        assert set(schema) == senlin_keys
        assert [k for k, v in schema.items() if v["required"]] == ["flavor"]
        assert schema["auto_disk_config"]["default"] is True
        network = schema["networks"]["schema"]["*"]["schema"]
        assert set(network) == {
            "network", "port", "vnic_type", "fixed_ip", "security_groups",
            "floating_network", "floating_ip", "subnet",
        }  # fmt: skip
        assert network["security_groups"]["type"] == "List"
        bdm = schema["block_device_mapping_v2"]["schema"]["*"]["schema"]
        assert {k for k, v in bdm.items() if v["required"]} == {
            "source_type",
            "destination_type",
            "volume_size",
        }


def test_the_stack_profile_shows_senlin_s_property_set_and_defaults() -> None:
    found = find_type(PROFILE_TYPES, "os.heat.stack-1.0", "profile_type")
    schema = found.shown(versioned=True)["schema"]
    assert set(schema) == {
        "context", "template", "template_url", "parameters", "files", "timeout",
        "disable_rollback", "environment",
    }  # fmt: skip
    assert [k for k, v in schema.items() if v["required"]] == []
    assert schema["disable_rollback"] == {
        "type": "Boolean",
        "required": False,
        "updatable": False,
        "description": "A boolean specifying whether a stack operation can be rolled back.",
        "default": True,
    }
    assert (schema["template"]["type"], schema["timeout"]["type"]) == ("Map", "Integer")
    assert found.all_support_status() == {"1.0": [{"status": "SUPPORTED", "since": "2016.04"}]}
