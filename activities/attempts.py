"""What an activity knows of its own attempts, outside an activity too (tests)."""

from __future__ import annotations

from datetime import datetime

from temporalio import activity


def attempt() -> int:
    """This attempt's number (1 for the first, and outside an activity)."""
    return activity.info().attempt if activity.in_activity() else 1


def retry_since() -> datetime | None:
    """On a retry, when the activity was first scheduled; None on the first attempt.

    What an earlier attempt made was made after this, which bounds the search for a
    create whose answer was lost.
    """
    if attempt() == 1:
        return None
    return activity.info().scheduled_time
