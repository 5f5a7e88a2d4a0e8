"""`probe_nodes` against the real simcloud and a real HTTP app that counts its requests."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import Response
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.cloud import CloudSession, Server
from activities.health import HealthActivities
from domain.cluster.health import NodeProbe, ProbeRequest, ProbeResult, ProbeState, ProbeTarget
from simcloud.config import SimConfig
from simcloud.server import serve_in_thread
from tests.support.cloud_ids import CIRROS, TINY
from tests.support.processes import free_port
from tests.support.simcloud_server import RunningSimcloud, SimControl, running_simcloud

H, U, K = ProbeState.HEALTHY, ProbeState.UNHEALTHY, ProbeState.UNKNOWN
NODE_STATUS: dict[str, Any] = {"type": "NODE_STATUS_POLLING"}


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: str = "ok"


@dataclass
class HealthApp:
    """`GET /health/{name}` over real HTTP: scripted replies (the last one repeats)."""

    url: str = ""
    replies: dict[str, list[Reply]] = field(default_factory=dict)
    delay_s: float = 0.0
    requested: list[str] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/health/{name}")
        async def health(name: str) -> Response:
            with self._lock:
                self.requested.append(name)
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                script = self.replies.get(name) or [Reply()]
                reply = script.pop(0) if len(script) > 1 else script[0]
            try:
                await asyncio.sleep(self.delay_s)
            finally:
                with self._lock:
                    self.in_flight -= 1
            return Response(reply.body, status_code=reply.status)

        return app

    def reset(self) -> None:
        with self._lock:
            self.replies.clear()
            self.requested.clear()
            self.delay_s = 0.0
            self.in_flight = self.max_in_flight = 0

    def poll_url(self) -> str:
        return f"{self.url}/health/{{nodename}}"


@pytest.fixture(scope="session")
def served_app() -> Iterator[HealthApp]:
    health_app = HealthApp()
    with serve_in_thread(health_app.app()) as served:
        health_app.url = served.url
        yield health_app


@pytest.fixture
def app(served_app: HealthApp) -> HealthApp:
    served_app.reset()
    return served_app


@pytest.fixture
async def health(cloud: CloudSession) -> AsyncIterator[HealthActivities]:
    activities = HealthActivities(cloud, poll_timeout_s=5.0)
    yield activities
    await activities.aclose()


def detection(*modes: dict[str, Any], conditional: str = "ANY_FAILED") -> dict[str, object]:
    return {"detection_modes": list(modes), "recovery_conditional": conditional}


def poll_url(url: str, **options: Any) -> dict[str, Any]:
    defaults = {"poll_url_retry_limit": 0, "poll_url_retry_interval": 0}
    return {"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": url} | defaults | options}


def target(server: Server, node_id: str | None = None) -> ProbeTarget:
    return ProbeTarget(
        node_id=node_id or f"node-{server.name}",
        name=server.name,
        physical_id=server.id,
        addresses=server.ip_addresses,
    )


def named(name: str) -> ProbeTarget:
    return ProbeTarget(node_id=f"node-{name}", name=name)


async def probe(
    health: HealthActivities,
    modes: dict[str, object],
    targets: list[ProbeTarget],
    concurrency: int = 20,
    env: ActivityEnvironment | None = None,
) -> ProbeResult:
    request = ProbeRequest(
        cluster_id="cluster-1", detection=modes, targets=targets, concurrency=concurrency
    )
    return await (env or ActivityEnvironment()).run(health.probe_nodes, request)


def by_node(result: ProbeResult) -> dict[str, NodeProbe]:
    return {p.node_id: p for p in result.probes}


def states(result: ProbeResult) -> dict[str, ProbeState]:
    return {p.node_id: p.state for p in result.probes}


# --- NODE_STATUS_POLLING ----------------------------------------------------------------


async def test_health_rounds_share_a_recent_listing_and_verification_does_not(
    cloud: CloudSession, sim: SimControl
) -> None:
    health = HealthActivities(cloud, listing_max_age_s=30.0)
    try:
        server = await cloud.compute.create_server("shared", CIRROS, TINY)
        modes = detection(NODE_STATUS)

        def request(*, share: bool) -> ProbeRequest:
            return ProbeRequest(
                cluster_id="c", detection=modes, targets=[target(server)], share_listing=share
            )

        env = ActivityEnvironment()
        assert states(await env.run(health.probe_nodes, request(share=True))) == {"node-shared": H}
        await sim.fault(server.id, "shutoff")
        # Another cluster's round within max age reuses the listing: one call per project.
        assert states(await env.run(health.probe_nodes, request(share=True))) == {"node-shared": H}
        # A recovery's verification must see the state after its own step.
        assert states(await env.run(health.probe_nodes, request(share=False))) == {"node-shared": U}
    finally:
        await health.aclose()


async def test_node_status_polling_flags_each_fault_kind_with_its_reason(
    health: HealthActivities, cloud: CloudSession, sim: SimControl
) -> None:
    kinds = ("shutoff", "pause", "error", "vanish")
    ok = await cloud.compute.create_server("ok", CIRROS, TINY)
    broken = {k: await cloud.compute.create_server(k, CIRROS, TINY) for k in kinds}
    for kind, server in broken.items():
        await sim.fault(server.id, kind)

    targets = [target(ok), *(target(s) for s in broken.values()), named("unborn")]
    result = await probe(health, detection(NODE_STATUS), targets)

    found = {node_id: (p.state, p.server_status) for node_id, p in by_node(result).items()}
    assert found == {
        "node-ok": (H, "ACTIVE"),
        "node-shutoff": (U, "SHUTOFF"),
        "node-pause": (U, "PAUSED"),
        "node-error": (U, "ERROR"),
        "node-vanish": (U, "DELETED"),
        "node-unborn": (K, None),
    }
    reasons = {p.node_id: p.reason for p in result.probes}
    assert reasons["node-shutoff"] == "NODE_STATUS_POLLING: Server status is SHUTOFF"
    assert reasons["node-vanish"] == f"NODE_STATUS_POLLING: Server {broken['vanish'].id} not found"
    assert "no server yet" in reasons["node-unborn"]
    assert result.cloud_error == ""
    assert result.at is not None
    assert result.at.tzinfo is not None


async def test_compute_outage_makes_nodes_unknown_never_unhealthy(
    health: HealthActivities, cloud: CloudSession, sim: SimControl
) -> None:
    servers = [await cloud.compute.create_server(f"n-{i}", CIRROS, TINY) for i in range(3)]
    await sim.fault(servers[0].id, "shutoff")
    targets = [target(s) for s in servers]

    await sim.api_faults(error_rate=1.0, status=503)
    during = await probe(health, detection(NODE_STATUS), targets)
    await sim.api_faults(error_rate=0.0)
    after = await probe(health, detection(NODE_STATUS), targets)

    assert set(states(during).values()) == {K}
    assert "compute API" in during.cloud_error
    assert "503" in during.cloud_error
    assert all("Could not ask the compute API" in p.reason for p in during.probes)
    assert states(after)["node-n-0"] is U
    assert after.cloud_error == ""


async def test_lifecycle_event_nodes_are_not_polled(health: HealthActivities) -> None:
    result = await probe(health, detection({"type": "LIFECYCLE_EVENTS"}), [named("a"), named("b")])

    assert set(states(result).values()) == {K}
    assert all("event-driven" in p.reason for p in result.probes)


async def test_invalid_detection_is_a_non_retryable_error(health: HealthActivities) -> None:
    with pytest.raises(ApplicationError) as caught:
        await probe(health, detection({"type": "NODE_STATUS_POLL_URL"}), [named("a")])

    assert caught.value.type == "InvalidRequest"
    assert caught.value.non_retryable


# --- NODE_STATUS_POLL_URL ------------------------------------------------------------------


async def test_poll_url_follows_simcloud_app_health(
    health: HealthActivities, cloud: CloudSession, sim: SimControl, simcloud: RunningSimcloud
) -> None:
    passing = await cloud.compute.create_server("app-ok", CIRROS, TINY)
    failing = await cloud.compute.create_server("app-bad", CIRROS, TINY)
    await sim.fault(failing.id, "app_failing")
    url = f"{simcloud.url}/sim/apps/{{nodename}}/health"

    result = await probe(
        health,
        detection(poll_url(url, poll_url_healthy_response="^passing$")),
        [target(passing), target(failing), named("no-such-app")],
    )

    probes = by_node(result)
    assert states(result) == {"node-app-ok": H, "node-app-bad": U, "node-no-such-app": U}
    assert probes["node-app-bad"].reason == (
        f"NODE_STATUS_POLL_URL: GET {simcloud.url}/sim/apps/app-bad/health answered HTTP 503"
    )
    assert "HTTP 404" in probes["node-no-such-app"].reason
    assert probes["node-app-ok"].server_status is None


async def test_poll_url_substitutes_nodename_and_matches_the_healthy_regex(
    health: HealthActivities, app: HealthApp
) -> None:
    app.replies["web 1"] = [Reply(200, "status: ok\n")]
    app.replies["web-2"] = [Reply(200, "status: degraded\n")]
    app.replies["web-3"] = [Reply(204, "")]
    modes = detection(poll_url(app.poll_url(), poll_url_healthy_response=r"(?m)^status: ok$"))

    result = await probe(health, modes, [named("web 1"), named("web-2"), named("web-3")])

    assert states(result) == {"node-web 1": H, "node-web-2": U, "node-web-3": U}
    assert "without a match for '(?m)^status: ok$'" in by_node(result)["node-web-2"].reason
    assert sorted(app.requested) == ["web 1", "web-2", "web-3"]


async def test_poll_url_empty_healthy_response_accepts_any_2xx(
    health: HealthActivities, app: HealthApp
) -> None:
    app.replies["a"] = [Reply(204, "")]
    app.replies["b"] = [Reply(302, "")]
    modes = detection(poll_url(app.poll_url(), poll_url_ssl_verify=False))

    result = await probe(health, modes, [named("a"), named("b")])

    assert states(result) == {"node-a": H, "node-b": U}
    assert "HTTP 302" in by_node(result)["node-b"].reason


async def test_poll_url_retries_up_to_the_retry_limit(
    health: HealthActivities, app: HealthApp
) -> None:
    app.replies["flaky"] = [Reply(503, "starting"), Reply(200, "passing")]
    app.replies["down"] = [Reply(503, "failing")]
    app.replies["fine"] = [Reply(200, "all passing")]
    modes = detection(
        poll_url(app.poll_url(), poll_url_healthy_response="passing", poll_url_retry_limit=2)
    )

    result = await probe(health, modes, [named("flaky"), named("down"), named("fine")])

    assert app.requested.count("flaky") == 2
    assert app.requested.count("down") == 3
    assert app.requested.count("fine") == 1
    assert states(result) == {"node-flaky": H, "node-down": U, "node-fine": H}
    assert by_node(result)["node-down"].reason.endswith("HTTP 503 (after 3 attempts)")


@pytest.mark.parametrize(
    ("as_unhealthy", "expected"), [(True, ProbeState.UNHEALTHY), (False, ProbeState.UNKNOWN)]
)
async def test_connection_refused_counts_as_the_option_says(
    health: HealthActivities, as_unhealthy: bool, expected: ProbeState
) -> None:
    url = f"http://127.0.0.1:{free_port()}/health/{{nodename}}"
    modes = detection(poll_url(url, poll_url_conn_error_as_unhealthy=as_unhealthy))

    result = await probe(health, modes, [named("a")])

    assert result.probes[0].state is expected
    assert "ConnectError" in result.probes[0].reason
    assert result.cloud_error == ""


async def test_poll_url_host_outside_allowlist_is_unknown_and_never_requested(
    cloud: CloudSession, app: HealthApp
) -> None:
    port = httpx.URL(app.url).port
    health = HealthActivities(cloud, url_allowlist=["127.0.0.1"])
    try:
        result = await probe(
            health,
            detection(poll_url(f"http://{{nodename}}:{port}/health/probe")),
            [named("127.0.0.1"), named("localhost")],
        )
    finally:
        await health.aclose()

    assert states(result) == {"node-127.0.0.1": H, "node-localhost": K}
    assert "not in the allowed list" in by_node(result)["node-localhost"].reason
    assert app.requested == ["probe"]


# --- LB_STATUS_POLLING --------------------------------------------------------------------


async def test_lb_polling_flags_offline_and_error_members(
    health: HealthActivities, cloud: CloudSession, sim: SimControl
) -> None:
    pool = {"lb_pool_id": "pool-a"}
    ok, offline, broken, by_name = [
        await cloud.compute.create_server(name, CIRROS, TINY, metadata=pool)
        for name in ("ok", "offline", "broken", "by-name")
    ]
    outside = await cloud.compute.create_server("outside", CIRROS, TINY)
    await sim.fault(offline.id, "lb_offline")
    await sim.fault(broken.id, "error")
    lb = {"type": "LB_STATUS_POLLING", "options": {"pool_id": "pool-a"}}

    result = await probe(
        health,
        detection(lb),
        [target(ok), target(offline), target(broken), named("by-name"), target(outside)],
    )

    assert states(result) == {
        "node-ok": H,
        "node-offline": U,
        "node-broken": U,
        "node-by-name": H,
        "node-outside": K,
    }
    probes = by_node(result)
    assert probes["node-offline"].reason == (
        f"LB_STATUS_POLLING: Pool pool-a member {offline.ip_addresses[0]} is OFFLINE"
    )
    assert probes["node-broken"].reason.endswith("is ERROR")
    assert "Not a member of pool pool-a" in probes["node-outside"].reason
    assert by_name.ip_addresses  # matched by name although the target had no address


async def test_lb_pool_that_cannot_be_listed_makes_nodes_unknown(
    health: HealthActivities, cloud: CloudSession
) -> None:
    server = await cloud.compute.create_server("s", CIRROS, TINY)
    lb = {"type": "LB_STATUS_POLLING", "options": {"pool_id": "no-such-pool"}}

    result = await probe(health, detection(lb), [target(server)])

    assert states(result) == {"node-s": K}
    assert "pool no-such-pool" in result.cloud_error


# --- Combining modes ------------------------------------------------------------------------


async def test_modes_combine_by_the_recovery_conditional(
    health: HealthActivities, cloud: CloudSession, sim: SimControl, simcloud: RunningSimcloud
) -> None:
    app_down = await cloud.compute.create_server("app-down", CIRROS, TINY)
    all_down = await cloud.compute.create_server("all-down", CIRROS, TINY)
    fine = await cloud.compute.create_server("fine", CIRROS, TINY)
    await sim.fault(app_down.id, "app_failing")
    await sim.fault(all_down.id, "shutoff")
    url = poll_url(f"{simcloud.url}/sim/apps/{{nodename}}/health")
    targets = [target(app_down), target(all_down), target(fine)]

    any_failed = await probe(health, detection(NODE_STATUS, url), targets)
    all_failed = await probe(health, detection(NODE_STATUS, url, conditional="ALL_FAILED"), targets)

    assert states(any_failed) == {"node-app-down": U, "node-all-down": U, "node-fine": H}
    assert states(all_failed) == {"node-app-down": H, "node-all-down": U, "node-fine": H}
    down = by_node(any_failed)["node-app-down"]
    assert down.reason.startswith("NODE_STATUS_POLL_URL: GET ")
    assert "NODE_STATUS_POLLING" not in down.reason
    assert down.server_status == "ACTIVE"
    both = by_node(any_failed)["node-all-down"].reason
    assert "NODE_STATUS_POLLING: Server status is SHUTOFF" in both
    assert "NODE_STATUS_POLL_URL" in both


async def test_unknown_mode_never_hides_a_failing_one(
    health: HealthActivities, cloud: CloudSession, sim: SimControl
) -> None:
    server = await cloud.compute.create_server("s", CIRROS, TINY)
    await sim.fault(server.id, "shutoff")
    lb = {"type": "LB_STATUS_POLLING", "options": {"pool_id": "no-such-pool"}}

    any_failed = await probe(health, detection(NODE_STATUS, lb), [target(server)])
    all_failed = await probe(
        health, detection(NODE_STATUS, lb, conditional="ALL_FAILED"), [target(server)]
    )

    assert states(any_failed) == {"node-s": U}
    assert states(all_failed) == {"node-s": K}
    assert "pool no-such-pool" in all_failed.cloud_error


# --- Scale ------------------------------------------------------------------------------------


class CountingTransport(httpx.AsyncBaseTransport):
    """Forwards to the network and remembers each request's path."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_200_nodes_take_one_compute_call_and_bounded_url_concurrency(
    simcloud: RunningSimcloud, sim: SimControl, app: HealthApp
) -> None:
    await sim.seed(200, name_prefix="big")
    app.delay_s = 0.02
    transport = CountingTransport()
    beats: list[Any] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    async with CloudSession(simcloud.cloud_config(), transport=transport) as session:
        servers = await session.compute.list_servers()
        transport.paths.clear()
        health = HealthActivities(session)
        try:
            result = await probe(
                health,
                detection(NODE_STATUS, poll_url(app.poll_url())),
                [target(s) for s in servers],
                concurrency=10,
                env=env,
            )
        finally:
            await health.aclose()

    assert len(result.probes) == 200
    assert set(states(result).values()) == {H}
    assert [p for p in transport.paths if p.endswith("/servers/detail")] == [
        "/compute/v2.1/servers/detail"
    ]
    assert len(app.requested) == 200
    assert 2 <= app.max_in_flight <= 10
    assert len(beats) >= 200 // 50


# --- Servers in transition (a simcloud whose actions take a minute) ---------------------


@pytest.fixture(scope="module")
def slow_simcloud() -> Iterator[RunningSimcloud]:
    with running_simcloud(SimConfig(action_latency_ms=60_000, seed=5)) as sim:
        yield sim


@pytest.fixture
async def slow_cloud(slow_simcloud: RunningSimcloud) -> AsyncIterator[CloudSession]:
    async with CloudSession(slow_simcloud.cloud_config()) as session:
        yield session


async def test_servers_in_transition_are_unknown(
    slow_simcloud: RunningSimcloud, slow_cloud: CloudSession
) -> None:
    rebooting = await slow_cloud.compute.create_server("rebooting", CIRROS, TINY)
    starting = await slow_cloud.compute.create_server("starting", CIRROS, TINY)
    async with httpx.AsyncClient(base_url=slow_simcloud.url) as client:
        await SimControl(client).fault(starting.id, "shutoff", ["START"])
    await slow_cloud.compute.reboot(rebooting.id, "HARD")
    await slow_cloud.compute.start(starting.id)  # Nova shows SHUTOFF while powering on
    health = HealthActivities(slow_cloud)
    try:
        result = await probe(health, detection(NODE_STATUS), [target(rebooting), target(starting)])
    finally:
        await health.aclose()

    found = {node_id: (p.state, p.server_status) for node_id, p in by_node(result).items()}
    assert found == {"node-rebooting": (K, "HARD_REBOOT"), "node-starting": (K, "SHUTOFF")}
    assert by_node(result)["node-starting"].reason == (
        "NODE_STATUS_POLLING: Server status is SHUTOFF (task powering-on)"
    )


async def test_poll_url_waits_the_retry_interval_heartbeating(
    health: HealthActivities, app: HealthApp
) -> None:
    app.replies["slow-start"] = [Reply(503, "starting"), Reply(200, "passing")]
    beats: list[Any] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    modes = detection(poll_url(app.poll_url(), poll_url_retry_limit=1, poll_url_retry_interval=1))

    started = time.monotonic()
    result = await probe(health, modes, [named("slow-start")], env=env)

    assert time.monotonic() - started >= 1.0
    assert states(result) == {"node-slow-start": H}
    assert ("waiting to retry a poll URL",) in beats
