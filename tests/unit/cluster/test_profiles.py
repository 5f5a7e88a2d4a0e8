"""`os.nova.server` profile specs as Senlin takes them (1.0 and 1.1), and the server
request a node's profile becomes."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from domain.cluster.nodes import NodeState
from domain.cluster.profiles import ProfileSpec, parse_profile_spec
from domain.errors import InvalidRequest, NotFound
from domain.servers import NetworkRequest, ServerRequest
from workflows.cluster.operations import server_request

#: senlin-tempest-plugin's `spec_nova_server`, as is (openstack/senlin-tempest-plugin,
#: senlin_tempest_plugin/common/constants.py at dadcdeb7ea767acf0bf65b5ef83d9889a1d19931).
TEMPEST_SPEC: dict[str, Any] = {
    "type": "os.nova.server",
    "version": "1.0",
    "properties": {
        "flavor": "1",
        "name": "new-server-test",
        "image": "cirros-0.4.0-x86_64-disk",
        "networks": [{"network": "private"}],
    },
}
#: The plugin's `utils.create_a_profile(self, metadata={'simulated_wait_time': 10})`
#: (tests/api/clusters/test_cluster_scale_out.py) puts that map in the properties.
TEMPEST_WAIT_SPEC: dict[str, Any] = copy.deepcopy(TEMPEST_SPEC)
TEMPEST_WAIT_SPEC["properties"]["metadata"] = {"simulated_wait_time": 10}
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def spec(version: Any = "1.0", **properties: Any) -> dict[str, Any]:
    props = {"flavor": "m1.tiny", "image": "cirros", **properties}
    return {"type": "os.nova.server", "version": version, "properties": props}


def refusal(raw: Any) -> str:
    """Why `parse_profile_spec` refuses `raw` ("" when it takes it)."""
    try:
        parse_profile_spec(raw)
    except (InvalidRequest, NotFound) as err:
        return str(err)
    return ""


def node() -> NodeState:
    return NodeState(
        node_id="node-7f3a", name="web-1", index=1, profile_id="p", created_at=NOW, updated_at=NOW
    )


def request_of(raw: dict[str, Any]) -> ServerRequest:
    """The create request of node `web-1` of cluster `c-1`, from `raw` stored as the API
    stores it."""
    stored = parse_profile_spec(raw).to_json()
    return server_request(stored, "c-1", node(), request_id="node-7f3a")


@pytest.mark.parametrize("raw", [TEMPEST_SPEC, TEMPEST_WAIT_SPEC], ids=["plain", "wait"])
def test_senlin_tempest_plugin_spec_is_accepted_and_stored_as_written(
    raw: dict[str, Any],
) -> None:
    parsed = parse_profile_spec(copy.deepcopy(raw))
    assert parsed.to_json() == raw


@pytest.mark.parametrize(("version", "stored"), [(1.0, "1.0"), (1.1, "1.1"), ("1.1", "1.1")])
def test_yaml_number_versions_are_senlin_s_and_stored_as_text(version: Any, stored: str) -> None:
    assert parse_profile_spec(spec(version)).to_json()["version"] == stored


@pytest.mark.parametrize("version", [1, "1", 1.2, "2.0", True])
def test_versions_senlin_has_no_plugin_for_are_refused(version: Any) -> None:
    assert refusal(spec(version)) == (
        f"The profile_type 'os.nova.server-{version}' could not be found."
    )


def test_another_profile_type_is_not_found_in_senlin_s_words() -> None:
    raw = {"type": "os.heat.stack", "version": "2.0", "properties": {}}
    assert refusal(raw) == "The profile_type 'os.heat.stack-2.0' could not be found."
    with pytest.raises(NotFound):  # Senlin's 404
        parse_profile_spec({**raw, "type": "os.zun.container", "version": "1.0"})


@pytest.mark.parametrize("key", ["type", "version"])
def test_a_spec_without_type_or_version_is_refused(key: str) -> None:
    raw = spec()
    del raw[key]
    assert refusal(raw) == (f"spec.{key}: The '{key}' key is missing from the provided spec map.")


def parsed_server(raw: dict[str, Any]) -> ProfileSpec:
    parsed = parse_profile_spec(raw)
    assert isinstance(parsed, ProfileSpec)
    return parsed


def test_an_integer_flavor_id_is_a_string_as_in_senlin() -> None:
    parsed = parsed_server(spec(flavor=1))
    assert parsed.properties.flavor == "1"
    assert parsed.to_json()["properties"]["flavor"] == "1"


def test_metadata_values_of_any_json_type_are_taken_and_sent_to_nova_as_text() -> None:
    metadata = {"simulated_wait_time": 1, "ratio": 0.5, "on": True, "tags": ["a"], "s": "x"}
    stored = parse_profile_spec(spec(metadata=metadata)).to_json()
    assert stored["properties"]["metadata"] == metadata
    sent = server_request(stored, "c-1", node(), request_id="r").metadata
    assert sent == {
        "simulated_wait_time": "1",
        "ratio": "0.5",
        "on": "true",
        "tags": '["a"]',
        "s": "x",
        "warden_cluster": "c-1",
        "warden_node": "node-7f3a",
    }


def test_a_metadata_value_too_long_for_nova_once_text_is_refused() -> None:
    assert "spec.properties.metadata.k: at most 255" in refusal(spec(metadata={"k": [1] * 90}))
    assert refusal(spec(metadata={"k": [1] * 80})) == ""


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # A property of its own: Senlin's words exactly, which name it.
        (spec(bogus="foo"), "Unrecognizable spec item 'bogus'"),
        (
            spec(networks=[{"network": "private", "vnic": "direct"}]),
            "spec.properties.networks[0].vnic: Unrecognizable spec item 'vnic'",
        ),
        (
            spec(
                block_device_mapping_v2=[
                    {
                        "source_type": "blank",
                        "destination_type": "local",
                        "volume_size": 1,
                        "size": 1,
                    }
                ]
            ),
            "spec.properties.block_device_mapping_v2[0].size: Unrecognizable spec item 'size'",
        ),
        (
            spec(personality=[{"path": "/etc/motd", "contents": "hi", "mode": "0644"}]),
            "spec.properties.personality[0].mode: Unrecognizable spec item 'mode'",
        ),
        # Senlin removed the legacy mapping in 2016: an unknown item since.
        (
            spec(block_device_mapping=[{"device_name": "vda", "volume_id": "v"}]),
            "Unrecognizable spec item 'block_device_mapping'",
        ),
        # Senlin's spec schema is type, version and properties only.
        (
            {**spec(), "description": "web servers"},
            "spec.description: Unrecognizable spec item 'description'",
        ),
    ],
    ids=["property", "network", "bdm", "personality", "legacy-bdm", "description"],
)
def test_unknown_keys_are_refused_naming_their_path(raw: dict[str, Any], message: str) -> None:
    assert refusal(raw) == message


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"flavor": None}, "spec.properties.flavor: The value 'None' is not a valid string."),
        ({"config_drive": "maybe"}, "The value 'maybe' is not a valid Boolean"),
        (
            {"security_groups": "default"},
            "spec.properties.security_groups: 'default' is not a List",
        ),
        (
            {"scheduler_hints": ["group"]},
            "spec.properties.scheduler_hints: '['group']' is not a Map",
        ),
        (
            {"block_device_mapping_v2": [{"source_type": "image", "destination_type": "volume"}]},
            "block_device_mapping_v2[0].volume_size: Required spec item 'volume_size' not provided",
        ),
        (
            {
                "block_device_mapping_v2": [
                    {"source_type": "image", "destination_type": "volume", "volume_size": "x"}
                ]
            },
            "The value 'x' is not a valid Integer",
        ),
        ({"context": {"region": "RegionTwo"}}, "Some keys in 'context' are invalid: ['region']"),
        ({"metadata": {"a/b": "x"}}, "spec.properties.metadata.a/b: invalid key"),
        ({"user_data": "x" * 49_200}, "spec.properties.user_data: at most 65535 bytes"),
    ],
    ids=["null", "bool", "list", "map", "required", "integer", "context", "key", "user-data"],
)
def test_values_senlin_s_schema_refuses_are_refused_in_its_words(
    properties: dict[str, Any], message: str
) -> None:
    assert message in refusal(spec(**properties))


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ({"subnet": "private-subnet"}, ": One of 'port' and 'network' must be provided"),
        (
            {"port": "p1", "fixed_ip": "10.0.0.5"},
            ": The 'port' property and the 'fixed_ip' property cannot be specified at the "
            "same time",
        ),
        (
            {"network": "private", "floating_ip": "172.24.4.9"},
            ": Must specify a network to create floating IP",
        ),
        (
            {"network": "private", "vnic_type": "baremetal"},
            ".vnic_type: vnic_type: 'baremetal' is not supported.(supported types are: "
            "normal, direct, macvtap)",
        ),
    ],
    ids=["no-network", "port-and-fixed-ip", "floating-ip-alone", "vnic-type"],
)
def test_senlin_s_network_rules_hold_when_the_profile_is_created(
    network: dict[str, Any], message: str
) -> None:
    assert refusal(spec(networks=[network])) == f"spec.properties.networks[0]{message}"


def test_senlin_s_coercions_of_integers_and_booleans() -> None:
    bdm = {"source_type": "blank", "destination_type": "local", "volume_size": "10"}
    props = parsed_server(
        spec("1.1", config_drive="yes", block_device_mapping_v2=[bdm], auto_disk_config="off")
    ).properties
    assert props.config_drive is True and props.auto_disk_config is False
    assert props.block_device_mapping_v2 is not None
    assert props.block_device_mapping_v2[0].volume_size == 10


def test_the_model_alone_takes_a_yaml_number_version_too() -> None:
    # tests/unit/test_example_files.py checks the example files with the model alone.
    assert ProfileSpec.model_validate(spec(1.1)).version == "1.1"


def test_server_request_maps_senlin_s_networks_to_nics() -> None:
    networks = [
        {"network": "private"},
        {"port": "port-1"},
        {"network": "private", "fixed_ip": "10.0.0.5", "subnet": "private-subnet"},
        {
            "network": "net-id-2",
            "floating_network": "public",
            "floating_ip": "172.24.4.9",
            "security_groups": ["web", "ssh"],
            "vnic_type": "direct",
        },
    ]
    request = request_of(spec("1.1", networks=networks))
    assert request.networks == (
        NetworkRequest(network="private"),
        NetworkRequest(port="port-1"),
        NetworkRequest(network="private", fixed_ip="10.0.0.5", subnet="private-subnet"),
        NetworkRequest(
            network="net-id-2",
            floating_network="public",
            floating_ip="172.24.4.9",
            security_groups=("web", "ssh"),
            vnic_type="direct",
        ),
    )


def test_server_request_maps_every_property_nova_takes() -> None:
    bdm = {
        "uuid": "cirros",
        "source_type": "image",
        "destination_type": "volume",
        "volume_size": 2,
        "boot_index": 0,
        "delete_on_termination": True,
        "device_name": None,
    }
    raw = spec(
        image=None,
        key_name="oskey",
        user_data="#!/bin/sh\necho hi\n",
        availability_zone="nova",
        security_groups=["default", 42],
        scheduler_hints={"group": "sg-1", "same_host": ["a"]},
        block_device_mapping_v2=[bdm],
        config_drive=True,
        admin_pass="s3cret",
    )
    request = request_of(raw)
    assert request.image is None
    assert (request.key_name, request.availability_zone) == ("oskey", "nova")
    assert request.user_data == "#!/bin/sh\necho hi\n"
    assert request.security_groups == ("default", "42")
    assert request.scheduler_hints == {"group": "sg-1", "same_host": ["a"]}
    # Unset keys are dropped, as Senlin's `_resolve_bdm` drops them.
    assert request.block_device_mapping_v2 == (
        {
            "uuid": "cirros",
            "source_type": "image",
            "destination_type": "volume",
            "volume_size": 2,
            "boot_index": 0,
            "delete_on_termination": True,
        },
    )
    assert (request.config_drive, request.admin_pass) == (True, "s3cret")


def test_the_tempest_spec_boots_a_server_named_after_its_node_on_network_private() -> None:
    request = request_of(TEMPEST_SPEC)
    assert (request.name, request.flavor, request.image) == (
        "web-1",
        "1",
        "cirros-0.4.0-x86_64-disk",
    )
    assert request.networks == (NetworkRequest(network="private"),)
    assert request.metadata == {"warden_cluster": "c-1", "warden_node": "node-7f3a"}


def test_a_profile_stored_before_the_full_schema_asks_for_the_same_server() -> None:
    # Rows written by the old model held every field, unset ones as null or {}.
    old = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": "cirros", "name": None, "metadata": {}},
    }
    request = server_request(old, "c-1", node(), request_id="node-7f3a")
    assert request.model_dump(exclude_defaults=True) == {
        "name": "web-1",
        "image": "cirros",
        "flavor": "m1.tiny",
        "metadata": {"warden_cluster": "c-1", "warden_node": "node-7f3a"},
        "request_id": "node-7f3a",
    }
    assert request.networks is None


def test_metadata_text_is_json_for_nested_values() -> None:
    sent = request_of(spec(metadata={"conf": {"a": 1}})).metadata
    assert json.loads(sent["conf"]) == {"a": 1}
