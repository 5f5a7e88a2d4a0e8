"""The one error table: every domain error has an HTTP status; types round-trip."""

from __future__ import annotations

import pytest

from api.errors import status_of
from domain import errors as e


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (e.InvalidRequest("x"), 400),
        (e.Unauthenticated("x"), 401),
        (e.Forbidden("x"), 403),
        (e.NotFound("x"), 404),
        (e.BackendNotFound("x"), 404),
        (e.Conflict("x"), 409),
        (e.BackendConflict("x"), 409),
        (e.PayloadTooLarge("x"), 413),
        (e.BackendError("x"), 502),
        (e.BackendUnavailable("x"), 503),
        (e.TemporalUnavailable("x"), 503),
    ],
)
def test_every_domain_error_maps_to_its_http_status(error: e.WardenError, code: int) -> None:
    assert status_of(error)[0] == code


def test_error_type_names_round_trip_through_temporal() -> None:
    rebuilt = e.error_from_type("Conflict", "Cluster web is locked")
    assert isinstance(rebuilt, e.Conflict)
    assert rebuilt.message == "Cluster web is locked"


def test_unknown_error_type_becomes_backend_error_not_a_500() -> None:
    assert status_of(e.error_from_type("KeyError", "boom"))[0] == 502


def test_only_transient_errors_are_retryable() -> None:
    assert e.BackendUnavailable("x").retryable
    assert not e.BackendConflict("x").retryable
