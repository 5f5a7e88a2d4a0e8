"""Request bodies the way Neutron's API layer reads them, and the field types they use.

`neutron.api.v2.base.Controller.prepare_request_body` rejects a missing resource key,
unknown attributes ("Unrecognized attribute(s) 'foo'"), read-only ones and bad
values ("Invalid input for mtu. Reason: ..."), all as webob's `HTTPBadRequest`. The
models here forbid unknown keys; this module turns pydantic's complaints into those
sentences. Booleans and integers stay lax because Neutron converts `"true"` and `"80"`.
"""

from __future__ import annotations

import ipaddress
import json
import re
import uuid
from typing import Annotated, Any, TypeVar

from fastapi import Request
from pydantic import AfterValidator, BaseModel, Field, StrictStr, ValidationError
from pydantic_core import ErrorDetails

from simcloud.network.exceptions import http_bad_request

ModelT = TypeVar("ModelT", bound=BaseModel)

#: Attributes every resource shows but no request may set.
READ_ONLY = frozenset({"id", "status", "created_at", "updated_at", "revision_number"})
OWNER_KEYS = ("project_id", "tenant_id")
MAX_TAGS = 50


def _uuid(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError:
        raise ValueError(f"'{value}' is not a valid UUID") from None
    return value


def _ip_address(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError(f"'{value}' is not a valid IP address") from None


def _ip_or_cidr(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    try:
        return str(ipaddress.ip_network(value, strict=False))
    except ValueError:
        raise ValueError(
            f"'{value}' is neither a valid IP address, nor is it a valid IP subnet"
        ) from None


def _mac(value: str) -> str:
    # Neutron validates with netaddr, which takes `00-00-00-00-bb-bb` too; it stores
    # the colon form.
    parts = value.replace("-", ":").split(":")
    if len(parts) != 6 or not all(len(p) == 2 and _is_hex(p) for p in parts):
        raise ValueError(f"'{value}' is not a valid MAC address")
    return ":".join(parts).lower()


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


def _unique(values: list[str]) -> list[str]:
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise ValueError(f"Duplicate items in the list: '{', '.join(duplicates)}'")
    return values


Uuid = Annotated[StrictStr, AfterValidator(_uuid)]
Name = Annotated[StrictStr, Field(max_length=255)]
Description = Annotated[StrictStr, Field(max_length=255)]
IpAddress = Annotated[StrictStr, AfterValidator(_ip_address)]
IpOrCidr = Annotated[StrictStr, AfterValidator(_ip_or_cidr)]
MacAddress = Annotated[StrictStr, AfterValidator(_mac)]
DeviceText = Annotated[StrictStr, Field(max_length=255)]
Tags = Annotated[
    list[Annotated[StrictStr, Field(min_length=1, max_length=255)]],
    Field(max_length=MAX_TAGS),
    AfterValidator(_unique),
]


async def read_json(request: Request) -> Any:
    """The request's JSON document; "Body contains invalid data" when it is none."""
    raw = await request.body()
    try:
        return json.loads(raw) if raw else None
    except ValueError as exc:
        raise http_bad_request("Body contains invalid data") from exc


async def read_create(
    request: Request,
    resource: str,
    model: type[ModelT],
    project_id: str,
    *,
    read_only: frozenset[str] = READ_ONLY,
) -> ModelT:
    """A POST body's `{resource: {...}}`, its defaults filled by `model`.

    `project_id`/`tenant_id` may be given but must name the caller's project, as for
    any Neutron user who is not an admin.
    """
    item = _resource_of(await read_json(request), resource)
    for key in OWNER_KEYS:
        given = item.pop(key, project_id)
        if given != project_id:
            raise http_bad_request(
                "Specifying 'project_id' other than the authenticated project in "
                "request is not allowed for the current user."
            )
    fields = _fields(model)
    refused = "Attribute '{}' not allowed in POST"
    # Every tagged resource shows `tags`; before `tag-creation` covers it, a POST
    # may not set them (Neutron 29: only ports may).
    _check_keys(item, known=fields | read_only | {"tags"}, allowed=fields, refused=refused)
    return _validate(model, item)


async def read_update(
    request: Request,
    resource: str,
    model: type[ModelT],
    created_by: type[BaseModel],
    record: dict[str, Any],
) -> ModelT:
    """A PUT body's `{resource: {...}}`; only the keys given are set on the model.

    A key the record shows but `model` lacks is read-only rather than unknown.
    """
    item = _resource_of(await read_json(request), resource)
    fields = _fields(model)
    known = fields | _fields(created_by) | set(record) | READ_ONLY
    refused = "Cannot update read-only attribute {}"
    _check_keys(item, known=known, allowed=fields, refused=refused)
    return _validate(model, item)


def _resource_of(body: Any, resource: str) -> dict[str, Any]:
    if not body:
        raise http_bad_request("Resource body required")
    if not isinstance(body, dict):
        raise http_bad_request("Body contains invalid data")
    item = body.get(resource)
    if item is None:
        raise http_bad_request(f"Unable to find '{resource}' in request body")
    if not isinstance(item, dict):
        raise http_bad_request(f"Object '{resource}' contains invalid data")
    return dict(item)


def _fields(model: type[BaseModel]) -> set[str]:
    return {info.alias or name for name, info in model.model_fields.items()}


def _check_keys(item: dict[str, Any], *, known: set[str], allowed: set[str], refused: str) -> None:
    unknown = [key for key in item if key not in known]
    if unknown:
        raise http_bad_request(f"Unrecognized attribute(s) '{', '.join(unknown)}'")
    for key in item:
        if key not in allowed:
            raise http_bad_request(refused.format(key))


def _validate(model: type[ModelT], item: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        raise http_bad_request(describe(exc.errors()[0])) from exc


def _listed(expected: str) -> str:
    """pydantic's `'a', 'b' or 'c'` as the Python list Neutron prints."""
    return "[" + ", ".join(re.split(r", | or ", expected)) + "]"


def describe(error: ErrorDetails) -> str:
    """Neutron's sentence for one pydantic error: the attribute and the reason."""
    loc = error["loc"]
    attr = str(loc[0]) if loc else "body"
    if error["type"] == "missing" and len(loc) == 1:
        return f"Failed to parse request. Required attribute '{attr}' not specified"
    return f"Invalid input for {attr}. Reason: {reason(error)}."


def reason(error: ErrorDetails) -> str:
    """neutron_lib's validator message for the problem pydantic found."""
    kind, data, ctx = error["type"], error.get("input"), error.get("ctx", {})
    messages = {
        "string_type": f"'{data}' is not a valid string",
        "string_too_long": f"'{data}' exceeds maximum length of {ctx.get('max_length')}",
        "string_too_short": f"'{data}' Blank strings are not permitted",
        "bool_type": f"'{data}' cannot be converted to boolean",
        "bool_parsing": f"'{data}' cannot be converted to boolean",
        "int_type": f"'{data}' is not an integer",
        "int_parsing": f"'{data}' is not an integer",
        "int_from_float": f"'{data}' is not an integer",
        "greater_than_equal": f"'{data}' is too small - must be at least '{ctx.get('ge')}'",
        "less_than_equal": f"'{data}' is too large - must be no larger than '{ctx.get('le')}'",
        "list_type": f"'{data}' is not a list",
        "too_long": f"'{data}' exceeds the limit of {ctx.get('max_length')} items",
        "dict_type": f"'{data}' is not a dictionary",
        "model_type": f"'{data}' is not a dictionary",
        "literal_error": f"{data} is not in {_listed(str(ctx.get('expected', '')))}",
        "extra_forbidden": f"Unexpected keys supplied: {error['loc'][-1]}",
        "missing": f"Validation of dictionary's keys failed. Expected keys: {error['loc'][-1]}",
    }
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return messages.get(kind, error["msg"])
