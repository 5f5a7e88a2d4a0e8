"""Zaqar v2 queues: post and list messages; every call needs a `Client-ID`."""

from __future__ import annotations

import re
import secrets
import uuid
from collections import deque
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from simcloud.errors import SimError, bad_request, read_body
from simcloud.identity import AuthToken
from simcloud.state import QueuedMessage, SimState, state_of

router = APIRouter(prefix="/messaging/v2/queues")

QUEUE_NAME = r"^[a-zA-Z0-9_-]{1,64}$"
DEFAULT_TTL = 3600


class MessageIn(BaseModel):
    """One message of a post."""

    model_config = ConfigDict(extra="forbid")

    body: Any = Field(...)
    ttl: int = Field(DEFAULT_TTL, ge=60, le=1_209_600)
    delay: int = Field(0, ge=0, le=900)


class MessagesPost(BaseModel):
    """`POST .../messages` body."""

    model_config = ConfigDict(extra="forbid")

    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=10)]


def _client_id(request: Request) -> str:
    value = request.headers.get("client-id")
    if not value:
        raise bad_request("The Client-ID header is required.", style="zaqar")
    try:
        return str(uuid.UUID(value))
    except ValueError as exc:
        raise bad_request("Malformed Client-ID: must be a UUID.", style="zaqar") from exc


def _queue(state: SimState, name: str, *, create: bool) -> deque[QueuedMessage] | None:
    if not _valid_name(name):
        raise bad_request(
            "Queue names may not be more than 64 characters long and may only contain "
            "ASCII letters, digits, underscores and dashes.",
            style="zaqar",
        )
    if create:
        return state.queues.setdefault(name, deque())
    return state.queues.get(name)


def _valid_name(name: str) -> bool:
    return re.fullmatch(QUEUE_NAME, name) is not None


def _visible(message: QueuedMessage, now: float) -> bool:
    return message.created_at <= now < message.created_at + message.ttl


def _message_json(queue: str, message: QueuedMessage, now: float) -> dict[str, Any]:
    return {
        "id": message.id,
        "href": f"/v2/queues/{queue}/messages/{message.id}",
        "ttl": message.ttl,
        "age": int(now - message.created_at),
        "body": message.body,
    }


@router.put("/{queue_name}", status_code=201)
async def create_queue(request: Request, queue_name: str, _: AuthToken) -> Response:
    """Zaqar queue create: 201 when new, 204 when it existed."""
    _client_id(request)
    state = state_of(request)
    existed = queue_name in state.queues
    _queue(state, queue_name, create=True)
    return Response(status_code=204 if existed else 201)


@router.post("/{queue_name}/messages", status_code=201)
async def post_messages(request: Request, queue_name: str, _: AuthToken) -> Response:
    """Zaqar post: the queue is created on first use; 201 with the message hrefs."""
    client_id = _client_id(request)
    state = state_of(request)
    queue = _queue(state, queue_name, create=True)
    assert queue is not None
    body = await read_body(request, MessagesPost, style="zaqar")
    now, resources = state.now(), []
    while queue and queue[0].created_at + queue[0].ttl <= now:
        queue.popleft()  # expired; later ones may expire sooner but are filtered on read
    for item in body.messages:
        state.message_seq += 1
        message = QueuedMessage(
            seq=state.message_seq,
            id=secrets.token_hex(12),
            body=item.body,
            ttl=item.ttl,
            client_id=client_id,
            created_at=now + item.delay,
        )
        queue.append(message)
        resources.append(f"/v2/queues/{queue_name}/messages/{message.id}")
    return JSONResponse({"resources": resources}, status_code=201)


@router.get("/{queue_name}/messages")
async def list_messages(request: Request, queue_name: str, _: AuthToken) -> Response:
    """Zaqar list: oldest first, `echo` includes this client's own messages."""
    client_id = _client_id(request)
    state = state_of(request)
    params = request.query_params
    echo = params.get("echo", "false").lower() == "true"
    limit = _int_param(params.get("limit"), "limit", default=10, low=1, high=20)
    marker = _int_param(params.get("marker"), "marker", default=0, low=0, high=2**62)
    queue = _queue(state, queue_name, create=False) or deque()
    now = state.now()
    page = [
        m
        for m in queue
        if m.seq > marker and _visible(m, now) and (echo or m.client_id != client_id)
    ][:limit]
    messages = [_message_json(queue_name, m, now) for m in page]
    links = []
    if page:
        href = f"/v2/queues/{queue_name}/messages?marker={page[-1].seq}&limit={limit}"
        links.append({"rel": "next", "href": href + f"&echo={str(echo).lower()}"})
    return JSONResponse({"messages": messages, "links": links})


@router.delete("/{queue_name}/messages/{message_id}", status_code=204)
async def delete_message(
    request: Request, queue_name: str, message_id: str, _: AuthToken
) -> Response:
    """Zaqar message delete (idempotent, like Zaqar)."""
    _client_id(request)
    queue = _queue(state_of(request), queue_name, create=False)
    if queue is not None:
        for message in list(queue):
            if message.id == message_id:
                queue.remove(message)
    return Response(status_code=204)


def _int_param(raw: str | None, name: str, *, default: int, low: int, high: int) -> int:
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise bad_request(f"The value of {name} must be an integer.", style="zaqar") from exc
    if not low <= value <= high:
        raise SimError(400, f"The value of {name} must be between {low} and {high}.", style="zaqar")
    return value
