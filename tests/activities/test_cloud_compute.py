"""Driver compute calls against simcloud over HTTP: every action, idempotence, errors."""

from __future__ import annotations

import httpx
import pytest

from activities.cloud import REQUEST_ID_KEY, CloudSession, Server
from activities.cloud.compute import MICROVERSION
from domain.errors import BackendConflict, BackendNotFound, InvalidRequest
from simcloud.app import create_app as create_simcloud
from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, CIRROS_V2, LARGE, SMALL
from tests.support.simcloud_server import RunningSimcloud, SimControl


async def make(cloud: CloudSession, name: str = "web-1", request_id: str = "req-1") -> Server:
    return await cloud.compute.create_server(
        name, CIRROS, SMALL, {"role": "web"}, request_id=request_id
    )


async def status(cloud: CloudSession, server_id: str) -> str:
    return (await cloud.compute.get_server(server_id)).status


async def test_create_server_returns_the_typed_server(cloud: CloudSession) -> None:
    server = await make(cloud)

    assert server.name == "web-1"
    assert server.status == "ACTIVE"
    assert server.metadata == {"role": "web", REQUEST_ID_KEY: "req-1"}
    assert server.request_id == "req-1"
    assert server.image_id == CIRROS
    assert server.flavor == "m1.small"
    assert server.locked is False
    assert len(server.ip_addresses) == 1


async def test_retried_create_finds_the_server_it_already_made(
    cloud: CloudSession, sim: SimControl
) -> None:
    first = await make(cloud)
    retried = await make(cloud)
    other = await make(cloud, request_id="req-2")

    assert retried.id == first.id
    assert other.id != first.id
    assert (await sim.state())["servers"] == 2


async def test_create_without_request_id_always_creates(cloud: CloudSession) -> None:
    one = await cloud.compute.create_server("solo", CIRROS, SMALL)
    two = await cloud.compute.create_server("solo", CIRROS, SMALL)

    assert one.id != two.id
    assert one.request_id is None


async def test_create_with_a_bad_name_is_an_invalid_request(cloud: CloudSession) -> None:
    with pytest.raises(InvalidRequest, match="400") as caught:
        await cloud.compute.create_server(" padded ", CIRROS, SMALL)

    assert not caught.value.retryable


async def test_get_unknown_server_raises_backend_not_found(cloud: CloudSession) -> None:
    with pytest.raises(BackendNotFound):
        await cloud.compute.get_server("00000000-0000-0000-0000-000000000000")


async def test_delete_is_idempotent(cloud: CloudSession) -> None:
    server = await make(cloud)

    assert await cloud.compute.delete_server(server.id) is True
    assert await cloud.compute.delete_server(server.id) is False
    with pytest.raises(BackendNotFound):
        await cloud.compute.get_server(server.id)


async def test_list_servers_filters_and_follows_pages(cloud: CloudSession) -> None:
    for n in range(5):
        await make(cloud, f"web-{n}", request_id=f"r{n}")
    db = await cloud.compute.create_server("db-1", CIRROS, LARGE, {"role": "db"})
    await cloud.compute.stop(db.id)

    everything = await cloud.compute.list_servers(page_size=2)
    webs = await cloud.compute.list_servers(name="^web-", page_size=2)
    stopped = await cloud.compute.list_servers(status="SHUTOFF")
    by_meta = await cloud.compute.list_servers(metadata={"role": "db"})
    by_flavor = await cloud.compute.list_servers(flavor=LARGE)  # Nova filters by flavor id

    assert len(everything) == len({s.id for s in everything}) == 6
    assert sorted(s.name for s in webs) == [f"web-{n}" for n in range(5)]
    assert [s.id for s in stopped] == [db.id]
    assert [s.id for s in by_meta] == [db.id]
    assert [s.id for s in by_flavor] == [db.id]


async def test_every_server_action_moves_the_server(cloud: CloudSession) -> None:
    server_id = (await make(cloud)).id
    compute = cloud.compute
    seen = []

    await compute.reboot(server_id)
    seen.append(await status(cloud, server_id))
    await compute.reboot(server_id, "HARD")
    seen.append(await status(cloud, server_id))
    await compute.stop(server_id)
    seen.append(await status(cloud, server_id))
    await compute.start(server_id)
    seen.append(await status(cloud, server_id))
    await compute.pause(server_id)
    seen.append(await status(cloud, server_id))
    await compute.unpause(server_id)
    seen.append(await status(cloud, server_id))
    rebuilt = await compute.rebuild(server_id)
    seen.append(await status(cloud, server_id))
    await compute.rebuild(server_id, image=CIRROS_V2)
    after = await compute.get_server(server_id)

    assert seen == ["ACTIVE", "ACTIVE", "SHUTOFF", "ACTIVE", "PAUSED", "ACTIVE", "ACTIVE"]
    assert rebuilt.status == "REBUILD"
    assert rebuilt.image_id == CIRROS
    assert after.image_id == CIRROS_V2


async def test_lock_blocks_actions_until_unlock(cloud: CloudSession) -> None:
    server_id = (await make(cloud)).id

    await cloud.compute.lock(server_id, reason="stack locked")
    locked = await cloud.compute.get_server(server_id)
    with pytest.raises(BackendConflict, match="locked") as caught:
        await cloud.compute.reboot(server_id, "HARD")
    with pytest.raises(BackendConflict):
        await cloud.compute.delete_server(server_id)
    await cloud.compute.unlock(server_id)
    await cloud.compute.pause(server_id)

    assert (locked.locked, locked.locked_reason) == (True, "stack locked")
    assert not caught.value.retryable
    assert await status(cloud, server_id) == "PAUSED"


async def test_action_in_wrong_state_raises_backend_conflict(cloud: CloudSession) -> None:
    server_id = (await make(cloud)).id

    with pytest.raises(BackendConflict, match="vm_state active"):
        await cloud.compute.start(server_id)
    with pytest.raises(BackendConflict):
        await cloud.compute.unpause(server_id)


async def test_actions_on_unknown_server_raise_backend_not_found(cloud: CloudSession) -> None:
    with pytest.raises(BackendNotFound):
        await cloud.compute.reboot("00000000-0000-0000-0000-000000000000")
    with pytest.raises(InvalidRequest):
        await cloud.compute.stop("")


async def test_version_is_the_reachability_check(cloud: CloudSession) -> None:
    assert await cloud.compute.version() == "2.73"


class RecordingTransport(httpx.AsyncBaseTransport):
    """simcloud in process, keeping every request the driver sends."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.sent: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return await self.inner.handle_async_request(request)


async def test_the_reachability_ping_asks_for_wardens_microversion(
    simcloud: RunningSimcloud,
) -> None:
    app = create_simcloud(SimConfig())
    async with app.router.lifespan_context(app):
        transport = RecordingTransport(httpx.ASGITransport(app=app))
        async with CloudSession(simcloud.cloud_config(), transport=transport) as session:
            await session.compute.ping(timeout_s=5)
    [ping] = [r for r in transport.sent if r.url.path.endswith("/servers/detail")]
    assert ping.headers["OpenStack-API-Version"] == f"compute {MICROVERSION}"
    assert ping.url.params["limit"] == "1"
