"""Domain errors as Temporal sees them, translated in this one place."""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from activities.attempts import attempt
from domain.errors import BackendInternalError, WardenError

#: Attempts of an activity whose cloud call keeps answering 500 (about 7 s of Temporal's
#: back-off): Nova's "Unexpected API Error" is a bug or a misconfiguration far more often
#: than a passing fault, and the 20 attempts a 503 gets took 8 minutes per node.
INTERNAL_ERROR_ATTEMPTS = 4


def application_error(error: WardenError) -> ApplicationError:
    """The error for Temporal: retried only when the domain calls it retryable, and a
    500 only for the first `INTERNAL_ERROR_ATTEMPTS` attempts."""
    retryable = error.retryable
    message = error.message
    if isinstance(error, BackendInternalError) and attempt() >= INTERNAL_ERROR_ATTEMPTS:
        retryable = False
        message = f"{message} (attempt {attempt()}: a 500 is not retried further)"
    return ApplicationError(message, type=type(error).__name__, non_retryable=not retryable)
