"""Driver Keystone auth against simcloud over HTTP: caching, catalog, re-auth."""

from __future__ import annotations

import asyncio
import socket

import pytest

from activities.cloud import CloudSession
from domain.errors import BackendError, BackendUnavailable
from tests.support.simcloud_server import RunningSimcloud, SimControl


async def test_catalog_gives_every_service_endpoint(
    cloud: CloudSession, simcloud: RunningSimcloud
) -> None:
    assert await cloud.endpoint("compute") == f"{simcloud.url}/compute/v2.1"
    assert await cloud.endpoint("messaging") == f"{simcloud.url}/messaging"
    assert await cloud.endpoint("load-balancer") == f"{simcloud.url}/load-balancer"


async def test_token_is_cached_across_calls(cloud: CloudSession, sim: SimControl) -> None:
    for _ in range(3):
        await cloud.compute.list_servers()

    assert (await sim.state())["tokens"] == 1


async def test_concurrent_first_calls_authenticate_once(
    cloud: CloudSession, sim: SimControl
) -> None:
    await asyncio.gather(*(cloud.compute.list_servers() for _ in range(10)))

    assert (await sim.state())["tokens"] == 1


async def test_reauthenticates_once_after_token_revocation(
    cloud: CloudSession, sim: SimControl
) -> None:
    await cloud.compute.list_servers()
    first = (await cloud.auth.token()).value
    await sim.revoke_tokens()

    servers = await cloud.compute.list_servers()

    assert servers == []
    assert (await cloud.auth.token()).value != first
    assert (await sim.state())["tokens"] == 1


async def test_reauthenticates_after_token_expiry_in_simulated_time(
    cloud: CloudSession, sim: SimControl
) -> None:
    await cloud.compute.list_servers()
    await sim.advance_clock(3601)

    assert await cloud.compute.list_servers() == []


async def test_application_credential_authenticates(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    config = simcloud.cloud_config(
        username=None,
        password=None,
        project_name=None,
        application_credential_id=simcloud.config.application_credential_id,
        application_credential_secret=simcloud.config.application_credential_secret,
    )
    async with CloudSession(config) as session:
        assert await session.compute.version() == "2.73"


async def test_internal_interface_and_region_select_endpoints(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    config = simcloud.cloud_config(interface="internal", region_name="RegionOne")
    async with CloudSession(config) as session:
        assert await session.endpoint("compute") == f"{simcloud.url}/compute/v2.1"


async def test_unknown_region_is_a_permanent_backend_error(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    async with CloudSession(simcloud.cloud_config(region_name="Mars")) as session:
        with pytest.raises(
            BackendError, match="compute service in Mars region not found"
        ) as caught:
            await session.compute.list_servers()

    assert not caught.value.retryable


async def test_wrong_password_is_a_permanent_backend_error(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    async with CloudSession(simcloud.cloud_config(password="wrong")) as session:
        with pytest.raises(BackendError, match="401") as caught:
            await session.compute.list_servers()

    assert not isinstance(caught.value, BackendUnavailable)
    assert not caught.value.retryable


async def test_keystone_root_url_gets_v3_appended(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    async with CloudSession(simcloud.cloud_config(auth_url=f"{simcloud.url}/identity")) as s:
        assert await s.compute.list_servers() == []


async def test_an_endpoint_override_replaces_the_catalog_url_of_its_service(
    simcloud: RunningSimcloud, sim: SimControl
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    overrides = {"compute": f"{dead}/v2.1/%(project_id)s/", "load-balancer": dead}
    async with CloudSession(simcloud.cloud_config(endpoint_overrides=overrides)) as session:
        project_id = (await session.auth.token()).project_id
        assert await session.endpoint("compute") == f"{dead}/v2.1/{project_id}"
        with pytest.raises(BackendUnavailable, match="compute GET /servers"):
            await session.compute.list_servers()
        assert await session.endpoint("messaging") == f"{simcloud.url}/messaging"
