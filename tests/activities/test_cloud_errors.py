"""The driver's error mapping, driven by httpx.MockTransport (edge cases only)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from activities.cloud import CloudConfig, CloudSession
from activities.cloud.errors import error_for_status
from domain.errors import (
    BackendConflict,
    BackendError,
    BackendInternalError,
    BackendNotFound,
    BackendUnavailable,
    InvalidRequest,
    WardenError,
)

AUTH = "http://keystone.test/v3/auth/tokens"
COMPUTE = "http://nova.test/v2.1"
CATALOG = [
    {
        "type": "compute",
        "endpoints": [{"interface": "public", "region_id": "R1", "url": COMPUTE}],
    }
]
Handler = Callable[[httpx.Request], httpx.Response]


class FakeCloud:
    """Keystone that always issues tokens, and a compute API answered by `compute`."""

    def __init__(self, compute: Handler) -> None:
        self.compute = compute
        self.auths = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if str(request.url) == AUTH:
            self.auths += 1
            body = {"token": {"expires_at": "2999-01-01T00:00:00Z", "catalog": CATALOG}}
            return httpx.Response(201, json=body, headers={"X-Subject-Token": f"t{self.auths}"})
        return self.compute(request)


def session(handler: Handler) -> CloudSession:
    config = CloudConfig(
        auth_url="http://keystone.test", username="u", password="p", project_name="demo"
    )
    return CloudSession(config, transport=httpx.MockTransport(handler))


def answering(status: int, body: object = None) -> Handler:
    return lambda request: httpx.Response(status, json=body)


def raising(exc_type: type[httpx.TransportError]) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc_type("boom", request=request)

    return handler


@pytest.mark.parametrize(
    ("status", "expected", "retryable"),
    [
        (400, InvalidRequest, False),
        (403, BackendError, False),
        (404, BackendNotFound, False),
        (409, BackendConflict, False),
        (413, BackendError, False),
        (408, BackendUnavailable, True),
        (429, BackendUnavailable, True),
        (500, BackendInternalError, True),
        (502, BackendUnavailable, True),
        (503, BackendUnavailable, True),
        (504, BackendUnavailable, True),
    ],
)
async def test_http_status_maps_to_domain_error(
    status: int, expected: type[WardenError], retryable: bool
) -> None:
    body = {"conflictingRequest": {"code": status, "message": "nova says no"}}
    async with session(FakeCloud(answering(status, body))) as cloud:
        with pytest.raises(expected) as caught:
            await cloud.compute.get_server("s-1")

    assert type(caught.value) is expected
    assert caught.value.retryable is retryable
    assert "nova says no" in str(caught.value)


@pytest.mark.parametrize(
    "exc_type",
    [
        httpx.ConnectTimeout,
        httpx.ReadTimeout,
        httpx.PoolTimeout,
        httpx.ConnectError,
        httpx.ReadError,
        httpx.RemoteProtocolError,
    ],
)
async def test_transport_failures_are_retryable_and_not_httpx(
    exc_type: type[httpx.TransportError],
) -> None:
    async with session(FakeCloud(raising(exc_type))) as cloud:
        with pytest.raises(BackendUnavailable) as caught:
            await cloud.compute.reboot("s-1")

    assert caught.value.retryable
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


async def test_keystone_failures_map_like_any_call() -> None:
    async with session(answering(503)) as down, session(answering(401)) as refused:
        with pytest.raises(BackendUnavailable):
            await down.compute.list_servers()
        with pytest.raises(BackendError) as caught:
            await refused.compute.list_servers()

    assert not caught.value.retryable


async def test_keystone_without_subject_token_is_a_backend_error() -> None:
    async with session(answering(201, {"token": {}})) as cloud:
        with pytest.raises(BackendError, match="X-Subject-Token"):
            await cloud.compute.list_servers()


async def test_401_triggers_exactly_one_reauthentication() -> None:
    fake = FakeCloud(answering(401, {"error": {"message": "expired"}}))
    async with session(fake) as cloud:
        with pytest.raises(BackendError, match="401") as caught:
            await cloud.compute.get_server("s-1")

    assert fake.auths == 2
    assert not caught.value.retryable


async def test_401_then_success_uses_the_new_token() -> None:
    seen: list[str] = []

    def compute(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["X-Auth-Token"])
        if len(seen) == 1:
            return httpx.Response(401)
        return httpx.Response(200, json={"server": {"id": "s-1", "status": "ACTIVE"}})

    async with session(FakeCloud(compute)) as cloud:
        server = await cloud.compute.get_server("s-1")

    assert server.status == "ACTIVE"
    assert seen == ["t1", "t2"]


async def test_success_without_json_is_a_backend_error() -> None:
    handler = FakeCloud(lambda request: httpx.Response(200, text="<html>proxy</html>"))
    async with session(handler) as cloud:
        with pytest.raises(BackendError, match="without a JSON body") as caught:
            await cloud.compute.get_server("s-1")

    assert not caught.value.retryable


async def test_missing_service_in_catalog_is_a_backend_error() -> None:
    async with session(FakeCloud(answering(200, {"members": []}))) as cloud:
        with pytest.raises(BackendError, match="no load-balancer endpoint"):
            await cloud.loadbalancer.list_members("p")


async def test_compute_requests_carry_the_microversion_and_quoted_ids() -> None:
    seen: list[httpx.Request] = []

    def compute(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(202)

    async with session(FakeCloud(compute)) as cloud:
        await cloud.compute.pause("a/b")

    assert seen[0].headers["OpenStack-API-Version"] == "compute 2.73"
    assert seen[0].url.raw_path == b"/v2.1/servers/a%2Fb/action"


def test_octavia_s_immutable_conflict_is_retryable_and_other_conflicts_are_not() -> None:
    pending = error_for_status(
        409, "load-balancer PUT", "Load Balancer lb-1 is immutable and cannot be updated."
    )
    taken = error_for_status(409, "network POST", "IP address 10.0.0.5 already allocated")
    assert pending.retryable and not taken.retryable
