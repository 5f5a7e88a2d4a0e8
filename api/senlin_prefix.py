"""Senlin's clustering API as OpenStack clients reach it: the `/cluster` prefix and microversions.

Heat owns the API root, so clients find Senlin where devstack puts it: at
`<api>/cluster` (the Keystone catalog's `clustering` endpoint). Requests under
`/cluster/v1/...` are served by the same routes as `/v1/...`, with `/cluster` moved to
the ASGI `root_path` so links and `Location` headers keep the prefix.
"""

from __future__ import annotations

import re

from fastapi import FastAPI
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import CLUSTERING_PATH, error_response, status_of
from api.routers import clustering as clustering_routes
from api.routers.clustering import MAX_API_VERSION, MIN_API_VERSION
from domain.errors import InvalidRequest, NotAcceptable, WardenError

#: Where the clustering API is also served (devstack's path for Senlin).
CLUSTERING_PREFIX = "/cluster"
API_VERSION_HEADER = "OpenStack-API-Version"
SERVICE_TYPE = "clustering"

_V1_DOCUMENT_PATH = re.compile(rf"^{CLUSTERING_PREFIX}/v1/?$")
_VERSION = re.compile(r"^([1-9]\d*)\.([1-9]\d*|0)$")


def parse_version(text: str) -> tuple[int, int] | None:
    """`"1.14"` → `(1, 14)`; None unless `major.minor` as Senlin spells it."""
    match = _VERSION.match(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


#: Microversions served: up to Senlin's last (the CLI asks for 1.14 on every call).
MIN_VERSION = parse_version(MIN_API_VERSION) or (1, 0)
MAX_VERSION = parse_version(MAX_API_VERSION) or (1, 0)


def requested_version(headers: Headers) -> tuple[int, int]:
    """The clustering microversion a request asks for (Senlin's rules).

    No header means 1.0 and `latest` the newest served; a malformed version is a 400
    and one outside the served range a 406.
    """
    asked = None
    for value in headers.getlist(API_VERSION_HEADER):
        for item in value.split(","):
            service, _, wanted = item.strip().partition(" ")
            if service.lower() == SERVICE_TYPE:
                asked = wanted.strip()
    if asked is None:
        return MIN_VERSION
    if asked.lower() == "latest":
        return MAX_VERSION
    version = parse_version(asked)
    if version is None:
        raise InvalidRequest(
            f"API Version String '{asked}' is of invalid format. It must be of format "
            "'major.minor'."
        )
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptable(
            f"Version '{asked}' is not supported by the API. Minimum is "
            f"'{MIN_API_VERSION}' and maximum is '{MAX_API_VERSION}'."
        )
    return version


def _route_path(scope: Scope) -> str:
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class ClusteringApi:
    """ASGI middleware: serves `/cluster/v1/...` as `/v1/...` and negotiates microversions.

    Only Senlin's resources move under the prefix; anything else below `/cluster` is
    left for the router (and so answers 404).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = _route_path(scope)
        unprefixed = path.removeprefix(CLUSTERING_PREFIX)
        if unprefixed != path and CLUSTERING_PATH.match(unprefixed):
            scope = {**scope, "root_path": scope.get("root_path", "") + CLUSTERING_PREFIX}
        elif not (CLUSTERING_PATH.match(path) or _V1_DOCUMENT_PATH.match(path)):
            await self.app(scope, receive, send)
            return
        try:
            version = requested_version(Headers(scope=scope))
        except WardenError as err:
            code, title = status_of(err)
            await error_response(code, title, err.message, err.openstack_type)(scope, receive, send)
            return
        answer = f"{SERVICE_TYPE} {version[0]}.{version[1]}"
        scope = _json_by_default(scope)

        async def send_with_version(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers[API_VERSION_HEADER] = answer
                headers.add_vary_header(API_VERSION_HEADER)
            await send(message)

        await self.app(scope, receive, send_with_version)


def _json_by_default(scope: Scope) -> Scope:
    """A body without a `Content-Type` is JSON, as Senlin reads every body (tempest's
    clustering client sends `validate` with only its microversion header)."""
    headers = Headers(scope=scope)
    if scope.get("method") in ("POST", "PUT", "PATCH") and "content-type" not in headers:
        raw = [*scope.get("headers", []), (b"content-type", b"application/json")]
        return {**scope, "headers": raw}
    return scope


def install_clustering(app: FastAPI) -> None:
    """Serve Senlin's version documents and its API below `/cluster` too."""
    app.include_router(clustering_routes.router)
    app.add_middleware(ClusteringApi)


def require_version(headers: Headers, minimum: tuple[int, int]) -> None:
    """Senlin's 400 for a method newer than the microversion the request asks for."""
    asked = requested_version(headers)
    if asked < minimum:
        raise InvalidRequest(
            f"API version '{asked[0]}.{asked[1]}' is not supported on this method."
        )
