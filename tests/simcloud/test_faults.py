"""simcloud fault injection: persistent server faults, cures, a flaky API, notifications."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS
from tests.support.eventually import eventually
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"


class Sink:
    """Collects the notifications simcloud POSTs (an httpx transport)."""

    def __init__(self) -> None:
        self.posted: list[dict[str, Any]] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        assert request.url == "http://receiver/notifications"
        self.posted.append(json.loads(request.content))
        return httpx.Response(202)

    def events(self) -> list[str]:
        return [n["event_type"] for n in self.posted]

    async def wait_for(self, count: int) -> list[str]:
        """The event types once `count` notifications arrived (they are sent async)."""

        async def arrived() -> bool:
            return len(self.posted) >= count

        await eventually(arrived, timeout=5, what=f"{count} notifications")
        return self.events()


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
async def client(sink: Sink) -> AsyncIterator[httpx.AsyncClient]:
    config = SimConfig(notify_url="http://receiver/notifications", seed=7)
    async with in_process_simcloud(config, notify_transport=httpx.MockTransport(sink.handler)) as c:
        c.headers.update(await login(c))
        yield c


@pytest.fixture
async def server_id(client: httpx.AsyncClient) -> str:
    body = {"server": {"name": "app-1", "imageRef": CIRROS, "flavorRef": "1"}}
    return str((await client.post(SERVERS, json=body)).json()["server"]["id"])


async def fault(client: httpx.AsyncClient, server_id: str, kind: str, *cures: str) -> Any:
    body: dict[str, Any] = {"kind": kind}
    if cures:
        body["cured_by"] = list(cures)
    response = await client.post(f"/sim/servers/{server_id}/fault", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def status(client: httpx.AsyncClient, server_id: str) -> str:
    return str((await client.get(f"{SERVERS}/{server_id}")).json()["server"]["status"])


async def act(client: httpx.AsyncClient, server_id: str, body: Any) -> int:
    return (await client.post(f"{SERVERS}/{server_id}/action", json=body)).status_code


@pytest.mark.parametrize(
    ("kind", "shown", "event"),
    [
        ("shutoff", "SHUTOFF", "compute.instance.power_off.end"),
        ("error", "ERROR", "compute.instance.rebuild.error"),
        ("pause", "PAUSED", "compute.instance.pause.end"),
    ],
)
async def test_state_faults_change_status_and_notify(
    client: httpx.AsyncClient, sink: Sink, server_id: str, kind: str, shown: str, event: str
) -> None:
    await fault(client, server_id, kind)

    assert await status(client, server_id) == shown
    assert await sink.wait_for(1) == [event]
    data = sink.posted[0]["payload"]["nova_object.data"]
    assert (data["uuid"], data["display_name"]) == (server_id, "app-1")
    assert sink.posted[0]["publisher_id"].startswith("nova-compute")


async def test_fault_persists_through_actions_that_do_not_cure_it(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await fault(client, server_id, "shutoff", "REBUILD")

    assert await act(client, server_id, {"os-start": None}) == 202
    after_start = await status(client, server_id)
    assert await act(client, server_id, {"reboot": {"type": "HARD"}}) == 202
    after_reboot = await status(client, server_id)
    assert await act(client, server_id, {"rebuild": {"imageRef": CIRROS}}) == 202
    after_rebuild = await status(client, server_id)

    assert (after_start, after_reboot, after_rebuild) == ("SHUTOFF", "SHUTOFF", "ACTIVE")
    assert (await client.get(f"/sim/servers/{server_id}/fault")).json() == {"fault": None}


async def test_rebuild_that_does_not_cure_an_error_fault_emits_rebuild_error(
    client: httpx.AsyncClient, sink: Sink, server_id: str
) -> None:
    await fault(client, server_id, "error", "RECREATE")

    assert await act(client, server_id, {"rebuild": {"imageRef": CIRROS}}) == 202
    assert await act(client, server_id, {"reboot": {"type": "HARD"}}) == 202

    assert await status(client, server_id) == "ERROR"
    assert await sink.wait_for(2) == ["compute.instance.rebuild.error"] * 2
    assert sink.posted[1]["priority"] == "ERROR"


async def test_pause_fault_cured_by_unpause_when_allowed(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await fault(client, server_id, "pause", "UNPAUSE")

    assert await act(client, server_id, {"unpause": None}) == 202

    assert await status(client, server_id) == "ACTIVE"


async def test_app_failing_fault_fails_app_health_until_cured(
    client: httpx.AsyncClient, server_id: str
) -> None:
    healthy = await client.get("/sim/apps/app-1/health")
    await fault(client, server_id, "app_failing", "REBOOT")
    failing = await client.get("/sim/apps/app-1/health")
    await act(client, server_id, {"rebuild": {"imageRef": CIRROS}})
    still = await client.get("/sim/apps/app-1/health")
    await act(client, server_id, {"reboot": {"type": "SOFT"}})
    cured = await client.get("/sim/apps/app-1/health")

    assert (healthy.status_code, healthy.text) == (200, "passing")
    assert (failing.status_code, failing.text) == (503, "failing")
    assert still.status_code == 503
    assert await status(client, server_id) == "ACTIVE"
    assert (cured.status_code, cured.text) == (200, "passing")


async def test_app_health_fails_when_server_is_down_and_404_without_server(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await act(client, server_id, {"os-stop": None})

    assert (await client.get("/sim/apps/app-1/health")).status_code == 503
    assert (await client.get("/sim/apps/nobody/health")).status_code == 404


async def test_vanish_removes_the_server_and_notifies_soft_delete(
    client: httpx.AsyncClient, sink: Sink, server_id: str
) -> None:
    await fault(client, server_id, "vanish")

    assert (await client.get(f"{SERVERS}/{server_id}")).status_code == 404
    assert await sink.wait_for(1) == ["compute.instance.soft_delete.end"]


async def test_api_driven_power_changes_notify(
    client: httpx.AsyncClient, sink: Sink, server_id: str
) -> None:
    await act(client, server_id, {"os-stop": None})
    await act(client, server_id, {"os-start": None})
    await act(client, server_id, {"pause": None})
    await client.delete(f"{SERVERS}/{server_id}")

    assert sorted(await sink.wait_for(3)) == [
        "compute.instance.pause.end",
        "compute.instance.power_off.end",
        "compute.instance.shutdown.end",
    ]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"kind": "meltdown"},
        {"kind": "shutoff", "cured_by": []},
        {"kind": "shutoff", "x": 1},
        {"kind": "shutoff", "cured_by": ["PRAY"]},
    ],
)
async def test_bad_fault_requests_get_400(
    client: httpx.AsyncClient, server_id: str, body: Any
) -> None:
    response = await client.post(f"/sim/servers/{server_id}/fault", json=body)

    assert response.status_code == 400


async def test_fault_on_unknown_server_gets_404(client: httpx.AsyncClient) -> None:
    response = await client.post("/sim/servers/nope/fault", json={"kind": "shutoff"})

    assert response.status_code == 404


async def test_api_faults_hit_openstack_routes_but_not_sim_routes(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await client.post("/sim/api-faults", json={"error_rate": 1.0, "status": 502, "latency_ms": 1})

    compute = await client.get(f"{SERVERS}/{server_id}")
    identity = await client.post("/identity/v3/auth/tokens", json={})
    control = await client.get("/sim/state")
    await client.post("/sim/api-faults", json={"error_rate": 0})
    healed = await client.get(f"{SERVERS}/{server_id}")

    assert compute.status_code == 502
    assert identity.status_code == 502
    assert control.status_code == 200
    assert healed.status_code == 200


async def test_partial_error_rate_fails_some_calls_only(client: httpx.AsyncClient) -> None:
    await client.post("/sim/api-faults", json={"error_rate": 0.5})

    codes = {(await client.get(SERVERS)).status_code for _ in range(40)}

    assert codes == {200, 503}


async def test_lost_response_creates_the_server_yet_answers_the_error(
    client: httpx.AsyncClient,
) -> None:
    settings = {
        "error_rate": 1.0,
        "status": 500,
        "lost_response_rate": 1.0,
        "match": "^POST /compute/v2.1/servers$",
        "max_errors": 1,
    }
    await client.post("/sim/api-faults", json=settings)
    body = {"server": {"name": "lost-1", "imageRef": CIRROS, "flavorRef": "1"}}

    lost = await client.post(SERVERS, json=body)
    listed = (await client.get(SERVERS, params={"name": "^lost-1$"})).json()["servers"]
    left = (await client.get("/sim/api-faults")).json()["errors_left"]
    answered = await client.post(SERVERS, json=body)

    assert lost.status_code == 500
    assert lost.json()["computeFault"]["message"] == "Simulated API fault"
    assert len(listed) == 1  # made, though its caller was told it failed
    assert left == 0
    assert answered.status_code == 202


async def test_api_faults_only_hit_matching_calls(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await client.post("/sim/api-faults", json={"error_rate": 1.0, "match": "^DELETE "})

    shown = await client.get(f"{SERVERS}/{server_id}")
    deleted = await client.delete(f"{SERVERS}/{server_id}")
    after = await client.get(f"{SERVERS}/{server_id}")

    assert (shown.status_code, deleted.status_code) == (200, 503)
    assert after.json()["server"]["status"] == "ACTIVE"  # failed before it was carried out


async def test_api_faults_heal_after_max_errors(client: httpx.AsyncClient) -> None:
    await client.post("/sim/api-faults", json={"error_rate": 1.0, "max_errors": 2})

    codes = [(await client.get(SERVERS)).status_code for _ in range(4)]

    assert codes == [503, 503, 200, 200]


@pytest.mark.parametrize(
    "body",
    [
        {"error_rate": 2},
        {"status": 200},
        {"latency_ms": -1},
        {"rate": 1},
        {"lost_response_rate": 1.5},
        {"match": "(unclosed"},
        {"max_errors": 0},
    ],
)
async def test_bad_api_fault_settings_get_400(client: httpx.AsyncClient, body: Any) -> None:
    assert (await client.post("/sim/api-faults", json=body)).status_code == 400


async def test_state_summary_counts_and_reset(client: httpx.AsyncClient, server_id: str) -> None:
    await fault(client, server_id, "lb_offline")

    before = (await client.get("/sim/state")).json()
    await client.post("/sim/reset")
    after = (await client.get("/sim/state")).json()

    assert before["servers"] == 1
    assert before["by_status"] == {"ACTIVE": 1}
    assert before["faults"] == {"lb_offline": 1}
    assert after["servers"] == 0
    assert after["tokens"] == 0


async def test_unreachable_receiver_never_breaks_requests() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    config = SimConfig(notify_url="http://receiver/notifications")
    async with in_process_simcloud(config, notify_transport=httpx.MockTransport(refuse)) as client:
        client.headers.update(await login(client))
        body = {"server": {"name": "n", "imageRef": CIRROS, "flavorRef": "1"}}
        server_id = (await client.post(SERVERS, json=body)).json()["server"]["id"]

        stop = await act(client, server_id, {"os-stop": None})
        faulted = await client.post(f"/sim/servers/{server_id}/fault", json={"kind": "pause"})
        emitted = (await client.get("/sim/notifications")).json()["notifications"]

    assert (stop, faulted.status_code) == (202, 200)
    assert [n["event_type"] for n in emitted] == [
        "compute.instance.power_off.end",
        "compute.instance.pause.end",
    ]
