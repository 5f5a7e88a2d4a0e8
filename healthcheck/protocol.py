"""The sliver of HTTP/1.x the health endpoint needs, so curl, socat and netcat suffice."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit

from healthcheck.manager import HealthManager, HealthResponse

HEALTH_PATH = "/health"
ALLOWED_METHODS = ("GET", "HEAD")
MAX_LINE_BYTES = 8192
MAX_HEADERS = 100
# Bodies are read only to be discarded: closing a socket with unread input makes
# the kernel send a reset that can destroy the response before the client reads it.
MAX_BODY_BYTES = 65536
_METHOD = re.compile(r"[A-Z]+")
_DIGITS = re.compile(r"[0-9]+")


class BadRequestError(Exception):
    """The client sent something that is not an HTTP/1.x request we accept."""


@dataclass(frozen=True, slots=True)
class Request:
    """What the router needs from a request."""

    method: str
    path: str


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """Read the request line, headers and any body; None if the client sent nothing.

    Raises:
        BadRequestError: malformed request line or headers, or oversized input.
    """
    line = await _read_line(reader)
    if not line:
        return None
    parts = line.split(" ")
    if len(parts) != 3 or not _METHOD.fullmatch(parts[0]) or not parts[2].startswith("HTTP/1."):
        raise BadRequestError("malformed request line; expected 'GET /health HTTP/1.1'")
    method, target, _version = parts
    length = await _read_headers(reader)
    if length:
        await reader.readexactly(length)
    return Request(method=method, path=urlsplit(target).path)


async def _read_line(reader: asyncio.StreamReader) -> str:
    try:
        raw = await reader.readline()
    except ValueError:  # StreamReader's limit: the line is longer than MAX_LINE_BYTES
        raise BadRequestError("request line or header too long") from None
    # latin-1 decodes any byte, so garbage reaches the parser instead of crashing it.
    return raw.decode("latin-1").rstrip("\r\n")


async def _read_headers(reader: asyncio.StreamReader) -> int:
    """Consume headers up to the blank line; return Content-Length (0 if absent)."""
    length = 0
    for _ in range(MAX_HEADERS):
        line = await _read_line(reader)
        if not line:
            return length
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise BadRequestError("malformed header line")
        if name.strip().lower() == "content-length":
            if not _DIGITS.fullmatch(value.strip()):
                raise BadRequestError("invalid Content-Length")
            length = int(value.strip())
            if length > MAX_BODY_BYTES:
                raise BadRequestError("request body too large")
    raise BadRequestError("too many headers")


def route(request: Request, manager: HealthManager) -> HealthResponse:
    """Answer `/health` from the manager's cached state; 404/405 otherwise."""
    if request.path != HEALTH_PATH:
        return error_response(HTTPStatus.NOT_FOUND, f"only {HEALTH_PATH} is served here")
    if request.method not in ALLOWED_METHODS:
        response = error_response(HTTPStatus.METHOD_NOT_ALLOWED, "use GET or HEAD")
        response.headers["Allow"] = ", ".join(ALLOWED_METHODS)
        return response
    return manager.response()


def error_response(status: HTTPStatus, message: str) -> HealthResponse:
    """A JSON error in the API's shape: `{"error": {code, title, message}}`."""
    error = {"code": int(status), "title": status.phrase, "message": message}
    body = json.dumps({"error": error}).encode()
    return HealthResponse(int(status), {"Content-Type": "application/json"}, body)


def encode_response(response: HealthResponse, *, include_body: bool = True) -> bytes:
    """Serialise a response; HEAD gets the GET headers (Content-Length too) and no body."""
    status = HTTPStatus(response.status_code)
    headers = {
        **response.headers,
        "Content-Length": str(len(response.body)),
        "Connection": "close",  # one request per connection keeps the server trivial
    }
    lines = [f"HTTP/1.1 {status.value} {status.phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + response.body if include_body else head
