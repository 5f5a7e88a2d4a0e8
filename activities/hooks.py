"""Lifecycle hook activities: tell an app that its node is about to be deleted.

One delivery is one activity attempt; Temporal's retry policy is the only retry loop,
and the calling workflow bounds it with `schedule_to_close` = the hook timeout.

| webhook outcome                                  | raised (ApplicationError type) | retried |
|--------------------------------------------------|--------------------------------|---------|
| 2xx                                              | — (delivered)                  | —       |
| connection error, timeout, 5xx, 408, 429         | HookDeliveryFailed             | yes     |
| any other status (4xx, 3xx: redirects not taken) | HookRejected                   | no      |
| URL invalid or outside the allow-list            | InvalidRequest                 | no      |

Zaqar failures keep the cloud driver's domain error type and its `retryable` flag.
Every outcome is recorded as an event; the policy's secret never leaves this module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cloud.session import CloudSession
from activities.errors import application_error
from activities.http_transport import AiohttpTransport
from domain.cluster.lifecycle import (
    SIGNATURE_HEADER,
    HookDelivery,
    HookDeliveryResult,
    HookType,
)
from domain.errors import InvalidRequest, WardenError
from domain.events import Event, EventLevel, node_event
from domain.hook_urls import validate_hook_url
from domain.signatures import sign_body

#: Header repeating the token, so a receiver can route before parsing the body.
TOKEN_HEADER = "X-Warden-Token"  # noqa: S105 - a header name, not a secret
USER_AGENT = "warden-lifecycle-hook"
#: Zaqar's bounds for a message's time to live, in seconds.
MIN_TTL_S = 60
MAX_TTL_S = 1_209_600
#: 4xx answers that say "later", not "never".
RETRYABLE_4XX = frozenset({408, 429})
MAX_EXCERPT = 200
#: Upper bound for a receiver's `Retry-After`, so a hostile value cannot stall a node.
MAX_RETRY_AFTER_S = 300
WAITING = "WAITING_LIFECYCLE_COMPLETION"


def _display_url(url: str) -> str:
    """The URL without credentials, query or fragment: safe for events and logs."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def _retry_after(response: httpx.Response) -> timedelta | None:
    """The receiver's `Retry-After` in seconds (dates are ignored), bounded."""
    value = response.headers.get("Retry-After", "").strip()
    if not value.isdigit():
        return None
    return timedelta(seconds=min(int(value), MAX_RETRY_AFTER_S))


def _iso(moment: datetime) -> str:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _attempt(delivery: HookDelivery) -> int:
    """This attempt's number across the local first attempt and the activity's retries."""
    return delivery.prior_attempts + activity.info().attempt


def _zaqar_ttl(timeout_s: int) -> int:
    # A minute longer than the hook waits, within Zaqar's bounds.
    return min(max(MIN_TTL_S, timeout_s + 60), MAX_TTL_S)


class HookActivities:
    """Lifecycle message delivery over one HTTP client and one cloud session."""

    def __init__(
        self,
        session: CloudSession,
        *,
        secret_for: Callable[[str], str | None],
        record_event: Callable[[Event], None],
        url_allowlist: Sequence[str] = (),
        timeout_s: float = 10.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        """Hold the clients for the worker's lifetime.

        Args:
            session: Cloud session whose messaging client posts Zaqar messages.
            secret_for: Blocking lookup of a deletion policy's hook secret by policy id.
            record_event: Blocking, idempotent (on `event_id`) event writer.
            url_allowlist: Hosts, `*.suffix` or URL prefixes webhooks may target; empty = any.
            timeout_s: Bound on one webhook request, connect to last byte.
            http: A client to use instead of creating one (closed by its owner).
        """
        self._session = session
        self._secret_for = secret_for
        self._record_event = record_event
        self._allowlist = tuple(url_allowlist)
        self._timeout = httpx.Timeout(timeout_s)
        self._owns_http = http is None
        # Redirects are not followed: they could lead outside the allow-list.
        self._http = http or httpx.AsyncClient(
            timeout=self._timeout, follow_redirects=False, transport=AiohttpTransport()
        )

    async def aclose(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_http:
            await self._http.aclose()

    @activity.defn(name="deliver_lifecycle_message")
    async def deliver_lifecycle_message(self, delivery: HookDelivery) -> HookDeliveryResult:
        """Deliver one lifecycle message to the policy's webhook or Zaqar queue.

        Raises a retryable ApplicationError while the target may still accept it,
        a non-retryable one when it never will.
        """
        if delivery.hook_type is HookType.WEBHOOK:
            if not delivery.url:
                raise ApplicationError(
                    "Webhook delivery without a URL", type="InvalidRequest", non_retryable=True
                )
            return await self._deliver_webhook(delivery, delivery.url)
        if not delivery.queue:
            raise ApplicationError(
                "Zaqar delivery without a queue", type="InvalidRequest", non_retryable=True
            )
        return await self._deliver_zaqar(delivery, delivery.queue)

    async def _deliver_webhook(self, delivery: HookDelivery, url: str) -> HookDeliveryResult:
        try:
            # Policies are validated when created; re-checked here (defense in depth)
            # in case the allow-list changed since.
            validate_hook_url(url, self._allowlist)
        except InvalidRequest as err:
            raise application_error(err) from err
        target = f"webhook {_display_url(url)}"
        body = delivery.message.model_dump_json().encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            TOKEN_HEADER: delivery.message.lifecycle_action_token,
        }
        secret = await asyncio.to_thread(self._secret_for, delivery.policy_id)
        if secret:
            headers[SIGNATURE_HEADER] = sign_body(secret, body)
        try:
            response = await self._http.post(
                url, content=body, headers=headers, timeout=self._timeout
            )
        except httpx.HTTPError as exc:
            why = f"could not reach {target} ({type(exc).__name__}: {exc})"[:MAX_EXCERPT]
            await self._record_failure(delivery, why, retried=True)
            raise ApplicationError(why, type="HookDeliveryFailed") from None
        status = response.status_code
        if response.is_success:
            return await self._delivered(delivery, f"{target} (HTTP {status})", status=status)
        if status >= 500 or status in RETRYABLE_4XX:
            why = f"{target} answered HTTP {status}"
            await self._record_failure(delivery, why, retried=True)
            raise ApplicationError(
                why, type="HookDeliveryFailed", next_retry_delay=_retry_after(response)
            )
        excerpt = " ".join(response.text.split())[:MAX_EXCERPT]
        why = f"{target} rejected it with HTTP {status}" + (f": {excerpt}" if excerpt else "")
        await self._record_failure(delivery, why, retried=False)
        raise ApplicationError(why, type="HookRejected", non_retryable=True)

    async def _deliver_zaqar(self, delivery: HookDelivery, queue: str) -> HookDeliveryResult:
        message = delivery.message
        try:
            message_id = await self._session.messaging.post_message(
                queue, body=message.model_dump(mode="json"), ttl=_zaqar_ttl(message.timeout)
            )
        except WardenError as err:
            await self._record_failure(
                delivery, f"Zaqar queue {queue} failed: {err.message}", retried=err.retryable
            )
            raise application_error(err) from err
        return await self._delivered(delivery, f"Zaqar queue {queue} (message id {message_id})")

    async def _delivered(
        self, delivery: HookDelivery, where: str, *, status: int | None = None
    ) -> HookDeliveryResult:
        message = delivery.message
        attempt = _attempt(delivery)
        reason = (
            f"Lifecycle message delivered to {where} on attempt {attempt}; "
            f"deadline {_iso(message.deadline)}"
        )
        meta: dict[str, object] = {"hook_type": str(delivery.hook_type), "attempt": attempt}
        if status is not None:
            meta["http_status"] = status
        event = self._event(
            delivery, f"hook-delivered:{message.lifecycle_action_token}", reason, meta
        )
        # A failed write fails the attempt: the retry re-delivers (consumers dedupe on
        # the token) rather than leave a delivery nobody can see.
        await asyncio.to_thread(self._record_event, event)
        activity.logger.info(
            "%s (token %s, node %s, cluster %s)",
            reason,
            message.lifecycle_action_token,
            message.node_id,
            message.cluster_id,
        )
        return HookDeliveryResult(delivered=True, detail=reason)

    async def _record_failure(self, delivery: HookDelivery, why: str, *, retried: bool) -> None:
        token = delivery.message.lifecycle_action_token
        attempt = _attempt(delivery)
        then = "Temporal retries it" if retried else "not retried"
        reason = f"Lifecycle message delivery failed on attempt {attempt}: {why}; {then}"
        meta: dict[str, object] = {"hook_type": str(delivery.hook_type), "attempt": attempt}
        event = self._event(
            delivery, f"hook-attempt:{token}:{attempt}", reason, meta, level=EventLevel.WARNING
        )
        activity.logger.warning("%s (token %s)", reason, token)
        try:
            await asyncio.to_thread(self._record_event, event)
        except Exception:
            # The delivery error matters more to the workflow than its audit record.
            activity.logger.exception("Could not record event %s", event.event_id)

    def _event(
        self,
        delivery: HookDelivery,
        event_id: str,
        reason: str,
        meta: dict[str, object],
        *,
        level: EventLevel = EventLevel.INFO,
    ) -> Event:
        message = delivery.message
        return node_event(
            event_id=event_id,
            at=datetime.now(UTC),
            project_id=delivery.project_id,
            cluster_id=message.cluster_id,
            node_id=message.node_id,
            node_name=message.node_name,
            action="LIFECYCLE_HOOK",
            status=WAITING,
            reason=reason,
            level=level,
            action_id=message.lifecycle_action_token,
            meta=meta,
        )
