"""simcloud's Zaqar v2: Client-ID, posting, echo, paging, TTL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support.simcloud_server import in_process_simcloud, login

QUEUE = "/messaging/v2/queues/hooks/messages"
ME, OTHER = str(uuid.uuid4()), str(uuid.uuid4())


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud() as client:
        client.headers.update(await login(client))
        yield client


async def post(client: httpx.AsyncClient, *bodies: Any, client_id: str = ME, ttl: int = 300) -> Any:
    messages = [{"body": body, "ttl": ttl} for body in bodies]
    response = await client.post(
        QUEUE, json={"messages": messages}, headers={"Client-ID": client_id}
    )
    assert response.status_code == 201, response.text
    return response.json()


async def bodies(client: httpx.AsyncClient, client_id: str = ME, **params: str) -> list[Any]:
    response = await client.get(QUEUE, params=params, headers={"Client-ID": client_id})
    assert response.status_code == 200, response.text
    return [m["body"] for m in response.json()["messages"]]


@pytest.mark.parametrize("headers", [{}, {"Client-ID": "not-a-uuid"}])
async def test_client_id_header_is_required(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    posted = await client.post(QUEUE, json={"messages": [{"body": 1}]}, headers=headers)
    listed = await client.get(QUEUE, headers=headers)

    assert posted.status_code == 400
    assert listed.status_code == 400
    assert "Client-ID" in posted.json()["description"]


async def test_post_returns_message_hrefs(client: httpx.AsyncClient) -> None:
    result = await post(client, {"a": 1}, {"b": 2})

    assert len(result["resources"]) == 2
    assert all(r.startswith("/v2/queues/hooks/messages/") for r in result["resources"])


async def test_echo_controls_whether_own_messages_are_listed(client: httpx.AsyncClient) -> None:
    await post(client, "mine")
    await post(client, "theirs", client_id=OTHER)

    assert await bodies(client) == ["theirs"]
    assert await bodies(client, echo="true") == ["mine", "theirs"]
    assert await bodies(client, client_id=OTHER) == ["mine"]


async def test_list_pages_with_next_link(client: httpx.AsyncClient) -> None:
    await post(client, *range(10))
    await post(client, *range(10, 15))

    first = await client.get(
        QUEUE, params={"echo": "true", "limit": "6"}, headers={"Client-ID": ME}
    )
    href = first.json()["links"][0]["href"]
    marker = href.split("marker=")[1].split("&")[0]
    second = await bodies(client, echo="true", limit="20", marker=marker)

    assert [m["body"] for m in first.json()["messages"]] == list(range(6))
    assert second == list(range(6, 15))


async def test_messages_expire_after_their_ttl(client: httpx.AsyncClient) -> None:
    await post(client, "short", ttl=60)
    await post(client, "long", ttl=600)

    await client.post("/sim/clock", json={"advance_s": 61})

    assert await bodies(client, echo="true") == ["long"]


async def test_unknown_queue_lists_empty(client: httpx.AsyncClient) -> None:
    response = await client.get(
        "/messaging/v2/queues/never-used/messages", headers={"Client-ID": ME}
    )

    assert response.json() == {"messages": [], "links": []}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"messages": []},
        {"messages": [{"ttl": 300}]},
        {"messages": [{"body": 1, "ttl": 5}]},
        {"messages": [{"body": 1, "color": "red"}]},
        {"messages": [{"body": n} for n in range(11)]},
    ],
)
async def test_bad_posts_get_400(client: httpx.AsyncClient, body: Any) -> None:
    response = await client.post(QUEUE, json=body, headers={"Client-ID": ME})

    assert response.status_code == 400


async def test_bad_queue_name_and_limit_get_400(client: httpx.AsyncClient) -> None:
    bad_name = await client.get("/messaging/v2/queues/bad!name/messages", headers={"Client-ID": ME})
    bad_limit = await client.get(QUEUE, params={"limit": "50"}, headers={"Client-ID": ME})

    assert bad_name.status_code == 400
    assert bad_limit.status_code == 400


async def test_create_queue_then_delete_message(client: httpx.AsyncClient) -> None:
    headers = {"Client-ID": ME}
    created = await client.put("/messaging/v2/queues/jobs", headers=headers)
    again = await client.put("/messaging/v2/queues/jobs", headers=headers)
    href = (await post(client, "x"))["resources"][0]

    deleted = await client.delete(f"/messaging{href}", headers=headers)

    assert (created.status_code, again.status_code, deleted.status_code) == (201, 204, 204)
    assert await bodies(client, echo="true") == []
