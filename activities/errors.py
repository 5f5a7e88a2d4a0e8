"""Domain errors as Temporal sees them, translated in this one place."""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from domain.errors import WardenError


def application_error(error: WardenError) -> ApplicationError:
    """The error for Temporal: retried only when the domain calls it retryable."""
    return ApplicationError(
        error.message, type=type(error).__name__, non_retryable=not error.retryable
    )
