"""Senlin's `os.nova.server` profiles through the API: senlin-tempest-plugin's spec is
created and shown back as written, Senlin's spec parsing answers, and a cluster boots
its servers on the profile's networks."""

from __future__ import annotations

import copy
from typing import Any

import httpx

from tests.api.test_clusters_through_workflows import action_done, action_id_of, nodes_of
from tests.api.test_platform_api import assert_error
from tests.support.warden_in_process import InProcessWarden

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


def tempest_spec(**properties: Any) -> dict[str, Any]:
    """The plugin's spec with some properties changed, as its `utils.create_a_profile`
    changes `metadata`."""
    spec = copy.deepcopy(TEMPEST_SPEC)
    spec["properties"].update(properties)
    return spec


async def test_the_tempest_plugin_s_profile_is_created_and_shown_as_written(
    api: httpx.AsyncClient,
) -> None:
    # The plugin's test_profile_create, with Warden's prefix.
    body = {"profile": {"name": "test-profile", "spec": TEMPEST_SPEC, "metadata": {"foo": "bar"}}}
    created = await api.post("/cluster/v1/profiles", json=body)

    assert created.status_code == 201, created.text
    profile = created.json()["profile"]
    for key in ("created_at", "domain", "id", "metadata", "name", "project", "spec", "type"):
        assert key in profile, key
    assert (profile["name"], profile["metadata"]) == ("test-profile", {"foo": "bar"})
    assert profile["spec"] == TEMPEST_SPEC
    shown = await api.get(f"/cluster/v1/profiles/{profile['id']}")
    assert shown.json()["profile"]["spec"] == TEMPEST_SPEC


async def test_a_simulated_wait_time_in_metadata_is_taken_as_a_number(
    api: httpx.AsyncClient,
) -> None:
    # The plugin's locked-cluster tests: `create_a_profile(self, metadata={...: 10})`.
    spec = tempest_spec(metadata={"simulated_wait_time": 10})
    created = await api.post("/v1/profiles", json={"profile": {"name": "slow", "spec": spec}})

    assert created.status_code == 201, created.text
    assert created.json()["profile"]["spec"]["properties"]["metadata"] == {
        "simulated_wait_time": 10
    }


async def test_yaml_numbers_are_taken_and_shown_as_senlin_s_strings(
    api: httpx.AsyncClient,
) -> None:
    spec = {**tempest_spec(flavor=1), "version": 1.1}
    created = await api.post("/v1/profiles", json={"profile": {"name": "numbers", "spec": spec}})

    assert created.status_code == 201, created.text
    profile = created.json()["profile"]
    assert (profile["version"], profile["spec"]["version"]) == ("1.1", "1.1")
    assert profile["spec"]["properties"]["flavor"] == "1"


async def test_senlin_s_whole_server_profile_is_taken(api: httpx.AsyncClient) -> None:
    networks = [
        {"network": "private", "fixed_ip": "10.0.0.5", "subnet": "private-subnet"},
        {"port": "port-1"},
        {"network": "private", "floating_network": "public", "security_groups": ["web"]},
        {"network": "sriov", "vnic_type": "direct"},
    ]
    bdm = {"uuid": "cirros", "source_type": "image", "destination_type": "volume"}
    properties = {
        "context": {"region_name": "RegionOne"},
        "admin_pass": "s3cret",
        "auto_disk_config": False,
        "availability_zone": "nova",
        "block_device_mapping_v2": [bdm | {"volume_size": 1, "boot_index": 0}],
        "config_drive": True,
        "key_name": "oskey",
        "personality": [{"path": "/etc/motd", "contents": "hello"}],
        "scheduler_hints": {"group": "sg-1"},
        "security_groups": ["default"],
        "user_data": "#!/bin/sh\necho hi\n",
        "networks": networks,
    }
    spec = {**tempest_spec(**properties), "version": "1.1"}
    created = await api.post("/v1/profiles", json={"profile": {"name": "all", "spec": spec}})

    assert created.status_code == 201, created.text
    assert created.json()["profile"]["spec"] == spec


async def test_specs_senlin_refuses_are_400_in_its_words(api: httpx.AsyncClient) -> None:
    async def refused(spec: dict[str, Any], message: str) -> None:
        answer = await api.post("/v1/profiles", json={"profile": {"name": "bad", "spec": spec}})
        assert_error(answer, 400, message)

    # The plugin's test_profile_create_spec_validation_failed and _profile_type_incorrect
    # (Senlin answers the unknown type with a 404; a bad spec is a 400 in Warden).
    await refused(
        tempest_spec(bogus="foo"),
        "Failed in creating profile bad: Unrecognizable spec item 'bogus'",
    )
    await refused(
        tempest_spec(networks=[{"network": "private", "vnic": "direct"}]),
        "Failed in creating profile bad: profile.spec.properties.networks[0].vnic: "
        "Unrecognizable spec item 'vnic'",
    )
    validated = await api.post(
        "/v1/profiles/validate",
        json={"profile": {"spec": tempest_spec(bogus="foo")}},
        headers={"OpenStack-API-Version": "clustering 1.2"},
    )
    assert_error(validated, 400, "Unrecognizable spec item 'bogus'")
    unknown = {"name": "bad", "spec": {**TEMPEST_SPEC, "type": "senlin.profile.bogus"}}
    assert_error(
        await api.post("/v1/profiles", json={"profile": unknown}),
        404,
        "The profile_type 'senlin.profile.bogus-1.0' could not be found.",
    )
    await refused(
        {**TEMPEST_SPEC, "description": "web"},
        "profile.spec.description: Unrecognizable spec item 'description'",
    )
    await refused(
        tempest_spec(networks=[{"subnet": "private-subnet"}]),
        "profile.spec.properties.networks[0]: One of 'port' and 'network' must be provided",
    )


async def test_a_cluster_boots_the_tempest_profile_on_its_network(
    running_warden: InProcessWarden,
) -> None:
    api, cloud = running_warden.api, running_warden.cloud
    # simcloud seeds devstack's `private` network, which the plugin's spec names.
    # simcloud holds devstack's current CirrOS, not the plugin's 0.4.0.
    spec = tempest_spec(image="cirros-0.6.2-x86_64-disk", metadata={"simulated_wait_time": 10})
    profile = await api.post("/v1/profiles", json={"profile": {"name": "tempest", "spec": spec}})
    body = {"name": "web", "profile_id": profile.json()["profile"]["id"], "desired_capacity": 1}

    created = await api.post("/v1/clusters", json={"cluster": body})

    assert (await action_done(api, action_id_of(created)))["status"] == "SUCCEEDED"
    [node] = await nodes_of(api, created.json()["cluster"]["id"])
    server = await cloud.compute.get_server(node["physical_id"])
    assert server.name == node["name"]  # not the profile's `name`: `{nodename}` URLs
    assert server.metadata["simulated_wait_time"] == "10"
    assert list(server.addresses) == ["private"]


async def test_a_network_the_cloud_lacks_fails_the_node_create(
    running_warden: InProcessWarden,
) -> None:
    api = running_warden.api
    spec = tempest_spec(image="cirros", networks=[{"network": "nowhere"}])
    profile = await api.post("/v1/profiles", json={"profile": {"name": "lost", "spec": spec}})
    body = {"name": "web", "profile_id": profile.json()["profile"]["id"], "desired_capacity": 1}

    created = await api.post("/v1/clusters", json={"cluster": body})

    action = await action_done(api, action_id_of(created))
    assert action["status"] == "FAILED", action
    assert "Unable to find network with name or id 'nowhere'" in action["status_reason"], action
