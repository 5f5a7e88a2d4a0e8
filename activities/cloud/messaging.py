"""Zaqar v2 client: post and list queue messages."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from activities.cloud.errors import json_body
from activities.cloud.paging import next_marker
from domain.errors import BackendError

if TYPE_CHECKING:
    from activities.cloud.requests import CloudRequests

#: Zaqar's default and bounds for a message's time to live, in seconds.
DEFAULT_TTL_S = 3600
MAX_PAGE = 20


@dataclass(frozen=True)
class Message:
    """A message read from a queue."""

    id: str
    body: Any
    ttl: int
    age: int


class MessagingClient:
    """Zaqar v2 queues; every call carries this client's `Client-ID`."""

    def __init__(self, session: CloudRequests, client_id: str | None = None) -> None:
        self._session = session
        #: Zaqar tells clients apart by this id (`echo=false` hides their own messages).
        self.client_id = client_id or str(uuid.uuid4())

    def _path(self, queue: str) -> str:
        return f"/v2/queues/{quote(queue, safe='')}/messages"

    async def post_message(self, queue: str, body: Any, ttl: int = DEFAULT_TTL_S) -> str:
        """Post one JSON message (the queue is created on first use); its id."""
        response = await self._session.request(
            "messaging",
            "POST",
            self._path(queue),
            json={"messages": [{"body": body, "ttl": ttl}]},
            headers={"Client-ID": self.client_id},
        )
        resources = json_body(response, f"messaging post to {queue}", "resources")
        if not isinstance(resources, list) or not resources:
            raise BackendError(f"messaging post to {queue} returned no message reference")
        return str(resources[0]).rsplit("/", 1)[-1]

    async def list_messages(
        self, queue: str, *, echo: bool = True, limit: int | None = None
    ) -> list[Message]:
        """Messages of `queue`, oldest first, following pages up to `limit` messages.

        Args:
            queue: The queue name.
            echo: Include messages this client posted itself.
            limit: Stop after this many messages (all when None).
        """
        params = {"echo": str(echo).lower(), "limit": str(MAX_PAGE)}
        messages: list[Message] = []
        while limit is None or len(messages) < limit:
            response = await self._session.request(
                "messaging",
                "GET",
                self._path(queue),
                params=params,
                headers={"Client-ID": self.client_id},
            )
            body = json_body(response, f"messaging list of {queue}") if response.content else {}
            page = body.get("messages") or [] if isinstance(body, dict) else []
            messages.extend(
                Message(str(m["id"]), m.get("body"), int(m.get("ttl", 0)), int(m.get("age", 0)))
                for m in page
                if isinstance(m, dict) and "id" in m
            )
            marker = next_marker(body.get("links")) if page else None
            if marker is None:
                break
            params["marker"] = marker
        return messages if limit is None else messages[:limit]
