"""The one place where HTTP outcomes of cloud calls become domain errors.

| outcome                                   | raised                 | retryable |
|-------------------------------------------|------------------------|-----------|
| 404                                       | BackendNotFound        | no        |
| 409                                       | BackendConflict        | no        |
| 409 "… is immutable" (Octavia, pending)   | BackendUnavailable     | yes       |
| 400                                       | InvalidRequest         | no        |
| 500                                       | BackendInternalError   | a few     |
| 408, 429, other 5xx, timeout, no route    | BackendUnavailable     | yes       |
| other 4xx (401 after re-auth, 403, 413)   | BackendError           | no        |
| a 2xx whose body is not the expected JSON | BackendError           | no        |

httpx exceptions never escape: callers only see `domain.errors`.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from domain.errors import (
    BackendConflict,
    BackendError,
    BackendInternalError,
    BackendNotFound,
    BackendUnavailable,
    InvalidRequest,
    WardenError,
)

#: 4xx answers that say "later", not "never".
RETRYABLE_4XX = frozenset({408, 429})
MAX_DETAIL = 300


def backend_message(response: httpx.Response) -> str:
    """The human message inside an OpenStack error body, whatever the service."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        return response.text[:MAX_DETAIL].strip()
    if isinstance(body, dict):
        wrapped = body.get("error")
        if isinstance(wrapped, dict) and isinstance(wrapped.get("message"), str):
            # Heat, Senlin and Keystone: {"error": {"message": ...}, "title": ...}
            return str(wrapped["message"])[:MAX_DETAIL]
        for key in ("description", "faultstring", "message", "title"):
            if isinstance(body.get(key), str):
                return str(body[key])[:MAX_DETAIL]
        # Nova and Keystone wrap the error: {"itemNotFound": {"message": ...}}
        for value in body.values():
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return str(value["message"])[:MAX_DETAIL]
    return json.dumps(body)[:MAX_DETAIL]


def error_for_status(status: int, what: str, detail: str) -> WardenError:
    """The domain error for an HTTP error status of call `what`."""
    message = f"{what} failed with HTTP {status}: {detail}" if detail else f"{what}: HTTP {status}"
    if status == 404:
        return BackendNotFound(message)
    if status == 409 and "immutable" in detail:
        # Octavia: the load balancer is PENDING_* while a sibling changes; Heat's
        # `octavia_base` waits it out the same way.
        return BackendUnavailable(message)
    if status == 409:
        return BackendConflict(message)
    if status == 400:
        return InvalidRequest(message)
    if status == 500:
        return BackendInternalError(message)
    if status >= 500 or status in RETRYABLE_4XX:
        return BackendUnavailable(message)
    return BackendError(message)


def raise_for_response(response: httpx.Response, what: str) -> None:
    """Raise the domain error for a non-2xx response; return quietly otherwise."""
    if response.is_success:
        return
    raise error_for_status(response.status_code, what, backend_message(response))


def error_for_transport(exc: Exception, what: str) -> WardenError:
    """The domain error for an httpx failure before a response arrived."""
    kind = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return BackendUnavailable(f"{what} timed out ({kind})")
    if isinstance(exc, httpx.TransportError):
        return BackendUnavailable(f"{what} could not reach the cloud ({kind}: {exc})")
    return BackendError(f"{what} failed ({kind}: {exc})")


def json_body(response: httpx.Response, what: str, key: str | None = None) -> Any:
    """The decoded JSON body (or its `key` member), BackendError when malformed."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        msg = f"{what} answered HTTP {response.status_code} without a JSON body"
        raise BackendError(msg) from None
    if key is None:
        return body
    if not isinstance(body, dict) or key not in body:
        raise BackendError(f"{what} answered without '{key}'")
    return body[key]
