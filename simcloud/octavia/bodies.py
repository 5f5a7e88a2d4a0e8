"""Request bodies the way Octavia's WSME types read them, and the field types they use.

A body is `{"loadbalancer": {...}}` (one key, the resource); an unknown attribute is
WSME's `UnknownAttribute` ("Unknown attribute for argument listener: color") and a bad
value its `InvalidInput` ("Invalid input for field/attribute protocol_port. Value:
'0'. Value should be greater or equal to 1"), both 400. Integers stay lax because
WSME converts `"80"` (the api-ref samples send strings).
"""

from __future__ import annotations

import copy
import ipaddress
import json
import re
import uuid
from dataclasses import fields
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Request
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr, ValidationError
from pydantic_core import ErrorDetails

from simcloud.errors import SimError
from simcloud.octavia.exceptions import fault
from simcloud.octavia.state import OctaviaRecord

ModelT = TypeVar("ModelT", bound=BaseModel)


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError("Value should be UUID format") from None


def _ip_address(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError("Value should be IPv4 or IPv6 format") from None


def _cidr(value: str) -> str:
    try:
        return ipaddress.ip_network(value, strict=False).with_prefixlen
    except ValueError:
        raise ValueError("Value should be IPv4 or IPv6 CIDR format") from None


def _url_path(value: str) -> str:
    if not re.fullmatch(r"/[^\s?#]*", value):
        raise ValueError("Value must be a valid URL Path string")
    return value


Uuid = Annotated[StrictStr, AfterValidator(_uuid)]
IpAddress = Annotated[StrictStr, AfterValidator(_ip_address)]
Cidr = Annotated[StrictStr, AfterValidator(_cidr)]
UrlPath = Annotated[StrictStr, AfterValidator(_url_path)]
Name = Annotated[StrictStr, Field(max_length=255)]
Description = Annotated[StrictStr, Field(max_length=255)]
Reference = Annotated[StrictStr, Field(max_length=255)]
Tags = list[Annotated[StrictStr, Field(max_length=255)]]
Port = Annotated[int, Field(ge=1, le=65535)]
#: Listener timeouts, in milliseconds (at most 24 days).
Timeout = Annotated[int, Field(ge=0, le=24 * 24 * 60 * 60 * 1000)]
Alpn = Literal["h2", "http/1.1", "http/1.0"]
TlsVersion = Annotated[StrictStr, Field(max_length=32)]
Ciphers = Annotated[StrictStr, Field(max_length=2048)]
#: Octavia's defaults for TLS-enabled listeners and pools (`[api_settings]`).
DEFAULT_CIPHERS = (
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305"
)
DEFAULT_TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")
DEFAULT_ALPN = ("h2", "http/1.1", "http/1.0")


CookieName = Annotated[StrictStr, Field(max_length=255, pattern=r"^[^\s,;\\]+$")]


class SessionPersistenceUpdate(BaseModel):
    """`session_persistence` in an update (its type defaults to the current one)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE"] | None = None
    cookie_name: CookieName | None = None
    persistence_timeout: int | None = None
    persistence_granularity: IpAddress | None = None


class SessionPersistence(SessionPersistenceUpdate):
    """`session_persistence` in a create."""

    type: Literal["SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE"]


async def read_body(request: Request, resource: str, model: type[ModelT]) -> ModelT:
    """The `{resource: {...}}` body as `model`; Octavia's 400 when it does not fit."""
    raw = await request.body()
    try:
        document = json.loads(raw) if raw else None
    except ValueError as exc:
        raise SimError(400, "Malformed request body", style="octavia") from exc
    if not isinstance(document, dict):
        raise fault("InvalidInput", field=resource, value=document, msg="Invalid data")
    extra = sorted(key for key in document if key != resource)
    if extra:
        raise _unknown(resource, extra)
    item = document.get(resource)
    if not isinstance(item, dict):
        raise fault("InvalidInput", field=resource, value=item, msg="Mandatory field missing.")
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        raise _invalid(resource, exc.errors()) from exc


def _unknown(argument: str, attributes: list[str]) -> SimError:
    name = "UnknownAttribute"
    if len(attributes) > 1:
        # WSME's plural wording for several unknown attributes
        error = fault(name, argument=argument, attributes=", ".join(attributes))
        error.message = error.message.replace("Unknown attribute ", "Unknown attributes ")
        return error
    return fault(name, argument=argument, attributes=attributes[0])


def _invalid(resource: str, errors: list[ErrorDetails]) -> SimError:
    first = errors[0]
    loc = [str(part) for part in first["loc"] if isinstance(part, str)]
    if first["type"] == "extra_forbidden":
        # WSME names every unknown attribute of the object at once
        parent = first["loc"][:-1]
        extra = [
            str(e["loc"][-1])
            for e in errors
            if e["type"] == "extra_forbidden" and e["loc"][:-1] == parent
        ]
        return _unknown(".".join([resource, *loc[:-1]]), extra)
    field = loc[-1] if loc else resource
    if first["type"] == "missing":
        return fault("InvalidInput", field=field, value=None, msg="Mandatory field missing.")
    return fault("InvalidInput", field=field, value=first.get("input"), msg=reason(first))


def reason(error: ErrorDetails) -> str:
    """WSME's explanation of the problem pydantic found."""
    kind, ctx = error["type"], error.get("ctx", {})
    messages = {
        "literal_error": f"Value should be one of: {_choices(str(ctx.get('expected', '')))}",
        "greater_than_equal": f"Value should be greater or equal to {ctx.get('ge')}",
        "less_than_equal": f"Value should be lower or equal to {ctx.get('le')}",
        "string_too_long": (
            f"Value should have a maximum character requirement of {ctx.get('max_length')}"
        ),
        "string_too_short": (
            f"Value should have a minimum character requirement of {ctx.get('min_length')}"
        ),
        "string_pattern_mismatch": f"Value should match the pattern {ctx.get('pattern')}",
        "int_parsing": "Value should be an integer",
        "int_type": "Value should be an integer",
        "int_from_float": "Value should be an integer",
        "bool_type": "Value should be a boolean",
        "bool_parsing": "Value should be a boolean",
        "string_type": "Value should be a string",
        "list_type": "Value should be a list",
        "dict_type": "Value should be a dictionary",
        "model_type": "Value should be a dictionary",
    }
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return messages.get(kind, error["msg"])


def _choices(expected: str) -> str:
    """pydantic's `'a', 'b' or 'c'` as WSME's `a, b, c`."""
    return ", ".join(part.strip("'") for part in re.split(r", | or ", expected))


def changes_of(body: BaseModel) -> dict[str, Any]:
    """The attributes a PUT body sets (null included), by API name."""
    return {key: getattr(body, key) for key in body.model_fields_set}


def apply_changes(record: OctaviaRecord, changes: dict[str, Any]) -> None:
    """Set attributes on a record: its own fields, else its shown-as-given ones."""
    own = {f.name for f in fields(record)}
    for key, value in changes.items():
        # Copies: defaults and request bodies must never be shared with a record.
        if key in own:
            setattr(record, key, copy.deepcopy(value))
        else:
            record.attributes[key] = copy.deepcopy(value)
