"""Pieces every request schema shares."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema


class StrictModel(BaseModel):
    """Request bodies: unknown keys are a 400, strings are trimmed."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ErrorDetail(BaseModel):
    """The inside of an error body."""

    code: int
    title: str
    message: str
    #: The OpenStack exception class (`BadRequest`, `ResourceNotFound`, `ActionInProgress`…).
    type: str
    #: Heat's key; Warden never sends a traceback.
    traceback: None = None


class ErrorBody(BaseModel):
    """`{"error": {...}}` as every failure answers, with Heat's and Senlin's outer keys."""

    code: int
    title: str
    explanation: str
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 503)
}


#: Keys of a metadata map (Senlin's are the user's own; 64 keeps a record small).
METADATA_KEYS = 64


def _null_is_empty(value: object) -> object:
    return {} if value is None else value


#: A Senlin metadata map: any JSON values, as its `JsonField` takes; null (what
#: senlinclient sends when none is given) is {}.
Metadata = Annotated[
    dict[str, Any],
    BeforeValidator(_null_is_empty),
    Field(max_length=METADATA_KEYS),
    WithJsonSchema(
        {"anyOf": [{"type": "object", "maxProperties": METADATA_KEYS}, {"type": "null"}]}
    ),
]
