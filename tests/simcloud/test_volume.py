"""simcloud's Cinder v3: volume create, status machine, update, extend, delete, errors."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from config.settings import simulated_project_id
from simcloud.config import SimConfig
from simcloud.image.state import seeded_image_id
from tests.support.simcloud_server import in_process_simcloud, login

PROJECT = simulated_project_id("demo")
VOLUMES = f"/volume/v3/{PROJECT}/volumes"
#: The api-ref's create request sample.
CREATE_SAMPLE = {
    "volume": {
        "size": 10,
        "availability_zone": None,
        "source_volid": None,
        "description": None,
        "multiattach": False,
        "snapshot_id": None,
        "backup_id": None,
        "name": None,
        "imageRef": None,
        "volume_type": None,
        "metadata": {},
        "consistencygroup_id": None,
    },
    "OS-SCH-HNT:scheduler_hints": {
        "same_host": [
            "a0cf03a5-d921-4877-bb5c-86d26cf818e1",
            "8c19174f-4220-44f0-824a-cd1eeef10287",
        ]
    },
}
#: The keys of the api-ref's show response sample.
SHOW_KEYS = {
    "attachments",
    "availability_zone",
    "bootable",
    "consistencygroup_id",
    "created_at",
    "description",
    "encrypted",
    "id",
    "links",
    "metadata",
    "migration_status",
    "multiattach",
    "name",
    "os-vol-host-attr:host",
    "os-vol-mig-status-attr:migstat",
    "os-vol-mig-status-attr:name_id",
    "os-vol-tenant-attr:tenant_id",
    "replication_status",
    "size",
    "snapshot_id",
    "source_volid",
    "status",
    "updated_at",
    "user_id",
    "volume_type",
}
IN_USE = (
    "Invalid volume: Volume status must be available or error or error_restoring or "
    "error_extending or error_managing and must not be migrating, attached, belong to a "
    "group, have snapshots, awaiting a transfer, or be disassociated from snapshots after "
    "volume transfer."
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(volume_latency_ms=2_000)) as client:
        client.headers.update(await login(client))
        yield client


async def advance(client: httpx.AsyncClient, seconds: float) -> None:
    assert (await client.post("/sim/clock", json={"advance_s": seconds})).status_code == 200


async def create(client: httpx.AsyncClient, *, settle: bool = True, **volume: Any) -> str:
    response = await client.post(VOLUMES, json={"volume": {"size": 1} | volume})
    assert response.status_code == 202, response.text
    if settle:
        await advance(client, 2)
    return str(response.json()["volume"]["id"])


async def show(client: httpx.AsyncClient, volume_id: str) -> dict[str, Any]:
    response = await client.get(f"{VOLUMES}/{volume_id}")
    assert response.status_code == 200, response.text
    volume: dict[str, Any] = response.json()["volume"]
    return volume


def assert_fault(response: httpx.Response, status: int, fault: str, message: str) -> None:
    assert response.status_code == status, response.text
    assert response.json() == {fault: {"code": status, "message": message}}


async def test_versions_announce_v3_at_the_root(client: httpx.AsyncClient) -> None:
    root = await client.get("/volume/")
    v3 = await client.get("/volume/v3/")

    assert root.status_code == 300
    assert v3.json()["versions"][0]["id"] == "v3.0"
    assert v3.json()["versions"][0]["status"] == "CURRENT"


async def test_create_sample_is_creating_then_available_after_the_latency(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(VOLUMES, json=CREATE_SAMPLE)
    volume = response.json()["volume"]
    creating = await show(client, volume["id"])
    await advance(client, 2)
    available = await show(client, volume["id"])

    assert response.status_code == 202
    assert set(volume) == SHOW_KEYS
    assert (volume["status"], volume["size"], volume["updated_at"]) == ("creating", 10, None)
    assert volume["bootable"] == "false"
    assert volume["availability_zone"] == "nova"
    assert volume["volume_type"] == "lvmdriver-1"
    assert volume["os-vol-tenant-attr:tenant_id"] == PROJECT
    assert volume["links"][0]["href"] == f"http://simcloud{VOLUMES}/{volume['id']}"
    assert creating["status"] == "creating"
    assert available["status"] == "available"
    assert available["updated_at"] is not None


async def test_a_volume_from_an_image_is_bootable_with_image_metadata(
    client: httpx.AsyncClient,
) -> None:
    by_id = await create(client, imageRef=seeded_image_id("cirros"), name="boot")
    by_name = await create(client, imageRef="cirros-v2")

    volume = await show(client, by_id)
    assert volume["bootable"] == "true"
    assert volume["volume_image_metadata"]["image_id"] == seeded_image_id("cirros")
    assert volume["volume_image_metadata"]["image_name"] == "cirros"
    assert (await show(client, by_name))["volume_image_metadata"]["image_name"] == "cirros-v2"


async def test_a_volume_cloned_from_another_takes_its_size(client: httpx.AsyncClient) -> None:
    source = await create(client, size=3, imageRef="cirros")

    clone = await show(client, await create(client, size=None, source_volid=source))

    assert (clone["size"], clone["source_volid"], clone["bootable"]) == (3, source, "true")


@pytest.mark.parametrize(
    ("volume", "status", "fault", "message"),
    [
        (
            {"size": 1, "imageRef": "no-such-image"},
            400,
            "badRequest",
            "Invalid image identifier or unable to access requested image.",
        ),
        (
            {"size": 1, "snapshot_id": "6e1b6a34-4f5b-4a9b-8e0c-2f9d7c3b1a10"},
            404,
            "itemNotFound",
            "Snapshot 6e1b6a34-4f5b-4a9b-8e0c-2f9d7c3b1a10 could not be found.",
        ),
        (
            {"size": 1, "source_volid": "6e1b6a34-4f5b-4a9b-8e0c-2f9d7c3b1a10"},
            404,
            "itemNotFound",
            "Volume 6e1b6a34-4f5b-4a9b-8e0c-2f9d7c3b1a10 could not be found.",
        ),
        (
            {"size": 1, "volume_type": "gold"},
            404,
            "itemNotFound",
            "Volume type with name gold could not be found.",
        ),
        (
            {"name": "no-size"},
            400,
            "badRequest",
            "Invalid input received: Volume size 'None' must be an integer and greater than 0",
        ),
        (
            {"size": "0"},
            400,
            "badRequest",
            "Invalid input received: Invalid volume size provided for create request: 0 "
            "(size argument must be an integer (or string representation of an integer) and "
            "greater than zero).",
        ),
        (
            {"size": 1, "multiattach": True},
            400,
            "badRequest",
            "multiattach parameter has been removed. The default behavior is to use "
            "multiattach enabled volume types. Contact your administrator to create a "
            "multiattach enabled volume type and use it to create multiattach volumes.",
        ),
        (
            {"size": 1, "availability_zone": "mars"},
            400,
            "badRequest",
            "Availability zone 'mars' is invalid.",
        ),
    ],
)
async def test_create_rejects_what_cinder_rejects(
    client: httpx.AsyncClient, volume: dict[str, Any], status: int, fault: str, message: str
) -> None:
    response = await client.post(VOLUMES, json={"volume": volume})

    assert_fault(response, status, fault, message)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"volume": {"size": 0}},
        {"volume": {"size": -1}},
        {"volume": {"size": "ten"}},
        {"volume": {"size": 1.5}},
        {"volume": {"size": 1, "name": 5}},
        {"volume": {"size": 1, "metadata": {"k": 1}}},
        {"volume": {"size": 1, "metadata": {"bad/key!": "v"}}},
        {"volume": {"size": 1, "source_volid": "not-a-uuid"}},
        {"volume": {"size": 1}, "extra": True},
        [],
    ],
)
async def test_create_rejects_malformed_bodies_with_400(
    client: httpx.AsyncClient, body: Any
) -> None:
    response = await client.post(VOLUMES, json=body)

    assert response.status_code == 400, response.text
    assert "badRequest" in response.json()


async def test_an_inactive_or_too_large_image_is_refused(client: httpx.AsyncClient) -> None:
    image = seeded_image_id("x")
    await client.post(f"/image/v2/images/{image}/actions/deactivate")
    small_image = seeded_image_id("b")
    await client.patch(
        f"/image/v2/images/{small_image}",
        json=[{"op": "replace", "path": "/min_disk", "value": 5}],
        headers={"Content-Type": "application/openstack-images-v2.1-json-patch"},
    )

    inactive = await client.post(VOLUMES, json={"volume": {"size": 1, "imageRef": image}})
    too_small = await client.post(VOLUMES, json={"volume": {"size": 1, "imageRef": small_image}})

    assert_fault(
        inactive, 400, "badRequest", f"Invalid input received: Image {image} is not active."
    )
    assert_fault(
        too_small,
        400,
        "badRequest",
        "Invalid input received: Volume size 1GB cannot be smaller than the image minDisk "
        "size 5GB.",
    )


async def test_update_sample_changes_name_description_and_metadata(
    client: httpx.AsyncClient,
) -> None:
    volume_id = await create(client, metadata={"old": "x"})
    sample = {
        "volume": {
            "name": "vol-003",
            "description": "This is yet, another volume.",
            "metadata": {"name": "metadata0"},
        }
    }

    response = await client.put(f"{VOLUMES}/{volume_id}", json=sample)

    assert response.status_code == 200, response.text
    volume = response.json()["volume"]
    assert (volume["name"], volume["description"]) == ("vol-003", "This is yet, another volume.")
    assert volume["metadata"] == {"name": "metadata0"}
    bad = await client.put(f"{VOLUMES}/{volume_id}", json={"volume": {"size": 5}})
    assert bad.status_code == 400


async def test_extend_grows_the_volume_after_extending(client: httpx.AsyncClient) -> None:
    volume_id = await create(client, size=1)

    response = await client.post(
        f"{VOLUMES}/{volume_id}/action", json={"os-extend": {"new_size": 3}}
    )
    extending = await show(client, volume_id)
    await advance(client, 2)
    extended = await show(client, volume_id)

    assert response.status_code == 202
    assert (extending["status"], extending["size"]) == ("extending", 1)
    assert (extended["status"], extended["size"]) == ("available", 3)


async def test_extend_refuses_shrinking_and_busy_volumes(client: httpx.AsyncClient) -> None:
    volume_id = await create(client, size=2)
    creating = await create(client, settle=False)
    url = f"{VOLUMES}/{{}}/action"

    smaller = await client.post(url.format(volume_id), json={"os-extend": {"new_size": 1}})
    busy = await client.post(url.format(creating), json={"os-extend": {"new_size": 5}})
    malformed = await client.post(url.format(volume_id), json={"os-extend": {"size": 5}})
    unknown = await client.post(url.format(volume_id), json={"os-frobnicate": {}})

    assert_fault(
        smaller,
        400,
        "badRequest",
        "Invalid input received: New size for extend must be greater than current size. "
        "(current: 2, extended: 1).",
    )
    assert_fault(
        busy,
        400,
        "badRequest",
        f"Invalid volume: Volume {creating} status must be '{{'status': 'available'}}' to "
        "extend, currently creating.",
    )
    assert malformed.status_code == 400
    assert_fault(unknown, 400, "badRequest", "There is no such action: os-frobnicate")


async def test_set_bootable_sample(client: httpx.AsyncClient) -> None:
    volume_id = await create(client)

    response = await client.post(
        f"{VOLUMES}/{volume_id}/action", json={"os-set_bootable": {"bootable": "True"}}
    )

    assert response.status_code == 200
    assert (await show(client, volume_id))["bootable"] == "true"


async def test_delete_goes_deleting_then_404(client: httpx.AsyncClient) -> None:
    volume_id = await create(client)

    response = await client.delete(f"{VOLUMES}/{volume_id}")
    deleting = await show(client, volume_id)
    await advance(client, 2)
    gone = await client.get(f"{VOLUMES}/{volume_id}")

    assert response.status_code == 202
    assert deleting["status"] == "deleting"
    assert_fault(gone, 404, "itemNotFound", f"Volume {volume_id} could not be found.")


async def test_delete_refuses_a_creating_volume(client: httpx.AsyncClient) -> None:
    volume_id = await create(client, settle=False)

    response = await client.delete(f"{VOLUMES}/{volume_id}")

    assert_fault(response, 400, "badRequest", IN_USE)


async def test_another_projects_url_is_malformed(client: httpx.AsyncClient) -> None:
    response = await client.get(f"/volume/v3/{uuid.uuid4().hex}/volumes")

    assert_fault(response, 400, "badRequest", "Malformed request url")


async def test_volume_calls_need_a_token(client: httpx.AsyncClient) -> None:
    response = await client.get(VOLUMES, headers={"X-Auth-Token": "expired"})

    assert response.status_code == 401


async def test_retype_changes_the_type_after_retyping_and_refuses_the_same_type(
    client: httpx.AsyncClient,
) -> None:
    volume_id = await create(client, size=1)
    url = f"{VOLUMES}/{volume_id}/action"
    before = (await show(client, volume_id))["volume_type"]
    other = "__DEFAULT__" if before != "__DEFAULT__" else "lvmdriver-1"

    response = await client.post(url, json={"os-retype": {"new_type": other}})
    retyping = await show(client, volume_id)
    await advance(client, 2)
    retyped = await show(client, volume_id)

    assert response.status_code == 202
    assert retyping["status"] == "retyping"
    assert (retyped["status"], retyped["volume_type"]) == ("available", other)
    same = await client.post(url, json={"os-retype": {"new_type": other}})
    assert same.status_code == 400 and "same as original" in same.text
    missing = await client.post(url, json={"os-retype": {"new_type": "no-such-type"}})
    assert missing.status_code == 404


async def test_the_readonly_flag_is_set_on_an_available_volume_and_shown_in_its_metadata(
    client: httpx.AsyncClient,
) -> None:
    volume_id = await create(client, size=1)
    url = f"{VOLUMES}/{volume_id}/action"
    assert "readonly" not in (await show(client, volume_id))["metadata"]

    response = await client.post(url, json={"os-update_readonly_flag": {"readonly": True}})

    assert response.status_code == 202
    assert (await show(client, volume_id))["metadata"]["readonly"] == "True"
    bad = await client.post(url, json={"os-update_readonly_flag": {"readonly": "maybe"}})
    assert bad.status_code == 400
