"""The collection client and the cloud-object activities against simcloud over HTTP:
lookups by name or id, creates that survive a lost answer, keypairs made once."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import CloudSession
from activities.cloud.collections import collection, json_patch, marker_tag
from activities.cloud_objects import CloudObjectActivities
from activities.keypairs import KeypairActivities, key_from_seed
from activities.server_boot import IdCache, find_id
from domain.cloud_objects import CloudAction, CloudCreate, CloudRef, CloudWait, Lookup
from domain.errors import BackendConflict, BackendNotFound
from domain.stack.types.nova.keypair import KeypairRequest
from tests.support.cloud_ids import CIRROS
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
