"""simcloud's Glance v2: versions, seeded images, create, upload, import and status rules."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from simcloud.image.state import seeded_image_id
from tests.support.simcloud_server import in_process_simcloud, login

IMAGES = "/image/v2/images"
OCTET = {"Content-Type": "application/octet-stream"}
#: The api-ref's create request sample.
CREATE_SAMPLE = {
    "container_format": "bare",
    "disk_format": "raw",
    "name": "Ubuntu",
    "id": "b2173dd3-7ad6-4362-baa6-a68bce3565cb",
}
#: The keys of the api-ref's show response sample.
SHOW_KEYS = {
    "status",
    "name",
    "tags",
    "container_format",
    "created_at",
    "disk_format",
    "updated_at",
    "visibility",
    "self",
    "min_disk",
    "protected",
    "id",
    "file",
    "checksum",
    "os_hash_algo",
    "os_hash_value",
    "os_hidden",
    "owner",
    "size",
    "min_ram",
    "schema",
    "virtual_size",
}
WEB_DOWNLOAD = {
    "method": {
        "name": "web-download",
        "uri": "https://download.cirros-cloud.net/0.4.0/cirros-0.4.0-ppc64le-disk.img",
    },
    "all_stores": True,
    "all_stores_must_succeed": True,
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(import_latency_ms=3_000)) as client:
        client.headers.update(await login(client))
        yield client


async def create(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    fields = {"name": "img", "disk_format": "qcow2", "container_format": "bare"} | body
    response = await client.post(IMAGES, json=fields)
    assert response.status_code == 201, response.text
    image: dict[str, Any] = response.json()
    return image


async def show(client: httpx.AsyncClient, image_id: str) -> dict[str, Any]:
    response = await client.get(f"{IMAGES}/{image_id}")
    assert response.status_code == 200, response.text
    image: dict[str, Any] = response.json()
    return image


def assert_glance_error(response: httpx.Response, status: int, message: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["code"] == status
    assert response.json()["message"] == message


async def test_versions_list_v2_with_current_first_among_equals(
    client: httpx.AsyncClient,
) -> None:
    root = await client.get("/image/")
    explicit = await client.get("/image/versions")

    assert root.status_code == 300
    assert explicit.status_code == 200
    versions = {v["id"]: v["status"] for v in explicit.json()["versions"]}
    assert versions["v2.17"] == "CURRENT"
    assert versions["v2.0"] == "SUPPORTED"
    assert explicit.json()["versions"][0]["links"][0]["href"] == "http://simcloud/image/v2/"


async def test_seeded_images_are_public_active_with_stable_ids(
    client: httpx.AsyncClient,
) -> None:
    cirros = await show(client, str(uuid.uuid5(uuid.NAMESPACE_DNS, "cirros-0.6.2-x86_64-disk")))
    listed = (await client.get(IMAGES, params={"limit": 100})).json()["images"]

    assert cirros["name"] == "cirros-0.6.2-x86_64-disk"
    assert (cirros["status"], cirros["visibility"]) == ("active", "public")
    assert set(cirros) == SHOW_KEYS
    names = {i["name"]: i["id"] for i in listed}
    for name in ("cirros", "cirros-v2", "a", "b", "x", "img-2", "ubuntu-22.04", "fedora-coreos"):
        assert names[name] == seeded_image_id(name)


async def test_seeded_images_follow_the_config() -> None:
    async with in_process_simcloud(SimConfig(images=("only-one",))) as client:
        client.headers.update(await login(client))
        listed = (await client.get(IMAGES)).json()["images"]

    assert [i["name"] for i in listed] == ["only-one"]


async def test_create_sample_gives_a_queued_image_with_the_sample_keys(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(IMAGES, json=CREATE_SAMPLE)

    assert response.status_code == 201, response.text
    image = response.json()
    assert response.headers["Location"] == f"http://simcloud{IMAGES}/{CREATE_SAMPLE['id']}"
    assert response.headers["OpenStack-image-import-methods"] == "web-download"
    assert set(image) >= SHOW_KEYS
    assert (image["status"], image["size"], image["checksum"]) == ("queued", None, None)
    assert image["visibility"] == "shared"
    assert image["self"] == f"/v2/images/{CREATE_SAMPLE['id']}"
    assert image["file"] == f"/v2/images/{CREATE_SAMPLE['id']}/file"
    assert (await show(client, CREATE_SAMPLE["id"]))["name"] == "Ubuntu"


async def test_custom_properties_are_flattened_into_the_image(
    client: httpx.AsyncClient,
) -> None:
    image = await create(client, hw_disk_bus="scsi", os_distro="cirros")

    assert (image["hw_disk_bus"], image["os_distro"]) == ("scsi", "cirros")
    assert "properties" not in image


async def test_upload_turns_the_image_active_with_size_and_hashes(
    client: httpx.AsyncClient,
) -> None:
    image = await create(client)
    data = b"not really a disk"

    response = await client.put(f"{IMAGES}/{image['id']}/file", content=data, headers=OCTET)
    uploaded = await show(client, image["id"])

    assert response.status_code == 204
    assert uploaded["status"] == "active"
    assert uploaded["size"] == len(data)
    assert uploaded["checksum"] == hashlib.md5(data, usedforsecurity=False).hexdigest()
    assert uploaded["os_hash_algo"] == "sha512"
    assert uploaded["os_hash_value"] == hashlib.sha512(data).hexdigest()


async def test_upload_needs_formats_octet_stream_and_a_queued_image(
    client: httpx.AsyncClient,
) -> None:
    bare = (await client.post(IMAGES, json={"name": "no-formats"})).json()
    active = await create(client)
    await client.put(f"{IMAGES}/{active['id']}/file", content=b"x", headers=OCTET)

    no_formats = await client.put(f"{IMAGES}/{bare['id']}/file", content=b"x", headers=OCTET)
    json_body = await client.put(f"{IMAGES}/{active['id']}/file", json={})
    again = await client.put(f"{IMAGES}/{active['id']}/file", content=b"x", headers=OCTET)
    unknown = await client.put(f"{IMAGES}/{uuid.uuid4()}/file", content=b"x", headers=OCTET)

    assert_glance_error(
        no_formats,
        400,
        "Properties disk_format, container_format must be set prior to saving data.",
    )
    assert (await show(client, bare["id"]))["status"] == "queued"
    assert_glance_error(json_body, 415, "Invalid content type application/json")
    assert_glance_error(again, 409, "Image status transition from active to saving is not allowed")
    assert unknown.status_code == 404


async def test_web_download_import_goes_importing_then_active_without_fetching(
    client: httpx.AsyncClient,
) -> None:
    image = await create(client)

    response = await client.post(f"{IMAGES}/{image['id']}/import", json=WEB_DOWNLOAD)
    importing = await show(client, image["id"])
    await client.post("/sim/clock", json={"advance_s": 3})
    active = await show(client, image["id"])

    assert response.status_code == 202
    assert importing["status"] == "importing"
    assert active["status"] == "active"
    assert active["size"] is not None and active["checksum"] is not None
    assert "os_glance_import_task" not in active


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "Import request requires a 'method' field."),
        ({"method": {}}, "Import request requires a 'name' field."),
        ({"method": {"name": "glance-direct"}}, "Unknown import method name 'glance-direct'."),
        (
            {"method": {"name": "web-download", "uri": "ftp://example.com/x.img"}},
            "URI for web-download does not pass filtering: ftp://example.com/x.img",
        ),
        (
            {"method": {"name": "web-download", "uri": "http://example.com:8080/x.img"}},
            "URI for web-download does not pass filtering: http://example.com:8080/x.img",
        ),
        (
            {"method": {"name": "web-download", "uri": "http://e.com/x"}, "all_stores": "yes"},
            "'all_stores' must be boolean value only",
        ),
    ],
)
async def test_import_rejects_bad_requests_with_400(
    client: httpx.AsyncClient, body: dict[str, Any], message: str
) -> None:
    image = await create(client)

    response = await client.post(f"{IMAGES}/{image['id']}/import", json=body)

    assert_glance_error(response, 400, message)
    assert (await show(client, image["id"]))["status"] == "queued"


async def test_import_needs_a_queued_image_with_formats(client: httpx.AsyncClient) -> None:
    active = await create(client)
    await client.put(f"{IMAGES}/{active['id']}/file", content=b"x", headers=OCTET)
    no_disk_format = (await client.post(IMAGES, json={"container_format": "bare"})).json()

    on_active = await client.post(f"{IMAGES}/{active['id']}/import", json=WEB_DOWNLOAD)
    unformatted = await client.post(f"{IMAGES}/{no_disk_format['id']}/import", json=WEB_DOWNLOAD)

    assert_glance_error(on_active, 409, "Image with status active cannot be target for import")
    assert_glance_error(unformatted, 409, "'disk_format' needs to be set before import")


async def test_deactivate_and_reactivate_an_active_image(client: httpx.AsyncClient) -> None:
    image_id = seeded_image_id("cirros")
    queued = await create(client)

    deactivated = await client.post(f"{IMAGES}/{image_id}/actions/deactivate")
    status_off = (await show(client, image_id))["status"]
    reactivated = await client.post(f"{IMAGES}/{image_id}/actions/reactivate")
    refused = await client.post(f"{IMAGES}/{queued['id']}/actions/deactivate")

    assert (deactivated.status_code, reactivated.status_code) == (204, 204)
    assert status_off == "deactivated"
    assert (await show(client, image_id))["status"] == "active"
    assert_glance_error(refused, 403, "Not allowed to deactivate image in status 'queued'")


async def test_delete_refuses_protected_images_then_answers_404(
    client: httpx.AsyncClient,
) -> None:
    image = await create(client, protected=True)

    refused = await client.delete(f"{IMAGES}/{image['id']}")
    await client.patch(
        f"{IMAGES}/{image['id']}",
        json=[{"op": "replace", "path": "/protected", "value": False}],
        headers={"Content-Type": "application/openstack-images-v2.1-json-patch"},
    )
    deleted = await client.delete(f"{IMAGES}/{image['id']}")
    gone = await client.get(f"{IMAGES}/{image['id']}")
    again = await client.delete(f"{IMAGES}/{image['id']}")

    assert_glance_error(refused, 403, f"Image {image['id']} is protected and cannot be deleted.")
    assert deleted.status_code == 204
    assert_glance_error(gone, 404, f"No image found with ID {image['id']}")
    assert_glance_error(again, 404, f"Failed to find image {image['id']} to delete")


async def test_tags_are_added_idempotently_and_removed(client: httpx.AsyncClient) -> None:
    image = await create(client)
    url = f"{IMAGES}/{image['id']}/tags"

    first = await client.put(f"{url}/ready")
    second = await client.put(f"{url}/ready")
    tagged = (await show(client, image["id"]))["tags"]
    removed = await client.delete(f"{url}/ready")
    missing = await client.delete(f"{url}/ready")
    no_image = await client.put(f"{IMAGES}/{uuid.uuid4()}/tags/x")

    assert (first.status_code, second.status_code, removed.status_code) == (204, 204, 204)
    assert tagged == ["ready"]
    assert (await show(client, image["id"]))["tags"] == []
    assert missing.status_code == 404
    assert no_image.status_code == 404


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"self": "/v2/images/x"}, 403, "Attribute 'self' is read-only."),
        ({"status": "active"}, 403, "Attribute 'status' is read-only."),
        ({"size": 5}, 403, "Attribute 'size' is read-only."),
        ({"deleted": "true"}, 403, "Attribute 'deleted' is reserved."),
        ({"os_glance_foo": "x"}, 403, "Attribute 'os_glance_foo' is reserved."),
        ({"x" * 256: "v"}, 400, "Custom property should not be greater than 255 characters."),
        (
            {"disk_format": "floppy"},
            400,
            "Provided object does not match schema 'image': 'floppy' is not one of "
            "[None, 'ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', "
            "'ploop']",
        ),
        (
            {"container_format": "zip"},
            400,
            "Provided object does not match schema 'image': 'zip' is not one of "
            "[None, 'ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed']",
        ),
        (
            {"min_ram": "512"},
            400,
            "Provided object does not match schema 'image': '512' is not of type 'integer'",
        ),
        (
            {"min_disk": -1},
            400,
            "Invalid value '-1' for parameter 'min_disk': Cannot be a negative value",
        ),
        (
            {"visibility": "everyone"},
            400,
            "Provided object does not match schema 'image': 'everyone' is not one of "
            "['community', 'public', 'private', 'shared']",
        ),
        (
            {"protected": "yes"},
            400,
            "Provided object does not match schema 'image': 'yes' is not of type 'boolean'",
        ),
        (
            {"custom": 5},
            400,
            "Provided object does not match schema 'image': 5 is not of type 'string'",
        ),
        (
            {"id": "not-a-uuid"},
            400,
            "Provided object does not match schema 'image': 'not-a-uuid' does not match "
            "'^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-"
            "([0-9a-fA-F]){12}$'",
        ),
        (
            {"owner": "someone-else"},
            403,
            "You are not permitted to create images owned by 'someone-else'",
        ),
        (
            {"name": 7},
            400,
            "Provided object does not match schema 'image': 7 is not of type 'null', 'string'",
        ),
    ],
)
async def test_create_validates_like_glance(
    client: httpx.AsyncClient, body: dict[str, Any], status: int, message: str
) -> None:
    response = await client.post(IMAGES, json=body)

    assert_glance_error(response, status, message)


async def test_create_refuses_duplicate_ids_and_non_objects(client: httpx.AsyncClient) -> None:
    await client.post(IMAGES, json=CREATE_SAMPLE)

    duplicate = await client.post(IMAGES, json=CREATE_SAMPLE)
    listed = await client.post(IMAGES, json=[])
    malformed = await client.post(
        IMAGES, content=b"{", headers={"Content-Type": "application/json"}
    )

    assert_glance_error(duplicate, 409, f"Image ID {CREATE_SAMPLE['id']} already exists!")
    assert_glance_error(
        listed, 400, "Provided object does not match schema 'image': [] is not of type 'object'"
    )
    assert_glance_error(malformed, 400, "Malformed JSON in request body.")


async def test_create_enforces_the_property_quota(client: httpx.AsyncClient) -> None:
    body = {f"p{i}": "v" for i in range(129)}

    response = await client.post(IMAGES, json=body)

    assert_glance_error(
        response,
        413,
        "The limit has been exceeded on the number of allowed image properties. "
        "Attempted: 129, Maximum: 128",
    )


async def test_image_calls_need_a_token_and_answer_in_glance_format(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get(IMAGES, headers={"X-Auth-Token": "nope"})

    assert response.status_code == 401
    assert response.json()["title"] == "Unauthorized"


async def test_schemas_describe_base_properties_and_string_extras(
    client: httpx.AsyncClient,
) -> None:
    image = (await client.get("/image/v2/schemas/image")).json()
    images = (await client.get("/image/v2/schemas/images")).json()

    assert image["name"] == "image"
    assert image["additionalProperties"] == {"type": "string"}
    assert image["properties"]["disk_format"]["enum"][1:3] == ["ami", "ari"]
    assert image["properties"]["status"]["readOnly"] is True
    assert image["properties"]["name"] == {"type": ["null", "string"], "maxLength": 255}
    assert {link["rel"] for link in image["links"]} == {"self", "enclosure", "describedby"}
    assert images["properties"]["images"]["items"] == image
