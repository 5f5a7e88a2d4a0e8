"""Posting a stack's events to its event sinks, after they are recorded (Heat's
`dispatch_event`: a sink that cannot be reached loses the event, the stack goes on)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.event_sinks import EventSinkActivities
    from domain.events import Event
    from domain.stack.event_sinks import EventSink, EventSinkPost
    from workflows.entity import failure_reason

#: A few tries over about a minute; then the events are given up on, as Heat gives up.
SINK_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=3.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=4,
)


async def post_events(sinks: list[dict[str, Any]], events: list[Event]) -> None:
    """Post `events` to `sinks` (nothing to do without either)."""
    if not sinks or not events:
        return
    post = EventSinkPost(sinks=[EventSink.model_validate(s) for s in sinks], events=events)
    try:
        await workflow.execute_activity_method(
            EventSinkActivities.post_to_event_sinks,
            post,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=SINK_RETRY,
            summary=f"post {len(events)} event(s) to {len(sinks)} sink(s)",
        )
    except ActivityError as err:
        workflow.logger.warning("event sinks not reached: %s", failure_reason(err))
