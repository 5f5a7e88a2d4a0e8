"""simcloud's Glance v2 image update: JSON-patch add, replace and remove, all or nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.simcloud_server import in_process_simcloud, login

IMAGES = "/image/v2/images"
PATCH_V21 = {"Content-Type": "application/openstack-images-v2.1-json-patch"}
PATCH_V20 = {"Content-Type": "application/openstack-images-v2.0-json-patch"}
#: The api-ref's update request sample.
UPDATE_SAMPLE = [
    {"op": "replace", "path": "/name", "value": "Fedora 17"},
    {"op": "replace", "path": "/tags", "value": ["fedora", "beefy"]},
]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(images=())) as client:
        client.headers.update(await login(client))
        yield client


@pytest.fixture
async def image_id(client: httpx.AsyncClient) -> str:
    body = {"name": "img", "disk_format": "qcow2", "container_format": "bare", "foo": "bar"}
    response = await client.post(IMAGES, json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def patch(
    client: httpx.AsyncClient, image_id: str, ops: Any, headers: dict[str, str] = PATCH_V21
) -> httpx.Response:
    return await client.patch(f"{IMAGES}/{image_id}", json=ops, headers=headers)


async def test_update_sample_replaces_name_and_tags(
    client: httpx.AsyncClient, image_id: str
) -> None:
    response = await patch(client, image_id, UPDATE_SAMPLE)

    assert response.status_code == 200, response.text
    assert response.json()["name"] == "Fedora 17"
    assert response.json()["tags"] == ["beefy", "fedora"]
    assert (await client.get(f"{IMAGES}/{image_id}")).json()["name"] == "Fedora 17"


async def test_properties_are_added_replaced_and_removed(
    client: httpx.AsyncClient, image_id: str
) -> None:
    added = await patch(client, image_id, [{"op": "add", "path": "/hw_disk_bus", "value": "scsi"}])
    replaced = await patch(client, image_id, [{"op": "replace", "path": "/foo", "value": "baz"}])
    removed = await patch(client, image_id, [{"op": "remove", "path": "/foo"}])

    assert added.json()["hw_disk_bus"] == "scsi"
    assert replaced.json()["foo"] == "baz"
    assert "foo" not in removed.json()
    assert removed.json()["hw_disk_bus"] == "scsi"


async def test_base_attributes_change_protected_min_ram_visibility(
    client: httpx.AsyncClient, image_id: str
) -> None:
    ops = [
        {"op": "replace", "path": "/protected", "value": True},
        {"op": "replace", "path": "/min_ram", "value": 512},
        {"op": "add", "path": "/min_disk", "value": 2},
        {"op": "replace", "path": "/visibility", "value": "public"},
    ]

    image = (await patch(client, image_id, ops)).json()

    assert (image["protected"], image["min_ram"], image["min_disk"]) == (True, 512, 2)
    assert image["visibility"] == "public"


async def test_draft_4_patch_syntax_is_accepted(client: httpx.AsyncClient, image_id: str) -> None:
    response = await patch(client, image_id, [{"replace": "/name", "value": "old"}], PATCH_V20)
    conflict = await patch(client, image_id, [{"add": "/foo", "value": "x"}], PATCH_V20)

    assert response.json()["name"] == "old"
    assert conflict.status_code == 409
    assert conflict.json()["message"] == "Property foo already present."


async def test_a_failing_change_leaves_the_image_untouched(
    client: httpx.AsyncClient, image_id: str
) -> None:
    ops = [
        {"op": "replace", "path": "/name", "value": "changed"},
        {"op": "remove", "path": "/missing"},
    ]

    response = await patch(client, image_id, ops)

    assert response.status_code == 409
    assert response.json()["message"] == "Property missing does not exist."
    assert (await client.get(f"{IMAGES}/{image_id}")).json()["name"] == "img"


async def test_formats_change_only_while_queued(client: httpx.AsyncClient, image_id: str) -> None:
    await client.put(
        f"{IMAGES}/{image_id}/file",
        content=b"data",
        headers={"Content-Type": "application/octet-stream"},
    )

    response = await patch(
        client, image_id, [{"op": "replace", "path": "/disk_format", "value": "raw"}]
    )

    assert response.status_code == 403
    assert response.json()["message"] == (
        "Attribute disk_format can be only replaced for a queued image."
    )


@pytest.mark.parametrize(
    ("ops", "status", "message"),
    [
        ({"op": "add"}, 400, "Request body must be a JSON array of operation objects."),
        (["add"], 400, "Operations must be JSON objects."),
        (
            [{"path": "/name", "value": "x"}],
            400,
            "Unable to find `op` in JSON Schema change. It must be one of the following: "
            "add, remove, replace.",
        ),
        (
            [{"op": "move", "path": "/name", "value": "x"}],
            400,
            "Invalid operation: `move`. It must be one of the following: add, remove, replace.",
        ),
        ([{"op": "add", "value": "x"}], 400, "Unable to find 'path' in JSON Schema change"),
        (
            [{"op": "add", "path": "name", "value": "x"}],
            400,
            'Pointer `name` does not start with "/".',
        ),
        (
            [{"op": "add", "path": "/a/b", "value": "x"}],
            400,
            "Invalid JSON pointer for this resource: '/a/b'",
        ),
        ([{"op": "add", "path": "/foo"}], 400, 'Operation "add" requires a member named "value".'),
        (
            [{"op": "replace", "path": "/status", "value": "active"}],
            403,
            "Attribute 'status' is read-only.",
        ),
        ([{"op": "replace", "path": "/id", "value": "x"}], 403, "Attribute 'id' is read-only."),
        (
            [{"op": "add", "path": "/os_glance_x", "value": "1"}],
            403,
            "Attribute 'os_glance_x' is reserved.",
        ),
        ([{"op": "remove", "path": "/name"}], 403, "Property name may not be removed."),
        (
            [{"op": "replace", "path": "/owner", "value": "x"}],
            403,
            "Owner can't be updated by non admin.",
        ),
        ([{"op": "replace", "path": "/nope", "value": "x"}], 409, "Property nope does not exist."),
        (
            [{"op": "add", "path": "/locations", "value": []}],
            403,
            "It's not allowed to add locations if locations are invisible.",
        ),
        (
            [{"op": "replace", "path": "/min_ram", "value": "big"}],
            400,
            "Provided object does not match schema 'image': 'big' is not of type 'integer'",
        ),
        (
            [{"op": "replace", "path": "/min_ram", "value": -5}],
            400,
            "Invalid value '-5' for parameter 'min_ram': Cannot be a negative value",
        ),
        (
            [{"op": "add", "path": "/custom", "value": 3}],
            400,
            "Provided object does not match schema 'image': 3 is not of type 'string'",
        ),
    ],
)
async def test_patch_rejects_bad_operations_like_glance(
    client: httpx.AsyncClient, image_id: str, ops: Any, status: int, message: str
) -> None:
    response = await patch(client, image_id, ops)

    assert response.status_code == status, response.text
    assert response.json()["message"] == message


async def test_patch_needs_a_json_patch_media_type(
    client: httpx.AsyncClient, image_id: str
) -> None:
    response = await client.patch(f"{IMAGES}/{image_id}", json=UPDATE_SAMPLE)

    assert response.status_code == 415
    assert response.json()["message"] == (
        "Image PATCH expects Content-Type one of: application/openstack-images-v2.0-json-patch, "
        "application/openstack-images-v2.1-json-patch"
    )


async def test_patch_of_an_unknown_image_is_404(client: httpx.AsyncClient) -> None:
    response = await patch(client, "0e7cb2c6-1111-4d3c-9b2b-1e9a0a6c1c11", UPDATE_SAMPLE)

    assert response.status_code == 404
