"""simcloud's Glance v2 image list: filters, `in:`, custom properties, sorting, pages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from simcloud.image.state import seeded_image_id
from tests.support.simcloud_server import in_process_simcloud, login

IMAGES = "/image/v2/images"
#: The keys of the api-ref's list response sample.
LIST_KEYS = {"images", "schema", "first"}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(images=("a", "b", "x"))) as client:
        client.headers.update(await login(client))
        yield client


async def names(client: httpx.AsyncClient, **params: Any) -> list[str]:
    response = await client.get(IMAGES, params=params)
    assert response.status_code == 200, response.text
    return [image["name"] for image in response.json()["images"]]


async def create(client: httpx.AsyncClient, name: str, **body: Any) -> str:
    response = await client.post(IMAGES, json={"name": name} | body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_list_has_the_sample_keys_and_sorts_by_name(client: httpx.AsyncClient) -> None:
    response = await client.get(IMAGES, params={"sort": "name:asc"})

    assert response.status_code == 200
    assert set(response.json()) == LIST_KEYS
    assert response.json()["schema"] == "/v2/schemas/images"
    assert response.json()["first"] == "/v2/images?sort=name%3Aasc"
    assert [i["name"] for i in response.json()["images"]] == ["a", "b", "x"]
    assert await names(client, sort_key="name", sort_dir="desc") == ["x", "b", "a"]


async def test_list_filters_by_name_status_visibility_and_id_in(
    client: httpx.AsyncClient,
) -> None:
    await create(client, "private-one", visibility="private")

    assert await names(client, name="b") == ["b"]
    assert sorted(await names(client, name='in:a,"x"')) == ["a", "x"]
    assert await names(client, status="queued") == ["private-one"]
    assert await names(client, visibility="private") == ["private-one"]
    assert sorted(await names(client, visibility="public")) == ["a", "b", "x"]
    ids = f"in:{seeded_image_id('a')},{seeded_image_id('x')}"
    assert sorted(await names(client, id=ids)) == ["a", "x"]


async def test_list_filters_by_tags_and_custom_properties(client: httpx.AsyncClient) -> None:
    tagged = await create(client, "tagged", tags=["ready", "approved"], os_distro="ubuntu")
    await create(client, "half", tags=["ready"], os_distro="fedora")

    assert sorted(await names(client, tag="ready")) == ["half", "tagged"]
    both = await client.get(IMAGES, params=[("tag", "ready"), ("tag", "approved")])
    assert [i["id"] for i in both.json()["images"]] == [tagged]
    assert await names(client, os_distro="ubuntu") == ["tagged"]
    assert await names(client, os_distro="nothing") == []


async def test_hidden_and_community_images_are_listed_only_when_asked(
    client: httpx.AsyncClient,
) -> None:
    await create(client, "hidden", os_hidden=True)
    await create(client, "community", visibility="community")

    default = await names(client)
    assert "hidden" not in default and "community" not in default
    assert await names(client, os_hidden="true") == ["hidden"]
    assert await names(client, visibility="community") == ["community"]
    assert "community" in await names(client, visibility="all")


async def test_list_pages_with_limit_marker_and_next_link(client: httpx.AsyncClient) -> None:
    first = (await client.get(IMAGES, params={"sort": "name:asc", "limit": 2})).json()
    marker = first["images"][-1]["id"]
    second = await client.get(IMAGES, params={"sort": "name:asc", "limit": 2, "marker": marker})

    assert [i["name"] for i in first["images"]] == ["a", "b"]
    assert first["next"] == f"/v2/images?sort=name%3Aasc&limit=2&marker={marker}"
    assert [i["name"] for i in second.json()["images"]] == ["x"]
    assert "next" not in second.json()


async def test_list_filters_by_size_range(client: httpx.AsyncClient) -> None:
    image_id = await create(client, "tiny", disk_format="raw", container_format="bare")
    await client.put(
        f"{IMAGES}/{image_id}/file",
        content=b"12345",
        headers={"Content-Type": "application/octet-stream"},
    )

    assert await names(client, size_max=10) == ["tiny"]
    assert "tiny" not in await names(client, size_min=10)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": "many"}, "limit param must be an integer"),
        ({"limit": "-1"}, "limit param must be positive"),
        (
            {"marker": "4f1b6a34-0000-0000-0000-000000000000"},
            "No image found with ID 4f1b6a34-0000-0000-0000-000000000000",
        ),
        (
            {"sort_key": "owner"},
            "Invalid sort key: owner. It must be one of the following: name, status, "
            "container_format, disk_format, size, id, created_at, updated_at.",
        ),
        ({"sort_dir": "up"}, "Invalid sort direction: up"),
        ({"sort": "name", "sort_key": "id"}, "Old and new sorting syntax cannot be combined"),
        ({"visibility": "everyone"}, "Invalid visibility value: everyone"),
        ({"name": "gt:a"}, "Unable to filter by unknown operator 'gt'."),
        ({"size_min": "big"}, "Unable to filter on a range with a non-numeric value."),
        (
            {"protected": "maybe"},
            "Invalid value 'maybe' for 'protected' filter. Valid values are 'true' or 'false'.",
        ),
        (
            {"changes-since": "2020-01-01"},
            'The "changes-since" filter is no longer available on v2.',
        ),
        (
            {"created_at": "gt:yesterday"},
            'Bad "created_at" query filter format. Use ISO 8601 DateTime notation.',
        ),
    ],
)
async def test_list_rejects_bad_queries_with_glance_400s(
    client: httpx.AsyncClient, params: dict[str, str], message: str
) -> None:
    response = await client.get(IMAGES, params=params)

    assert response.status_code == 400, response.text
    assert response.json() == {"code": 400, "title": "Bad Request", "message": message}


async def test_list_filters_by_creation_time(client: httpx.AsyncClient) -> None:
    await client.post("/sim/clock", json={"advance_s": 600})
    await create(client, "later")

    assert await names(client, created_at="gt:2000-01-01T00:00:00Z") != []
    newest = await client.get(IMAGES, params={"sort": "created_at:desc", "limit": 1})
    moment = newest.json()["images"][0]["created_at"]
    assert await names(client, created_at=f"gte:{moment}") == ["later"]
