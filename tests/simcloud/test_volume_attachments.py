"""Nova's `os-volume_attachments` on simcloud, and the block device helpers for create."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from config.settings import simulated_project_id
from simcloud.config import SimConfig
from simcloud.errors import SimError
from simcloud.image.state import seeded_image_id
from simcloud.servers import new_server
from simcloud.state import SimState
from simcloud.volume.block_devices import (
    BlockDeviceMapping,
    attach_block_devices,
    plan_block_devices,
    release_volumes,
    volumes_attached,
)
from simcloud.volume.schemas import VolumeCreate
from simcloud.volume.volumes import create_volume
from tests.support.simcloud_server import in_process_simcloud, login

PROJECT = simulated_project_id("demo")
VOLUMES = f"/volume/v3/{PROJECT}/volumes"
SERVERS = "/compute/v2.1/servers"
#: The keys of the api-ref's 2.79 attach response sample.
ATTACHMENT_KEYS = {"delete_on_termination", "device", "id", "serverId", "tag", "volumeId"}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def volume(client: httpx.AsyncClient, **fields: Any) -> str:
    response = await client.post(VOLUMES, json={"volume": {"size": 1} | fields})
    assert response.status_code == 202, response.text
    return str(response.json()["volume"]["id"])


async def server(client: httpx.AsyncClient) -> str:
    body = {"server": {"name": "vm", "imageRef": seeded_image_id("cirros"), "flavorRef": "1"}}
    response = await client.post(SERVERS, json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["server"]["id"])


async def show_volume(client: httpx.AsyncClient, volume_id: str) -> dict[str, Any]:
    response = await client.get(f"{VOLUMES}/{volume_id}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["volume"]
    return found


def attachments(server_id: str) -> str:
    return f"{SERVERS}/{server_id}/os-volume_attachments"


async def attach(client: httpx.AsyncClient, server_id: str, **body: Any) -> httpx.Response:
    return await client.post(attachments(server_id), json={"volumeAttachment": body})


async def test_attach_sample_makes_the_volume_in_use(client: httpx.AsyncClient) -> None:
    server_id, volume_id = await server(client), await volume(client)

    response = await attach(
        client, server_id, volumeId=volume_id, tag="foo", delete_on_termination=True
    )
    cinder = await show_volume(client, volume_id)

    assert response.status_code == 200, response.text
    attachment = response.json()["volumeAttachment"]
    assert set(attachment) == ATTACHMENT_KEYS
    assert attachment["device"] == "/dev/vdb"
    assert (attachment["id"], attachment["volumeId"], attachment["serverId"]) == (
        volume_id,
        volume_id,
        server_id,
    )
    assert (attachment["tag"], attachment["delete_on_termination"]) == ("foo", True)
    assert cinder["status"] == "in-use"
    assert cinder["attachments"][0]["server_id"] == server_id
    assert cinder["attachments"][0]["device"] == "/dev/vdb"
    assert set(cinder["attachments"][0]) >= {
        "server_id",
        "attachment_id",
        "device",
        "volume_id",
        "id",
    }


async def test_devices_follow_vdb_vdc_and_list_show_detach(client: httpx.AsyncClient) -> None:
    server_id = await server(client)
    first, second = await volume(client), await volume(client)
    await attach(client, server_id, volumeId=first)
    await attach(client, server_id, volumeId=second)

    listed = (await client.get(attachments(server_id))).json()["volumeAttachments"]
    shown = await client.get(f"{attachments(server_id)}/{second}")
    detached = await client.delete(f"{attachments(server_id)}/{first}")
    after = (await client.get(attachments(server_id))).json()["volumeAttachments"]

    assert [a["device"] for a in listed] == ["/dev/vdb", "/dev/vdc"]
    assert shown.json()["volumeAttachment"]["device"] == "/dev/vdc"
    assert detached.status_code == 202
    assert [a["volumeId"] for a in after] == [second]
    assert (await show_volume(client, first))["status"] == "available"
    assert (await show_volume(client, first))["attachments"] == []


async def test_attaching_an_attached_volume_is_a_400(client: httpx.AsyncClient) -> None:
    server_id, other = await server(client), await server(client)
    volume_id = await volume(client)
    await attach(client, server_id, volumeId=volume_id)

    response = await attach(client, other, volumeId=volume_id)

    assert response.status_code == 400
    assert response.json()["badRequest"]["message"] == (
        f"Invalid volume: volume {volume_id} is already attached to instances: {server_id}"
    )


async def test_attaching_a_volume_that_is_not_available_is_a_400() -> None:
    async with in_process_simcloud(SimConfig(volume_latency_ms=5_000)) as client:
        client.headers.update(await login(client))
        server_id, volume_id = await server(client), await volume(client)

        response = await attach(client, server_id, volumeId=volume_id)

    assert response.status_code == 400
    assert response.json()["badRequest"]["message"] == (
        f"Invalid input received: Invalid volume: Volume {volume_id} status must be available "
        "or downloading to reserve, but the current status is creating. (HTTP 400)"
    )


async def test_an_attached_volume_can_be_neither_deleted_nor_extended(
    client: httpx.AsyncClient,
) -> None:
    server_id, volume_id = await server(client), await volume(client)
    await attach(client, server_id, volumeId=volume_id)

    deleted = await client.delete(f"{VOLUMES}/{volume_id}")
    extended = await client.post(
        f"{VOLUMES}/{volume_id}/action", json={"os-extend": {"new_size": 2}}
    )

    assert deleted.status_code == 400
    assert deleted.json()["badRequest"]["message"] == (
        "Invalid volume: Volume status must be available or error or error_restoring or "
        "error_extending or error_managing and must not be migrating, attached, belong to a "
        "group, have snapshots, awaiting a transfer, or be disassociated from snapshots after "
        "volume transfer."
    )
    assert extended.json()["badRequest"]["message"] == (
        f"Invalid volume: Volume {volume_id} status must be '{{'status': 'available'}}' to "
        "extend, currently in-use."
    )


async def test_unknown_volume_server_and_attachment_are_404s(client: httpx.AsyncClient) -> None:
    server_id, volume_id = await server(client), await volume(client)
    missing = str(uuid.uuid4())

    no_volume = await attach(client, server_id, volumeId=missing)
    no_server = await attach(client, missing, volumeId=volume_id)
    not_attached = await client.get(f"{attachments(server_id)}/{volume_id}")
    detach_missing = await client.delete(f"{attachments(server_id)}/{volume_id}")

    assert no_volume.json() == {
        "itemNotFound": {"code": 404, "message": f"Volume {missing} could not be found."}
    }
    assert no_server.json()["itemNotFound"]["message"] == f"Instance {missing} could not be found."
    assert not_attached.json()["itemNotFound"]["message"] == (
        f"Instance {server_id} is not attached to volume {volume_id}"
    )
    assert detach_missing.status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"volumeAttachment": {}},
        {"volumeAttachment": {"volumeId": "not-a-uuid"}},
        {"volumeAttachment": {"volumeId": "4a7d7c52-6c3e-4b8e-9d1f-0a1b2c3d4e5f", "bogus": 1}},
        {"volumeAttachment": {"volumeId": "4a7d7c52-6c3e-4b8e-9d1f-0a1b2c3d4e5f", "device": "vdb"}},
        {"volumeAttachment": {"volumeId": "4a7d7c52-6c3e-4b8e-9d1f-0a1b2c3d4e5f", "tag": "a/b"}},
    ],
)
async def test_attach_rejects_malformed_bodies(client: httpx.AsyncClient, body: Any) -> None:
    server_id = await server(client)

    response = await client.post(attachments(server_id), json=body)

    assert response.status_code == 400, response.text


async def test_a_locked_server_refuses_attach_with_409(client: httpx.AsyncClient) -> None:
    server_id, volume_id = await server(client), await volume(client)
    await client.post(f"{SERVERS}/{server_id}/action", json={"lock": None})

    response = await attach(client, server_id, volumeId=volume_id)

    assert response.status_code == 409
    assert response.json()["conflictingRequest"]["message"] == f"Instance {server_id} is locked"


async def test_a_deleted_server_releases_its_volumes(client: httpx.AsyncClient) -> None:
    server_id = await server(client)
    kept, dropped = await volume(client), await volume(client)
    await attach(client, server_id, volumeId=kept)
    await attach(client, server_id, volumeId=dropped, delete_on_termination=True)

    await client.delete(f"{SERVERS}/{server_id}")

    assert (await show_volume(client, kept))["status"] == "available"
    assert (await client.get(f"{VOLUMES}/{dropped}")).status_code == 404


def sim_state() -> SimState:
    return SimState(SimConfig())


def test_block_devices_boot_from_a_new_volume_made_from_an_image() -> None:
    state = sim_state()
    image = seeded_image_id("cirros")
    mapping = BlockDeviceMapping.model_validate(
        {
            "boot_index": 0,
            "uuid": image,
            "source_type": "image",
            "destination_type": "volume",
            "volume_size": 2,
            "delete_on_termination": True,
        }
    )

    plan = plan_block_devices(state, [mapping], None)
    record = new_server(state, "bfv", "", "1", {})
    attach_block_devices(state, record.id, plan)

    attached = volumes_attached(state, record.id)
    assert len(attached) == 1 and attached[0]["delete_on_termination"] is True
    root = state.volumes.volumes[str(attached[0]["id"])]
    assert (root.status, root.size, root.bootable) == ("in-use", 2, True)
    assert root.attachments[0].device == "/dev/vda"
    release_volumes(state, record.id)
    assert root.status == "deleting"


@pytest.mark.parametrize(
    ("mapping", "image_ref", "message"),
    [
        (
            {"source_type": "image", "destination_type": "volume", "boot_index": 0},
            None,
            "Block Device Mapping is Invalid: Missing device UUID.",
        ),
        (
            {
                "source_type": "image",
                "uuid": "x",
                "destination_type": "volume",
                "boot_index": 0,
                "volume_size": 1,
            },
            None,
            "Block Device Mapping is Invalid: failed to get image x.",
        ),
        (
            {
                "source_type": "volume",
                "uuid": "0b9c1d2e-0000-4000-8000-000000000000",
                "destination_type": "volume",
                "boot_index": 0,
            },
            None,
            "Block Device Mapping is Invalid: failed to get volume "
            "0b9c1d2e-0000-4000-8000-000000000000.",
        ),
        (
            {"source_type": "blank", "destination_type": "volume", "boot_index": 1},
            None,
            "Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size",
        ),
        (
            {
                "source_type": "blank",
                "destination_type": "volume",
                "boot_index": 1,
                "volume_size": 1,
            },
            None,
            "Block Device Mapping is Invalid: Boot sequence for the instance and "
            "image/block device mapping combination is not valid.",
        ),
        (
            {
                "source_type": "image",
                "uuid": seeded_image_id("cirros"),
                "destination_type": "volume",
                "boot_index": 0,
            },
            None,
            "Images with destination_type 'volume' need to have a non-zero size specified",
        ),
        (
            {
                "source_type": "snapshot",
                "uuid": "s1",
                "destination_type": "volume",
                "boot_index": 1,
            },
            seeded_image_id("cirros"),
            "Block Device Mapping is Invalid: failed to get snapshot s1.",
        ),
    ],
)
def test_block_devices_are_validated_like_nova(
    mapping: dict[str, Any], image_ref: str | None, message: str
) -> None:
    with pytest.raises(SimError) as caught:
        plan_block_devices(sim_state(), [BlockDeviceMapping.model_validate(mapping)], image_ref)

    assert (caught.value.status, caught.value.message) == (400, message)


def test_a_boot_volume_must_be_bootable_and_free() -> None:
    state = sim_state()
    plain = VolumeCreate(size=1)
    volume_id = create_volume(state, plain, state.user_id).id
    mapping = BlockDeviceMapping.model_validate(
        {"source_type": "volume", "uuid": volume_id, "destination_type": "volume", "boot_index": 0}
    )

    with pytest.raises(SimError) as not_bootable:
        plan_block_devices(state, [mapping], None)
    state.volumes.volumes[volume_id].bootable = True
    plan = plan_block_devices(state, [mapping], None)
    attach_block_devices(state, new_server(state, "a", "", "1", {}).id, plan)
    with pytest.raises(SimError) as attached:
        plan_block_devices(state, [mapping], None)

    assert not_bootable.value.message == f"Block Device {volume_id} is not bootable."
    assert attached.value.message.startswith(f"Invalid volume: volume {volume_id} is already")


def test_an_image_boot_with_an_extra_blank_volume_plans_both() -> None:
    state = sim_state()
    blank = BlockDeviceMapping.model_validate(
        {"source_type": "blank", "destination_type": "volume", "boot_index": -1, "volume_size": 1}
    )

    plan = plan_block_devices(state, [blank], seeded_image_id("cirros"))
    record = new_server(state, "vm", seeded_image_id("cirros"), "1", {})
    attach_block_devices(state, record.id, plan)

    assert [d.local for d in plan] == [True, False]
    devices = [a.device for a in state.volumes.by_server[record.id].values()]
    assert devices == ["/dev/vdb"]
