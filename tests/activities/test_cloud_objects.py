"""The collection client and the cloud-object activities against simcloud over HTTP:
lookups by name or id, creates that survive a lost answer, keypairs made once."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives import serialization
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import CloudSession
from activities.cloud.collections import collection, json_patch, marker_tag
from activities.cloud_objects import CloudObjectActivities
from activities.compute import ComputeActivities
from activities.keypairs import KeypairActivities, key_from_seed
from activities.server_boot import IdCache, find_id
from domain.cloud_objects import CloudAction, CloudCreate, CloudRef, CloudWait, Lookup
from domain.errors import BackendConflict, BackendNotFound
from domain.servers import NetworkRequest, ServerRequest
from domain.stack.types.nova.keypair import KeypairRequest
from tests.support.cloud_ids import CIRROS
from tests.support.networks import route_private_to_public
from tests.support.simcloud_server import SimControl


async def test_find_takes_an_id_or_a_unique_name_as_heat_s_finders_do(
    cloud: CloudSession,
) -> None:
    objects = cloud.collections
    by_name = await objects.find(collection("image"), "cirros")
    by_id = await objects.find(collection("image"), CIRROS)
    flavor = await objects.find(collection("flavor"), "1")  # Nova's ids are not UUIDs
    assert by_name["id"] == by_id["id"] == CIRROS
    assert flavor["name"] == "m1.tiny"
    await objects.create(collection("network"), {"name": "twin"})
    await objects.create(collection("network"), {"name": "twin"})
    with pytest.raises(BackendConflict, match="Multiple network matches found for name 'twin'"):
        await objects.find(collection("network"), "twin")
    with pytest.raises(BackendNotFound, match="Unable to find subnet with name or id 'nope'"):
        await objects.find(collection("subnet"), "nope")


async def test_an_id_cache_answers_image_names_without_asking_again(
    cloud: CloudSession, sim: SimControl
) -> None:
    cache = IdCache()
    assert await find_id(cloud.collections, "image", "cirros", cache) == CIRROS
    await sim.api_faults(1.0, 500, match="^GET /image")
    try:
        assert await find_id(cloud.collections, "image", "cirros", cache) == CIRROS
    finally:
        await sim.api_faults(0.0)


async def test_a_create_whose_answer_was_lost_is_adopted_by_its_retry(
    cloud: CloudSession, sim: SimControl
) -> None:
    activities = CloudObjectActivities(cloud.collections)
    create = CloudCreate(
        kind="port",
        body={"name": "p1", "network_id": "private"},
        lookups=(Lookup(path=("network_id",), kind="network", ref="private"),),
        request_id="res-1",
    )
    await sim.api_faults(1.0, 500, lost_response_rate=1.0, match="^POST /networking", max_errors=1)
    with pytest.raises(ApplicationError):
        await ActivityEnvironment().run(activities.create_cloud_object, create)
    retried = await ActivityEnvironment().run(activities.create_cloud_object, create)

    ports = await cloud.collections.list(collection("port"), {"name": "p1"})
    assert [p["id"] for p in ports] == [retried.id]
    assert marker_tag("res-1") in retried.body["tags"]
    assert (
        retried.body["network_id"]
        == (await cloud.collections.find(collection("network"), "private"))["id"]
    )


async def test_a_network_is_created_then_tagged_as_neutron_refuses_tags_in_its_post(
    cloud: CloudSession,
) -> None:
    objects = cloud.collections
    first = await objects.create_once(collection("network"), {"name": "n1"}, "net-1")
    second = await objects.create_once(collection("network"), {"name": "n2"}, "net-2")
    again = await objects.create_once(collection("network"), {"name": "n1"}, "net-1")

    assert first["tags"] == [marker_tag("net-1")]
    assert second["tags"] == [marker_tag("net-2")]
    assert again["id"] == first["id"]
    listed = await objects.list(collection("network"), {"tags": marker_tag("net-1")})
    assert [n["id"] for n in listed] == [first["id"]]


async def test_a_retry_adopts_the_network_its_first_attempt_made_but_never_tagged(
    cloud: CloudSession, sim: SimControl
) -> None:
    objects = cloud.collections
    activities = CloudObjectActivities(objects)
    await objects.create_once(collection("network"), {"name": "warm"}, "warm")  # tags go after
    create = CloudCreate(kind="network", body={"name": "lost-answer"}, request_id="net-9")
    first = ActivityEnvironment()
    first.info = dataclasses.replace(first.info, scheduled_time=datetime.now(UTC))
    await sim.api_faults(1.0, 500, lost_response_rate=1.0, match="^POST /networking", max_errors=1)
    with pytest.raises(ApplicationError):
        await first.run(activities.create_cloud_object, create)
    retry = ActivityEnvironment()
    retry.info = dataclasses.replace(first.info, attempt=2)
    adopted = await retry.run(activities.create_cloud_object, create)

    named = await objects.list(collection("network"), {"name": "lost-answer"})
    assert [n["id"] for n in named] == [adopted.id]
    assert adopted.body["tags"] == [marker_tag("net-9")]


async def test_a_users_untagged_network_of_that_name_is_not_adopted(cloud: CloudSession) -> None:
    objects = cloud.collections
    before = datetime.now(UTC) - timedelta(minutes=5)
    users = await objects.create(collection("network"), {"name": "shared-name"})
    await objects.create(collection("network"), {"name": "shared-name"})  # a second one

    made = await objects.create_once(
        collection("network"), {"name": "shared-name"}, "net-3", retry_since=before
    )

    assert made["id"] != users["id"]
    assert made["tags"] == [marker_tag("net-3")]
    assert (await objects.show(collection("network"), users["id"]))["tags"] == []


async def test_a_tag_update_keeps_warden_s_request_marker(cloud: CloudSession) -> None:
    objects = cloud.collections
    made = await objects.create_once(collection("network"), {"name": "t", "tags": ["a"]}, "net-4")

    updated = await objects.update(collection("network"), made["id"], {"tags": ["b", "c"]})
    renamed = await objects.update(collection("network"), made["id"], {"name": "t2", "tags": []})

    assert made["tags"] == ["a", marker_tag("net-4")]
    assert updated["tags"] == ["b", "c", marker_tag("net-4")]
    assert (renamed["name"], renamed["tags"]) == ("t2", [marker_tag("net-4")])
    shown = await objects.show(collection("network"), made["id"])
    assert (shown["name"], shown["tags"]) == ("t2", [marker_tag("net-4")])


async def test_actions_waits_and_deletes_are_idempotent(cloud: CloudSession) -> None:
    activities = CloudObjectActivities(cloud.collections)
    run = ActivityEnvironment().run
    volume = await run(
        activities.create_cloud_object,
        CloudCreate(kind="volume", body={"size": 1, "name": "v"}, request_id="vol-1"),
    )
    ready = await run(
        activities.wait_cloud_object, CloudWait(ref=volume.ref(), ready=("available",))
    )
    assert ready.body["status"] == "available"
    grow = CloudAction(
        ref=volume.ref(), method="POST", suffix="/action", body={"os-extend": {"new_size": 2}}
    )
    await run(activities.act_on_cloud_object, grow)
    await run(activities.delete_cloud_object, volume.ref())
    await run(activities.delete_cloud_object, volume.ref())  # gone already: fine
    await run(activities.wait_cloud_object_deleted, volume.ref())
    assert await run(activities.show_cloud_object, volume.ref()) is None
    missing = CloudAction(
        ref=CloudRef(kind="router", id="nope"), suffix="/remove_router_interface", tolerate=(404,)
    )
    assert (await run(activities.act_on_cloud_object, missing))["answer"] is None


async def test_a_keypair_create_retried_with_its_seed_adopts_the_first(
    cloud: CloudSession,
) -> None:
    activities = KeypairActivities(cloud.collections)
    request = KeypairRequest(name="k1", seed="res-9:abc")
    first = await ActivityEnvironment().run(activities.create_keypair, request)
    again = await ActivityEnvironment().run(activities.create_keypair, request)
    public, private = key_from_seed("res-9:abc")

    assert first.public_key == again.public_key == public
    assert first.private_key is not None and private.startswith("-----BEGIN OPENSSH")
    loaded = serialization.load_ssh_private_key(first.private_key.encode(), password=None)
    shown = loaded.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert shown.decode() == public  # the private key the user gets opens that keypair
    other = request.model_copy(update={"seed": "another attempt's key"})
    with pytest.raises(ApplicationError, match="already exists"):
        await ActivityEnvironment().run(activities.create_keypair, other)


def test_glance_patches_replace_what_is_there_and_add_what_is_not() -> None:
    current = {"name": "a", "os_distro": "cirros"}
    ops = json_patch(current, {"os_distro": "fedora", "hw_disk_bus": "scsi", "name": None})
    assert ops == [
        {"op": "replace", "path": "/os_distro", "value": "fedora"},
        {"op": "add", "path": "/hw_disk_bus", "value": "scsi"},
        {"op": "remove", "path": "/name"},
    ]


async def test_a_nic_with_its_own_groups_and_floating_network_gets_ports_made_and_freed(
    cloud: CloudSession,
) -> None:
    await route_private_to_public(cloud)
    objects = cloud.collections
    group = await objects.create(collection("security_group"), {"name": "web"})
    compute = ComputeActivities(cloud.compute, objects)
    nics = (
        NetworkRequest(network="private", security_groups=("web",), floating_network="public"),
        NetworkRequest(network="private"),
    )
    request = ServerRequest(
        name="node-1", image="cirros", flavor="m1.tiny", request_id="node-1", networks=nics
    )

    made = await ActivityEnvironment().run(compute.create_server, request)
    again = await ActivityEnvironment().run(compute.create_server, request)  # a retry

    assert again.physical_id == made.physical_id
    # Each address names its port, as Heat's `addresses` attribute does.
    (entries,) = made.addresses.values()
    assert all(e["port"] for e in entries) and len(entries) == 2  # shown before the FIP
    ports = await objects.list(collection("port"), {"device_id": made.physical_id})
    (own,) = [p for p in ports if "warden-owned" in p["tags"]]
    assert own["security_groups"] == [group["id"]]
    (fip,) = await objects.list(collection("floating_ip"), {"port_id": own["id"]})
    server = await cloud.compute.get_server(made.physical_id)
    assert fip["floating_ip_address"] in server.ip_addresses
    assert len(ports) == 2  # the second NIC's port is Nova's own

    await ActivityEnvironment().run(compute.delete_server, made.physical_id)
    assert await objects.list(collection("floating_ip"), {"port_id": own["id"]}) == []
    assert await objects.list(collection("port"), {"tags": "warden-owned"}) == []


async def test_a_server_that_goes_to_error_fails_with_nova_s_fault_message(
    cloud: CloudSession, sim: SimControl
) -> None:
    compute = ComputeActivities(cloud.compute, cloud.collections)
    request = ServerRequest(name="n-1", image="cirros", flavor="m1.tiny", request_id="n-1")
    made = await ActivityEnvironment().run(compute.create_server, request)
    await sim.fault(made.physical_id, "error")

    with pytest.raises(ApplicationError) as failed:
        await ActivityEnvironment().run(compute.wait_server_active, made.physical_id)

    # Nova's `fault.message` is the reason an operator needs, not just the status.
    assert failed.value.message == (
        f"Server {made.physical_id} went to ERROR instead of ACTIVE: Simulated fault"
    )
    assert failed.value.non_retryable
