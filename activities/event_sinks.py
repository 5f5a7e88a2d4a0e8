"""Event sinks: a stack's events posted to the Zaqar queues its environment names."""

from __future__ import annotations

from temporalio import activity

from activities.cloud import CloudSession
from domain.stack.event_sinks import CLIENT_ID, DEFAULT_TTL, EventSinkPost, sink_message

#: Zaqar takes at most this many messages in one post.
_BATCH = 10


class EventSinkActivities:
    """Posts events through the cloud session (the messaging endpoint of the catalog)."""

    def __init__(self, cloud: CloudSession) -> None:
        self._cloud = cloud

    @activity.defn(name="post_to_event_sinks")
    async def post_to_event_sinks(self, post: EventSinkPost) -> None:
        """Post each event to each sink's queue, oldest first (a retry may post one twice,
        as Heat's sinks may: the message `id` tells them apart)."""
        messages = [sink_message(e) for e in sorted(post.events, key=lambda e: e.at)]
        for sink in post.sinks:
            ttl = sink.ttl if sink.ttl is not None else DEFAULT_TTL
            for start in range(0, len(messages), _BATCH):
                batch = [{"body": m, "ttl": ttl} for m in messages[start : start + _BATCH]]
                await self._cloud.request(
                    "messaging",
                    "POST",
                    f"/v2/queues/{sink.target}/messages",
                    json={"messages": batch},
                    headers={"Client-ID": CLIENT_ID},
                )
