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

    def __init__(
        self, status: int, message: str, *, style: str = "nova", error_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.style = style
        #: The exception class name a service puts in its body (Neutron's `type`).
        self.error_type = error_type


def bad_request(message: str, *, style: str = "nova") -> SimError:
    """A 400 in the given service's format."""
    return SimError(400, message, style=style)


#: Neutron's exception type by HTTP status, when the raiser names none.
NEUTRON_TYPES = {
    400: "BadRequest",
    401: "NotAuthorized",
    403: "PolicyNotAuthorized",
    404: "NotFound",
    409: "Conflict",
    503: "ServiceUnavailable",
}
#: webob's status titles (Glance's error bodies).
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    413: "Request Entity Too Large",
}


def error_body(
    status: int, message: str, style: str, error_type: str | None = None
) -> dict[str, Any]:
    """The JSON body a real service answers for `status`."""
    if style == "neutron":
        kind = error_type or NEUTRON_TYPES.get(status, "NeutronException")
        return {"NeutronError": {"type": kind, "message": message, "detail": ""}}
    if style == "glance":
        title = TITLES.get(status, "Error")
        return {"code": status, "title": title, "message": message}
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
        ("/networking", "neutron"),
        ("/image", "glance"),
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
        body = error_body(exc.status, exc.message, exc.style, exc.error_type)
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
