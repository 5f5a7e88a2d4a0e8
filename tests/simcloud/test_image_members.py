"""simcloud's Glance v2 image members: sharing a `shared` image with projects."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.simcloud_server import in_process_simcloud, login

IMAGES = "/image/v2/images"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig()) as client:
        client.headers.update(await login(client))
        yield client


async def image(client: httpx.AsyncClient, visibility: str) -> str:
    body = {"name": "img", "disk_format": "qcow2", "container_format": "bare"}
    made = await client.post(IMAGES, json=body | {"visibility": visibility})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def test_a_shared_image_gets_and_loses_members(client: httpx.AsyncClient) -> None:
    url = f"{IMAGES}/{await image(client, 'shared')}/members"
    added = await client.post(url, json={"member": "project-b"})
    assert added.status_code == 200
    assert (added.json()["member_id"], added.json()["status"]) == ("project-b", "pending")
    assert (await client.post(url, json={"member": "project-b"})).status_code == 409
    listed = (await client.get(url)).json()["members"]
    assert [m["member_id"] for m in listed] == ["project-b"]
    assert (await client.get(f"{url}/project-b")).status_code == 200
    assert (await client.delete(f"{url}/project-b")).status_code == 204
    assert (await client.delete(f"{url}/project-b")).status_code == 404
    assert (await client.get(url)).json()["members"] == []


async def test_only_shared_images_have_members(client: httpx.AsyncClient) -> None:
    url = f"{IMAGES}/{await image(client, 'private')}/members"
    refused = await client.post(url, json={"member": "project-b"})
    assert refused.status_code == 403 and "Only shared images have members." in refused.text
    assert (await client.post(url, json={})).status_code in (400, 403)
