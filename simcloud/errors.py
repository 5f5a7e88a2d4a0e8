"""Error bodies in each OpenStack service's own shape, and strict body parsing."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

ModelT = TypeVar("ModelT", bound=BaseModel)

#: Nova's fault names by HTTP status.
NOVA_FAULTS = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    409: "conflictingRequest",
    413: "overLimit",
}


class SimError(Exception):
    """An error answered in the calling service's format (Nova's unless told)."""

    def __init__(self, status: int, message: str, *, style: str = "nova") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.style = style


def bad_request(message: str, *, style: str = "nova") -> SimError:
    """A 400 in the given service's format."""
    return SimError(400, message, style=style)


def error_body(status: int, message: str, style: str) -> dict[str, Any]:
    """The JSON body a real service answers for `status`."""
    if style == "keystone":
        titles = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}
        title = titles.get(status, "Error")
        return {"error": {"code": status, "title": title, "message": message}}
    if style == "zaqar":
        return {"title": NOVA_FAULTS.get(status, "Error"), "description": message}
    if style == "octavia":
        return {"faultcode": "Client" if status < 500 else "Server", "faultstring": message}
    fault = NOVA_FAULTS.get(status, "computeFault")
    return {fault: {"code": status, "message": message}}


def style_for(path: str) -> str:
    """Which service's error format a path belongs to."""
    for prefix, style in (
        ("/identity", "keystone"),
        ("/messaging", "zaqar"),
        ("/load-balancer", "octavia"),
    ):
        if path.startswith(prefix):
            return style
    return "nova"


async def read_body(request: Request, model: type[ModelT], *, style: str = "nova") -> ModelT:
    """Parse the JSON body into `model`, answering 400 like the service would."""
    raw = await request.body()
    try:
        data = json.loads(raw) if raw else None
    except ValueError as exc:
        raise bad_request("Malformed request body", style=style) from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise bad_request(describe(exc), style=style) from exc


def describe(exc: ValidationError) -> str:
    """A short, Nova-like description of the first validation problem."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return f"Invalid input for field/attribute {where}. {first['msg']}"


def install_error_handlers(app: FastAPI) -> None:
    """Answer SimError and FastAPI's own validation errors in OpenStack shapes."""

    async def on_sim_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SimError)
        headers = {}
        if exc.status == 401:
            headers["WWW-Authenticate"] = 'Keystone uri="/identity/v3"'
        body = error_body(exc.status, exc.message, exc.style)
        return JSONResponse(body, status_code=exc.status, headers=headers)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid"}
        where = ".".join(str(p) for p in first["loc"])
        message = f"Invalid input for query parameter {where}: {first['msg']}"
        style = style_for(request.url.path)
        return JSONResponse(error_body(400, message, style), status_code=400)

    app.add_exception_handler(SimError, on_sim_error)
    app.add_exception_handler(RequestValidationError, on_validation)
