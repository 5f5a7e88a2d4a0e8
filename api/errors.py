"""The one table from domain errors to HTTP, and handlers that never leak a traceback."""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from domain import errors as e

logger = logging.getLogger(__name__)

#: Paths of Senlin's clustering API (also served under `/cluster`).
CLUSTERING_PATH = re.compile(
    r"^(/cluster)?/v1/(clusters|nodes|profiles|policies|actions|events|profile-types"
    r"|policy-types|build-info|receivers|webhooks|services)(/|$)"
)

#: Most specific class first: the first match wins.
HTTP_STATUS: list[tuple[type[e.WardenError], int, str]] = [
    (e.InvalidRequest, 400, "Bad Request"),
    (e.Unauthenticated, 401, "Unauthorized"),
    (e.Forbidden, 403, "Forbidden"),
    (e.BackendNotFound, 404, "Not Found"),
    (e.NotFound, 404, "Not Found"),
    (e.BackendConflict, 409, "Conflict"),
    (e.Conflict, 409, "Conflict"),
    (e.NotAcceptable, 406, "Not Acceptable"),
    (e.PayloadTooLarge, 413, "Request Entity Too Large"),
    (e.BackendUnavailable, 503, "Service Unavailable"),
    (e.TemporalUnavailable, 503, "Service Unavailable"),
    (e.BackendError, 502, "Bad Gateway"),
    (e.WardenError, 500, "Internal Server Error"),
]


def _reason(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Error"


#: webob's `explanation` of each status, which Heat's and Senlin's bodies carry.
EXPLANATIONS: dict[int, str] = {
    400: "The server could not comply with the request since it is either malformed "
    "or otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document "
    "you requested. Either you supplied the wrong credentials (e.g., bad password), or "
    "your browser does not understand how to supply the credentials required.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    405: "The method is not allowed for this resource.",
    406: "The resource could not be generated that was acceptable to your browser.",
    409: "There was a conflict when trying to complete your request.",
    413: "The request is larger than the server is willing or able to process.",
    500: "The server has either erred or is incapable of performing the requested operation.",
    502: "Bad gateway.",
    503: "The server is currently unavailable. Please try again at a later time.",
}
#: `error.type` of a status no domain error names (a 405 from the router, a 422…).
HTTP_TYPES: dict[int, str] = {
    400: "BadRequest",
    401: "NotAuthenticated",
    403: "Forbidden",
    404: "ResourceNotFound",
    405: "HTTPMethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    413: "RequestEntityTooLarge",
}


def error_body(code: int, title: str, message: str, kind: str | None = None) -> dict[str, Any]:
    """The JSON error body (docs/api-contract.md §Errors).

    One body serves Warden's contract (`error.code/title/message`), Heat's
    (`explanation`, `code`, `title`, `error.message/type/traceback`) and Senlin's
    (`error.code`), so every client reads it as its own service's.
    """
    return {
        "code": code,
        "title": title,
        "explanation": EXPLANATIONS.get(code, title),
        "error": {
            "code": code,
            "title": title,
            "message": message,
            "type": kind or HTTP_TYPES.get(code, "InternalError"),
            "traceback": None,
        },
    }


def status_of(error: e.WardenError) -> tuple[int, str]:
    """HTTP status and title of a domain error."""
    for cls, code, title in HTTP_STATUS:
        if isinstance(error, cls):
            return code, title
    return 500, "Internal Server Error"


def error_response(
    code: int, title: str, message: str, kind: str | None = None, **headers: str
) -> JSONResponse:
    """A JSON error response."""
    body = error_body(code, title, message, kind)
    return JSONResponse(body, status_code=code, headers=headers or None)


def describe_validation(exc: RequestValidationError) -> str:
    """One readable sentence naming every offending field."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body",))
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            parts.append(f"Unknown key '{loc}'" if loc else "Unknown key")
        elif kind == "json_invalid":
            parts.append("Malformed JSON body")
        elif kind == "missing":
            parts.append(
                f"Missing required field '{loc}'"
                if loc
                else "Missing request body (send JSON with Content-Type: application/json)"
            )
        else:
            msg = err.get("msg", "invalid value")
            if not loc and kind in ("dict_type", "model_attributes_type"):
                msg = f"{msg} (is the body JSON with Content-Type: application/json?)"
            parts.append(f"Invalid value for '{loc}': {msg}" if loc else str(msg))
    return "; ".join(parts) or "Invalid request"


def describe_for_senlin(exc: RequestValidationError, method: str) -> str | None:
    """Senlin's sentence for the first problem of a clustering request body, where it
    has its own (`senlin.api.common.util.parse_request` and jsonschema's words); None
    for the rest, which keep Warden's."""
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p != "body"]
        kind = err.get("type", "")
        if kind == "missing" and len(loc) == 1:
            if method == "PATCH":
                return f"Malformed request data, missing '{loc[0]}' key in request body."
            return f"Request body missing '{loc[0]}' key."
        if kind == "missing" and loc:
            return f"'{loc[-1]}' is a required property"
        if kind == "extra_forbidden" and len(loc) > 1:
            return f"Additional properties are not allowed ('{loc[-1]}' was unexpected)"
    return None


#: Methods a 405's `Allow` header may name.
METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> str:
    """Every method some route serves at the request's path, for a 405's `Allow` header.

    The router answers 405 from the first route whose path matches, naming only that
    route's methods; RFC 9110 wants all of the resource's. A literal path
    (`/v1/profiles/validate`) is its own resource, not an instance of the template beside
    it (`/v1/profiles/{profile_id}`): its methods are those the OpenAPI document gives it.
    """
    path = request.scope["path"].removeprefix(request.scope.get("root_path", ""))
    documented = request.app.openapi().get("paths", {}).get(path)
    if documented:
        return ", ".join(m for m in METHODS if m.lower() in documented)
    return ", ".join(
        method
        for method in METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL
            for route in request.app.router.routes
        )
    )


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every failure into the JSON error body."""

    @app.exception_handler(e.WardenError)
    async def _warden(_: Request, exc: e.WardenError) -> JSONResponse:
        code, title = status_of(exc)
        if code >= 500:
            logger.warning("request failed: %s: %s", type(exc).__name__, exc.message)
        return error_response(code, title, exc.message, exc.openstack_type)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        message = None
        if CLUSTERING_PATH.match(request.url.path):
            message = describe_for_senlin(exc, request.method)
        return error_response(400, "Bad Request", message or describe_validation(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = _reason(exc.status_code)
        headers = dict(exc.headers or {})
        if exc.status_code == HTTPStatus.METHOD_NOT_ALLOWED:
            headers["Allow"] = allowed_methods(request)
        return error_response(exc.status_code, title, str(exc.detail), **headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "Internal Server Error", "An unexpected error occurred.")
