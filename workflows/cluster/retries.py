"""How long cluster workflows wait for the cloud, and how they retry its calls."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

__all__ = ["CLOUD_RETRY", "POLL_RETRY", "REMOVE_TIMEOUT", "SERVER_WAIT", "cloud_call"]

#: Cloud calls are idempotent (a retried create adopts the server it made), so retrying
#: is always safe. 20 attempts (~8 minutes of back-off) outlast a cloud failing 30 % of
#: calls: a create attempt (lookup + POST) fails about half the time, and 10 attempts
#: left ~1 create in 1,000 in ERROR (0.5^10), 20 leave ~1 in a million.
CLOUD_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=20,
)
#: Deleting a node's servers and waiting until they are gone.
REMOVE_TIMEOUT = timedelta(minutes=15)
#: Waiting for a server: poll by retrying the activity (no history per attempt).
POLL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=1.5,
    maximum_interval=timedelta(seconds=10),
)
SERVER_WAIT = timedelta(minutes=10)


async def cloud_call(activity: Any, arg: Any, summary: str) -> Any:
    """One idempotent cloud activity, retried as `CLOUD_RETRY` says (a minute a try)."""
    return await workflow.execute_activity_method(
        activity,
        arg,
        start_to_close_timeout=timedelta(seconds=60),
        retry_policy=CLOUD_RETRY,
        summary=summary,
    )
