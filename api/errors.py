"""The one table from domain errors to HTTP, and handlers that never leak a traceback."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from domain import errors as e

logger = logging.getLogger(__name__)

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


def error_body(code: int, title: str, message: str) -> dict[str, Any]:
    """The JSON error body (docs/api-contract.md §Errors)."""
    return {"error": {"code": code, "title": title, "message": message}}


def status_of(error: e.WardenError) -> tuple[int, str]:
    """HTTP status and title of a domain error."""
    for cls, code, title in HTTP_STATUS:
        if isinstance(error, cls):
            return code, title
    return 500, "Internal Server Error"


def error_response(code: int, title: str, message: str, **headers: str) -> JSONResponse:
    """A JSON error response."""
    return JSONResponse(error_body(code, title, message), status_code=code, headers=headers or None)


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


#: Methods a 405's `Allow` header may name.
METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> str:
    """Every method some route serves at the request's path, for a 405's `Allow` header.

    The router answers 405 from the first route whose path matches, naming only that
    route's methods; RFC 9110 wants all of the resource's.
    """
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
        return error_response(code, title, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, "Bad Request", describe_validation(exc))

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
