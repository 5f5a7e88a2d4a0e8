"""Driver Zaqar calls against simcloud over HTTP."""

from __future__ import annotations

import pytest

from activities.cloud import CloudSession, MessagingClient
from domain.errors import InvalidRequest


async def test_posted_message_is_listed_with_echo(cloud: CloudSession) -> None:
    message_id = await cloud.messaging.post_message("hooks", {"lifecycle_action_token": "t-1"})

    messages = await cloud.messaging.list_messages("hooks")

    assert [m.id for m in messages] == [message_id]
    assert messages[0].body == {"lifecycle_action_token": "t-1"}
    assert messages[0].ttl == 3600


async def test_without_echo_a_client_sees_only_other_clients_messages(
    cloud: CloudSession,
) -> None:
    other = MessagingClient(cloud)
    await cloud.messaging.post_message("hooks", "mine", ttl=120)
    await other.post_message("hooks", "theirs")

    mine_hidden = await cloud.messaging.list_messages("hooks", echo=False)
    other_view = await other.list_messages("hooks", echo=False)

    assert [m.body for m in mine_hidden] == ["theirs"]
    assert [m.body for m in other_view] == ["mine"]


async def test_list_follows_pages_and_honours_limit(cloud: CloudSession) -> None:
    for n in range(45):
        await cloud.messaging.post_message("many", n)

    everything = await cloud.messaging.list_messages("many")
    some = await cloud.messaging.list_messages("many", limit=25)

    assert [m.body for m in everything] == list(range(45))
    assert [m.body for m in some] == list(range(25))


async def test_bad_ttl_is_an_invalid_request(cloud: CloudSession) -> None:
    with pytest.raises(InvalidRequest):
        await cloud.messaging.post_message("hooks", {}, ttl=1)


async def test_empty_queue_lists_nothing(cloud: CloudSession) -> None:
    assert await cloud.messaging.list_messages("nothing-here") == []
