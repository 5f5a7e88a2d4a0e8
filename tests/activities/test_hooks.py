"""`deliver_lifecycle_message` against a real HTTP receiver and the real simcloud Zaqar."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import Response
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import CloudSession
from activities.hooks import HookActivities
from domain.cluster.lifecycle import HookDelivery, HookDeliveryResult, HookType, LifecycleMessage
from domain.events import Event, EventLevel
from domain.signatures import verify_signature
from simcloud.server import serve_in_thread
from tests.support.processes import free_port
from tests.support.simcloud_server import SimControl

SECRET = "s3cret-hook-key"
TOKEN = "9c1e2d4a-0000-4000-8000-00000000tok1"


@dataclass(frozen=True)
class Reply:
    """What the receiver answers to one request."""

    status: int = 202
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class Captured:
    """One request the receiver got."""

    path: str
    body: bytes
    headers: dict[str, str]


@dataclass
class Webhook:
    """A webhook target over real HTTP that answers scripted replies (then 202)."""

    url: str = ""
    script: list[Reply] = field(default_factory=list)
    requests: list[Captured] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/{path:path}")
        async def receive(path: str, request: Request) -> Response:
            body = await request.body()
            with self._lock:
                self.requests.append(Captured(f"/{path}", body, dict(request.headers)))
                reply = self.script.pop(0) if self.script else Reply()
            await asyncio.sleep(reply.delay_s)
            return Response(reply.body, status_code=reply.status, headers=reply.headers)

        return app

    def reset(self, *replies: Reply) -> None:
        with self._lock:
            self.requests.clear()
            self.script[:] = replies


@pytest.fixture(scope="session")
def served_webhook() -> Iterator[Webhook]:
    hook = Webhook()
    with serve_in_thread(hook.app()) as served:
        hook.url = served.url
        yield hook


@pytest.fixture
def webhook(served_webhook: Webhook) -> Webhook:
    served_webhook.reset()
    return served_webhook


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
async def hooks(cloud: CloudSession, events: list[Event]) -> AsyncIterator[HookActivities]:
    activities = HookActivities(
        cloud,
        secret_for={"policy-signed": SECRET}.get,
        record_event=events.append,
        timeout_s=5.0,
    )
    yield activities
    await activities.aclose()


def message(timeout: int = 300, token: str = TOKEN) -> LifecycleMessage:
    return LifecycleMessage(
        lifecycle_action_token=token,
        node_id="node-1",
        node_name="web-1",
        resource_id="server-1",
        cluster_id="cluster-1",
        timeout=timeout,
        deadline=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        complete_url="http://warden.test/v1/clusters/cluster-1/actions",
    )


def webhook_delivery(url: str, policy_id: str = "policy-signed") -> HookDelivery:
    return HookDelivery(
        project_id="project-1",
        policy_id=policy_id,
        hook_type=HookType.WEBHOOK,
        url=url,
        message=message(),
    )


def zaqar_delivery(queue: str, timeout: int = 300) -> HookDelivery:
    return HookDelivery(
        project_id="project-1",
        policy_id="policy-signed",
        hook_type=HookType.ZAQAR,
        queue=queue,
        message=message(timeout),
    )


async def deliver(
    hooks: HookActivities, delivery: HookDelivery, attempt: int = 1
) -> HookDeliveryResult:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=attempt)
    result: HookDeliveryResult = await env.run(hooks.deliver_lifecycle_message, delivery)
    return result


async def failure(hooks: HookActivities, delivery: HookDelivery, attempt: int = 1) -> Any:
    with pytest.raises(ApplicationError) as caught:
        await deliver(hooks, delivery, attempt)
    return caught.value


async def test_webhook_gets_signed_json_and_delivery_is_recorded(
    hooks: HookActivities, webhook: Webhook, events: list[Event]
) -> None:
    delivery = webhook_delivery(f"{webhook.url}/hooks/lifecycle?key=abc")

    result = await deliver(hooks, delivery)

    [request] = webhook.requests
    assert request.path == "/hooks/lifecycle"
    assert request.body == delivery.message.model_dump_json().encode()
    assert LifecycleMessage.model_validate_json(request.body) == delivery.message
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == "warden-lifecycle-hook"
    assert request.headers["x-warden-token"] == TOKEN
    assert verify_signature(SECRET, request.body, request.headers["x-warden-signature"])
    # The wire format, computed independently of domain.signatures:
    expected = hmac.new(SECRET.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["x-warden-signature"] == f"sha256={expected}"
    assert result.delivered
    [event] = events
    assert event.event_id == f"hook-delivered:{TOKEN}"
    assert (event.level, event.action, event.status) == (
        EventLevel.INFO,
        "LIFECYCLE_HOOK",
        "WAITING_LIFECYCLE_COMPLETION",
    )
    assert (event.obj_type, event.obj_id, event.obj_name) == ("node", "node-1", "web-1")
    assert (event.cluster_id, event.action_id, event.project_id) == (
        "cluster-1",
        TOKEN,
        "project-1",
    )
    assert event.status_reason == (
        f"Lifecycle message delivered to webhook {webhook.url}/hooks/lifecycle (HTTP 202) "
        "on attempt 1; deadline 2026-01-02T03:04:05Z"
    )
    assert "key=abc" not in event.status_reason  # query strings may carry credentials
    assert event.at.tzinfo is not None
    assert result.detail == event.status_reason


async def test_webhook_without_secret_is_sent_unsigned(
    hooks: HookActivities, webhook: Webhook
) -> None:
    await deliver(hooks, webhook_delivery(f"{webhook.url}/hook", policy_id="policy-plain"))

    [request] = webhook.requests
    assert "x-warden-signature" not in request.headers


async def test_webhook_503_is_retried_then_delivered_with_the_same_signed_body(
    hooks: HookActivities, webhook: Webhook, events: list[Event]
) -> None:
    webhook.reset(Reply(503, "busy"))
    delivery = webhook_delivery(f"{webhook.url}/hook")

    error = await failure(hooks, delivery, attempt=1)
    result = await deliver(hooks, delivery, attempt=2)

    assert (error.type, error.non_retryable) == ("HookDeliveryFailed", False)
    assert "HTTP 503" in str(error)
    assert result.delivered
    first, second = webhook.requests
    assert first.body == second.body
    assert first.headers["x-warden-signature"] == second.headers["x-warden-signature"]
    assert [(e.event_id, e.level) for e in events] == [
        (f"hook-attempt:{TOKEN}:1", EventLevel.WARNING),
        (f"hook-delivered:{TOKEN}", EventLevel.INFO),
    ]
    assert "HTTP 503" in events[0].status_reason
    assert "Temporal retries it" in events[0].status_reason
    assert "(HTTP 202) on attempt 2" in events[1].status_reason


async def test_activity_retries_continue_the_local_first_attempts_count(
    hooks: HookActivities, webhook: Webhook, events: list[Event]
) -> None:
    # A victim's first attempt is a local activity; the activity that retries it starts
    # at its own attempt 1, which is the delivery's attempt 2 (distinct event ids).
    webhook.reset(Reply(503, "busy"), Reply(503, "busy"))
    delivery = webhook_delivery(f"{webhook.url}/hook")
    retried = delivery.model_copy(update={"prior_attempts": 1})

    await failure(hooks, delivery, attempt=1)
    await failure(hooks, retried, attempt=1)
    result = await deliver(hooks, retried, attempt=2)

    assert result.delivered
    assert len({r.body for r in webhook.requests}) == 1
    assert [e.event_id for e in events] == [
        f"hook-attempt:{TOKEN}:1",
        f"hook-attempt:{TOKEN}:2",
        f"hook-delivered:{TOKEN}",
    ]
    assert "on attempt 2: " in events[1].status_reason
    assert "(HTTP 202) on attempt 3" in events[2].status_reason


@pytest.mark.parametrize("status", [408, 429, 500, 502, 504])
async def test_webhook_transient_statuses_are_retryable(
    hooks: HookActivities, webhook: Webhook, status: int
) -> None:
    webhook.reset(Reply(status))

    error = await failure(hooks, webhook_delivery(f"{webhook.url}/hook"))

    assert (error.type, error.non_retryable) == ("HookDeliveryFailed", False)
    assert error.next_retry_delay is None


@pytest.mark.parametrize(("retry_after", "delay_s"), [("7", 7), ("86400", 300)])
async def test_retry_after_sets_the_next_retry_delay_within_bounds(
    hooks: HookActivities, webhook: Webhook, retry_after: str, delay_s: int
) -> None:
    webhook.reset(Reply(429, headers={"Retry-After": retry_after}))

    error = await failure(hooks, webhook_delivery(f"{webhook.url}/hook"))

    assert error.next_retry_delay == timedelta(seconds=delay_s)


async def test_webhook_404_is_rejected_without_retry_with_a_short_excerpt(
    hooks: HookActivities, webhook: Webhook, events: list[Event]
) -> None:
    webhook.reset(Reply(404, "no such hook " + "x" * 1000))

    error = await failure(hooks, webhook_delivery(f"{webhook.url}/hook"))

    assert (error.type, error.non_retryable) == ("HookRejected", True)
    assert "HTTP 404: no such hook xxx" in error.message
    assert len(error.message) < 300
    [event] = events
    assert (event.event_id, event.level) == (f"hook-attempt:{TOKEN}:1", EventLevel.WARNING)
    assert "HTTP 404" in event.status_reason
    assert "not retried" in event.status_reason


async def test_redirect_is_not_followed(
    hooks: HookActivities, webhook: Webhook, events: list[Event]
) -> None:
    webhook.reset(Reply(307, headers={"Location": f"{webhook.url}/elsewhere"}))

    error = await failure(hooks, webhook_delivery(f"{webhook.url}/hook"))

    assert error.type == "HookRejected"
    assert [r.path for r in webhook.requests] == ["/hook"]


async def test_unreachable_webhook_is_retryable(hooks: HookActivities, events: list[Event]) -> None:
    error = await failure(hooks, webhook_delivery(f"http://127.0.0.1:{free_port()}/hook"), 3)

    assert (error.type, error.non_retryable) == ("HookDeliveryFailed", False)
    assert "ConnectError" in error.message
    [event] = events
    assert event.event_id == f"hook-attempt:{TOKEN}:3"
    assert "could not reach webhook" in event.status_reason


async def test_slow_webhook_times_out_and_is_retryable(
    cloud: CloudSession, webhook: Webhook, events: list[Event]
) -> None:
    webhook.reset(Reply(delay_s=2.0))
    hooks = HookActivities(
        cloud, secret_for=lambda _: None, record_event=events.append, timeout_s=0.2
    )

    error = await failure(hooks, webhook_delivery(f"{webhook.url}/hook"))
    await hooks.aclose()

    assert (error.type, error.non_retryable) == ("HookDeliveryFailed", False)
    assert "ReadTimeout" in error.message


@pytest.mark.parametrize(
    ("allowlist", "path", "allowed"),
    [
        (["127.0.0.1"], "/anything", True),
        (["hooks.example.com"], "/anything", False),
        (["{url}/app"], "/app/drain", True),
        (["{url}/app"], "/app", True),
        (["{url}/app"], "/application", False),
        (["https://127.0.0.1"], "/app", False),  # scheme must match
        (["hooks.example.com", "{url}/"], "/x", True),
    ],
)
async def test_url_allowlist_is_enforced_before_sending(
    cloud: CloudSession,
    webhook: Webhook,
    events: list[Event],
    allowlist: list[str],
    path: str,
    allowed: bool,
) -> None:
    hooks = HookActivities(
        cloud,
        secret_for=lambda _: None,
        record_event=events.append,
        url_allowlist=[entry.format(url=webhook.url) for entry in allowlist],
    )
    delivery = webhook_delivery(f"{webhook.url}{path}")

    if allowed:
        assert (await deliver(hooks, delivery)).delivered
    else:
        error = await failure(hooks, delivery)
        assert (error.type, error.non_retryable) == ("InvalidRequest", True)
        assert webhook.requests == []
    await hooks.aclose()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/hook",
        "file:///etc/passwd",
        "http://",
        "/relative",
        "http://h:99999/",
        "http://user:hunter2@127.0.0.1/hook",
    ],
)
async def test_invalid_url_is_rejected_without_retry(hooks: HookActivities, url: str) -> None:
    error = await failure(hooks, webhook_delivery(url))

    assert (error.type, error.non_retryable) == ("InvalidRequest", True)
    assert "hunter2" not in error.message


async def test_delivery_without_url_or_queue_is_invalid(hooks: HookActivities) -> None:
    no_url = webhook_delivery("http://x").model_copy(update={"url": None})
    no_queue = zaqar_delivery("q").model_copy(update={"queue": None})

    for delivery in (no_url, no_queue):
        error = await failure(hooks, delivery)
        assert (error.type, error.non_retryable) == ("InvalidRequest", True)


async def test_zaqar_message_lands_in_the_queue_with_the_message_body(
    hooks: HookActivities, cloud: CloudSession, events: list[Event]
) -> None:
    delivery = zaqar_delivery("lifecycle-hooks", timeout=300)

    result = await deliver(hooks, delivery, attempt=2)

    [queued] = await cloud.messaging.list_messages("lifecycle-hooks")
    assert queued.body == delivery.message.model_dump(mode="json")
    assert LifecycleMessage.model_validate(queued.body) == delivery.message
    assert queued.ttl == 360
    assert result.delivered
    [event] = events
    assert event.event_id == f"hook-delivered:{TOKEN}"
    assert event.status_reason == (
        f"Lifecycle message delivered to Zaqar queue lifecycle-hooks (message id {queued.id}) "
        "on attempt 2; deadline 2026-01-02T03:04:05Z"
    )


@pytest.mark.parametrize(("timeout", "ttl"), [(0, 60), (5, 65), (2_000_000, 1_209_600)])
async def test_zaqar_ttl_outlives_the_hook_within_zaqar_bounds(
    hooks: HookActivities, cloud: CloudSession, timeout: int, ttl: int
) -> None:
    await deliver(hooks, zaqar_delivery("ttl", timeout))

    [queued] = await cloud.messaging.list_messages("ttl")
    assert queued.ttl == ttl


async def test_zaqar_outage_is_retryable_and_recorded(
    hooks: HookActivities, sim: SimControl, events: list[Event]
) -> None:
    await sim.api_faults(1.0, status=503)

    error = await failure(hooks, zaqar_delivery("hooks"))

    assert (error.type, error.non_retryable) == ("BackendUnavailable", False)
    [event] = events
    assert (event.event_id, event.level) == (f"hook-attempt:{TOKEN}:1", EventLevel.WARNING)
    assert "Zaqar queue hooks failed" in event.status_reason


async def test_zaqar_invalid_queue_is_not_retried(hooks: HookActivities) -> None:
    error = await failure(hooks, zaqar_delivery("no spaces allowed"))

    assert (error.type, error.non_retryable) == ("InvalidRequest", True)


async def test_event_ids_make_recording_idempotent_across_retries(
    hooks: HookActivities, webhook: Webhook, events: list[Event]
) -> None:
    webhook.reset(Reply(500))
    delivery = webhook_delivery(f"{webhook.url}/hook")

    await failure(hooks, delivery, attempt=1)
    await deliver(hooks, delivery, attempt=2)
    await deliver(hooks, delivery, attempt=2)  # the worker died after writing: re-run

    ids = [event.event_id for event in events]
    assert ids == [
        f"hook-attempt:{TOKEN}:1",
        f"hook-delivered:{TOKEN}",
        f"hook-delivered:{TOKEN}",
    ]
    assert len(set(ids)) == 2  # the store keeps one row per id


async def test_secret_appears_in_no_event_result_error_or_log(
    hooks: HookActivities, webhook: Webhook, events: list[Event], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    webhook.reset(Reply(503), Reply(401, "bad signature"))
    delivery = webhook_delivery(f"{webhook.url}/hook")

    errors = [await failure(hooks, delivery, 1), await failure(hooks, delivery, 2)]
    webhook.reset()
    result = await deliver(hooks, delivery, 3)

    signature = webhook.requests[0].headers["x-warden-signature"]
    exposed = [e.model_dump_json() for e in events] + [result.model_dump_json(), caplog.text]
    exposed += [str(error) for error in errors]
    assert len(events) == 3
    for text in exposed:
        assert SECRET not in text
        assert signature not in text


async def test_secret_lookup_and_event_writes_run_off_the_event_loop(
    cloud: CloudSession, webhook: Webhook
) -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def in_thread(value: Any) -> Callable[..., Any]:
        def call(*_: Any) -> Any:
            threads.append(threading.get_ident())
            return value

        return call

    hooks = HookActivities(cloud, secret_for=in_thread(SECRET), record_event=in_thread(None))

    await deliver(hooks, webhook_delivery(f"{webhook.url}/hook"))
    await hooks.aclose()

    assert len(threads) == 2
    assert loop_thread not in threads


async def test_failing_event_write_does_not_hide_the_delivery_error(
    cloud: CloudSession, webhook: Webhook
) -> None:
    def broken_store(_: Event) -> None:
        raise RuntimeError("database is down")

    webhook.reset(Reply(503))
    hooks = HookActivities(cloud, secret_for=lambda _: None, record_event=broken_store)

    error = await failure(hooks, webhook_delivery(f"{webhook.url}/hook"))
    await hooks.aclose()

    assert error.type == "HookDeliveryFailed"


async def test_aclose_leaves_a_client_it_was_given_open(cloud: CloudSession) -> None:
    async with httpx.AsyncClient() as http:
        hooks = HookActivities(
            cloud, secret_for=lambda _: None, record_event=lambda _: None, http=http
        )
        await hooks.aclose()
        assert not http.is_closed
