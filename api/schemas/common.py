"""Pieces every request schema shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Request bodies: unknown keys are a 400, strings are trimmed."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ErrorDetail(BaseModel):
    """The inside of an error body."""

    code: int
    title: str
    message: str


class ErrorBody(BaseModel):
    """`{"error": {...}}` as every failure answers."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 503)
}
