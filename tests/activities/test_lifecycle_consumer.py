"""The example consumer over real HTTP, calling back a fake Warden that records calls."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from temporalio.testing import ActivityEnvironment

from activities.cloud import CloudSession
from activities.hooks import HookActivities
from domain.cluster.lifecycle import HookDelivery, HookType, LifecycleMessage
from domain.signatures import sign_body
from examples.lifecycle_consumer import ConsumerConfig, create_app
from simcloud.server import serve_in_thread
from tests.support.eventually import eventually
from tests.support.processes import PYTHON, Proc, free_port, wait_http

SECRET = "consumer-secret"
WARDEN_TOKEN = "warden-keystone-token"
ROOT = Path(__file__).resolve().parents[2]
BASE_CONFIG = ConsumerConfig(secret=SECRET, warden_token=WARDEN_TOKEN, drain_seconds=0.0)


@dataclass
class FakeWarden:
    """Records `POST /v1/clusters/{cluster_id}/actions`; answers scripted statuses, then 202."""

    url: str = ""
    script: list[int] = field(default_factory=list)
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/clusters/{cluster_id}/actions")
        async def action(cluster_id: str, request: Request) -> JSONResponse:
            body = await request.json()
            with self._lock:
                self.calls.append((cluster_id, request.headers.get("x-auth-token", ""), body))
                status = self.script.pop(0) if self.script else 202
            return JSONResponse({}, status_code=status)

        return app

    def verbs(self, token: str) -> list[str]:
        """The calls made for one token, in order: `heartbeat_lifecycle`, ..."""
        with self._lock:
            return [
                verb
                for _, _, body in self.calls
                for verb, args in body.items()
                if args == {"lifecycle_action_token": token}
            ]

    def reset(self, *statuses: int) -> None:
        with self._lock:
            self.calls.clear()
            self.script[:] = statuses


@pytest.fixture(scope="session")
def served_warden() -> Iterator[FakeWarden]:
    warden = FakeWarden()
    with serve_in_thread(warden.app()) as served:
        warden.url = served.url
        yield warden


@pytest.fixture
def warden(served_warden: FakeWarden) -> FakeWarden:
    served_warden.reset()
    return served_warden


@contextmanager
def consumer(**options: Any) -> Iterator[httpx.Client]:
    """The example app over HTTP; a client at its base URL."""
    config = dataclasses.replace(BASE_CONFIG, **options)
    with serve_in_thread(create_app(config)) as served, httpx.Client(base_url=served.url) as c:
        yield c


def lifecycle_message(warden: FakeWarden, token: str = "tok-1") -> LifecycleMessage:
    return LifecycleMessage(
        lifecycle_action_token=token,
        node_id=f"node-{token}",
        node_name="web-1",
        resource_id="server-1",
        cluster_id="cluster-1",
        timeout=60,
        deadline=datetime.now(UTC) + timedelta(seconds=60),
        complete_url=f"{warden.url}/v1/clusters/cluster-1/actions",
    )


def post_hook(client: httpx.Client, body: bytes, signature: str | bytes | None) -> httpx.Response:
    # Bytes, so a test can send a header value that is not ASCII.
    headers = {b"Content-Type": b"application/json"}
    if signature is not None:
        raw = signature if isinstance(signature, bytes) else signature.encode()
        headers[b"X-Warden-Signature"] = raw
    return client.post("/hooks/lifecycle", content=body, headers=headers)


def post_signed(client: httpx.Client, message: LifecycleMessage) -> httpx.Response:
    body = message.model_dump_json().encode()
    return post_hook(client, body, sign_body(SECRET, body))


async def completed(warden: FakeWarden, token: str) -> list[str]:
    async def probe() -> list[str] | None:
        verbs = warden.verbs(token)
        return verbs if verbs and verbs[-1] == "complete_lifecycle" else None

    return await eventually(probe, timeout=30, what=f"complete_lifecycle for {token}")


def states(client: httpx.Client) -> dict[str, tuple[str, int | None]]:
    """`GET /received` as token → (state, last HTTP status from Warden)."""
    return {
        r["message"]["lifecycle_action_token"]: (r["state"], r["last_status"])
        for r in client.get("/received").json()
    }


async def reaches(client: httpx.Client, token: str, state: tuple[str, int | None]) -> None:
    async def probe() -> bool:
        return states(client).get(token) == state

    await eventually(probe, what=f"{token} in state {state}")


async def test_signed_message_is_accepted_and_completed_after_the_drain(
    warden: FakeWarden,
) -> None:
    with consumer(drain_seconds=0.2) as client:
        response = post_signed(client, lifecycle_message(warden))

        assert response.status_code == 202
        assert await completed(warden, "tok-1") == ["complete_lifecycle"]
        [(cluster_id, auth_token, _)] = warden.calls
        assert (cluster_id, auth_token) == ("cluster-1", WARDEN_TOKEN)
        await reaches(client, "tok-1", ("completed", 202))


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "sha256=" + "0" * 64,
        sign_body("another-secret", b"{}"),
        "garbage",
        "sha256=é".encode(),
    ],
)
async def test_bad_or_missing_signature_is_401_and_nothing_is_posted(
    warden: FakeWarden, signature: str | bytes | None
) -> None:
    with consumer() as client:
        forged = lifecycle_message(warden, "forged").model_dump_json().encode()

        rejected = post_hook(client, forged, signature)
        # A good message sent afterwards completes; the forged one never started.
        post_signed(client, lifecycle_message(warden, "genuine"))
        await completed(warden, "genuine")

        assert rejected.status_code == 401
        assert "X-Warden-Signature" in rejected.json()["error"]
        assert warden.verbs("forged") == []
        assert list(states(client)) == ["genuine"]


async def test_signature_of_a_tampered_body_is_rejected(warden: FakeWarden) -> None:
    with consumer() as client:
        body = lifecycle_message(warden).model_dump_json().encode()
        tampered = body.replace(b"node-tok-1", b"node-other")

        assert post_hook(client, tampered, sign_body(SECRET, body)).status_code == 401


async def test_heartbeats_are_posted_while_draining_then_complete(warden: FakeWarden) -> None:
    with consumer(drain_seconds=0.6, heartbeat_every=0.1) as client:
        post_signed(client, lifecycle_message(warden))

        verbs = await completed(warden, "tok-1")

        assert verbs[-1] == "complete_lifecycle"
        assert len(verbs) >= 3
        assert set(verbs[:-1]) == {"heartbeat_lifecycle"}
        assert all(token == WARDEN_TOKEN for _, token, _ in warden.calls)


async def test_redelivered_message_starts_a_single_drain(warden: FakeWarden) -> None:
    with consumer(drain_seconds=0.1) as client:
        message = lifecycle_message(warden)

        responses = [post_signed(client, message), post_signed(client, message)]
        await completed(warden, "tok-1")
        post_signed(client, lifecycle_message(warden, "later"))
        await completed(warden, "later")

        assert [r.status_code for r in responses] == [202, 202]
        assert warden.verbs("tok-1") == ["complete_lifecycle"]


async def test_complete_is_retried_on_5xx(warden: FakeWarden) -> None:
    warden.reset(503, 502)
    with consumer(retry_delay_s=0.01) as client:
        post_signed(client, lifecycle_message(warden))

        # Wait for the end state first: `completed` returns at the first call already.
        await reaches(client, "tok-1", ("completed", 202))
        assert warden.verbs("tok-1") == ["complete_lifecycle"] * 3


async def test_complete_that_keeps_failing_marks_the_node_failed(warden: FakeWarden) -> None:
    warden.reset(503, 503)
    with consumer(retry_delay_s=0.01, attempts=2) as client:
        post_signed(client, lifecycle_message(warden))

        await reaches(client, "tok-1", ("failed", 503))


async def test_without_a_secret_unsigned_messages_are_accepted(warden: FakeWarden) -> None:
    with consumer(secret=None) as client:
        body = lifecycle_message(warden).model_dump_json().encode()

        assert post_hook(client, body, None).status_code == 202
        await completed(warden, "tok-1")


async def test_body_that_is_not_a_lifecycle_message_is_422(warden: FakeWarden) -> None:
    with consumer() as client:
        body = b'{"hello": "world"}'

        assert post_hook(client, body, sign_body(SECRET, body)).status_code == 422


async def test_warden_activity_and_example_consumer_agree_on_the_signature(
    warden: FakeWarden, cloud: CloudSession
) -> None:
    hooks = HookActivities(cloud, secret_for=lambda _: SECRET, record_event=lambda _: None)
    with consumer() as client:
        delivery = HookDelivery(
            project_id="project-1",
            policy_id="policy-1",
            hook_type=HookType.WEBHOOK,
            url=str(client.base_url.join("/hooks/lifecycle")),
            message=lifecycle_message(warden),
        )

        result = await ActivityEnvironment().run(hooks.deliver_lifecycle_message, delivery)
        await hooks.aclose()

        assert "(HTTP 202)" in result.detail
        assert await completed(warden, "tok-1") == ["complete_lifecycle"]


async def test_cli_reads_secret_and_token_from_the_environment(
    warden: FakeWarden, tmp_path: Path
) -> None:
    port = free_port()
    argv = [PYTHON, "-m", "examples.lifecycle_consumer", "--port", str(port)]
    proc = Proc(
        "consumer",
        [*argv, "--drain-seconds", "0.1", "--heartbeat-every", "0.05"],
        env={"WARDEN_HOOK_SECRET": SECRET, "WARDEN_TOKEN": WARDEN_TOKEN, "PYTHONPATH": str(ROOT)},
        log=tmp_path / "consumer.log",
    ).start()
    try:
        wait_http(f"http://127.0.0.1:{port}/received", proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            unsigned = post_hook(client, lifecycle_message(warden).model_dump_json().encode(), None)
            assert post_signed(client, lifecycle_message(warden)).status_code == 202

            assert unsigned.status_code == 401
            assert (await completed(warden, "tok-1"))[-1] == "complete_lifecycle"
            assert {token for _, token, _ in warden.calls} == {WARDEN_TOKEN}
    finally:
        proc.stop()
    assert "Lifecycle consumer on http://127.0.0.1" in proc.tail()
