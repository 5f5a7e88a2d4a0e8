"""simcloud's Nova server actions: transitions, state rules and locks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simcloud.config import SimConfig
from tests.support.cloud_ids import CIRROS, CIRROS_V2, SMALL
from tests.support.simcloud_server import in_process_simcloud, login

SERVERS = "/compute/v2.1/servers"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_simcloud(SimConfig(action_latency_ms=1_000)) as client:
        client.headers.update(await login(client))
        yield client


@pytest.fixture
async def server_id(client: httpx.AsyncClient) -> str:
    body = {"server": {"name": "web-1", "imageRef": CIRROS, "flavorRef": SMALL}}
    response = await client.post(SERVERS, json=body)
    return str(response.json()["server"]["id"])


async def act(client: httpx.AsyncClient, server_id: str, body: Any) -> httpx.Response:
    return await client.post(f"{SERVERS}/{server_id}/action", json=body)


async def status(client: httpx.AsyncClient, server_id: str) -> str:
    return str((await client.get(f"{SERVERS}/{server_id}")).json()["server"]["status"])


async def settle(client: httpx.AsyncClient) -> None:
    await client.post("/sim/clock", json={"advance_s": 1})


async def run(client: httpx.AsyncClient, server_id: str, body: Any) -> tuple[str, str]:
    """Apply an action: (status while it runs, status after the action latency)."""
    response = await act(client, server_id, body)
    assert response.status_code == 202, response.text
    during = await status(client, server_id)
    await settle(client)
    return during, await status(client, server_id)


@pytest.mark.parametrize(
    ("body", "during", "after"),
    [
        ({"reboot": {"type": "SOFT"}}, "REBOOT", "ACTIVE"),
        ({"reboot": {"type": "HARD"}}, "HARD_REBOOT", "ACTIVE"),
        ({"rebuild": {"imageRef": CIRROS_V2}}, "REBUILD", "ACTIVE"),
        ({"os-stop": None}, "ACTIVE", "SHUTOFF"),
        ({"pause": None}, "ACTIVE", "PAUSED"),
    ],
)
async def test_actions_from_active_pass_through_nova_statuses(
    client: httpx.AsyncClient, server_id: str, body: Any, during: str, after: str
) -> None:
    assert await run(client, server_id, body) == (during, after)


async def test_stop_start_pause_unpause_round_trip(
    client: httpx.AsyncClient, server_id: str
) -> None:
    assert (await run(client, server_id, {"os-stop": None}))[1] == "SHUTOFF"
    assert (await run(client, server_id, {"os-start": None}))[1] == "ACTIVE"
    assert (await run(client, server_id, {"pause": None}))[1] == "PAUSED"
    assert (await run(client, server_id, {"unpause": None}))[1] == "ACTIVE"


async def test_rebuild_keeps_a_stopped_server_stopped_and_changes_image(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await run(client, server_id, {"os-stop": None})

    response = await act(client, server_id, {"rebuild": {"imageRef": CIRROS_V2, "name": "web-9"}})
    await settle(client)
    server = (await client.get(f"{SERVERS}/{server_id}")).json()["server"]

    assert response.status_code == 202
    assert response.json()["server"]["status"] == "REBUILD"
    assert (server["status"], server["image"]["id"], server["name"]) == (
        "SHUTOFF",
        CIRROS_V2,
        "web-9",
    )


@pytest.mark.parametrize(
    ("setup", "body"),
    [
        ({"os-stop": None}, {"reboot": {"type": "SOFT"}}),
        ({"os-stop": None}, {"pause": None}),
        ({"os-stop": None}, {"os-stop": None}),
        ({"pause": None}, {"os-stop": None}),
        ({"pause": None}, {"rebuild": {"imageRef": "x"}}),
        (None, {"os-start": None}),
        (None, {"unpause": None}),
    ],
)
async def test_actions_in_a_wrong_vm_state_get_409(
    client: httpx.AsyncClient, server_id: str, setup: Any, body: Any
) -> None:
    if setup is not None:
        await run(client, server_id, setup)

    response = await act(client, server_id, body)

    assert response.status_code == 409
    assert "vm_state" in response.json()["conflictingRequest"]["message"]


async def test_action_during_a_transition_gets_409_but_hard_reboot_may_override(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await act(client, server_id, {"reboot": {"type": "SOFT"}})

    pause = await act(client, server_id, {"pause": None})
    hard = await act(client, server_id, {"reboot": {"type": "HARD"}})

    assert pause.status_code == 409
    assert "task_state rebooting" in pause.json()["conflictingRequest"]["message"]
    assert hard.status_code == 202
    assert await status(client, server_id) == "HARD_REBOOT"


async def test_hard_reboot_works_from_shutoff(client: httpx.AsyncClient, server_id: str) -> None:
    await run(client, server_id, {"os-stop": None})

    assert await run(client, server_id, {"reboot": {"type": "hard"}}) == ("HARD_REBOOT", "ACTIVE")


async def test_locked_server_refuses_everything_but_unlock(
    client: httpx.AsyncClient, server_id: str
) -> None:
    lock = await act(client, server_id, {"lock": {"locked_reason": "maintenance"}})
    server = (await client.get(f"{SERVERS}/{server_id}")).json()["server"]
    refused = [
        (await act(client, server_id, body)).status_code
        for body in ({"reboot": {"type": "HARD"}}, {"os-stop": None}, {"pause": None})
    ]
    delete = await client.delete(f"{SERVERS}/{server_id}")
    relock = await act(client, server_id, {"lock": None})
    unlock = await act(client, server_id, {"unlock": None})

    assert lock.status_code == 202
    assert (server["locked"], server["locked_reason"]) == (True, "maintenance")
    assert refused == [409, 409, 409]
    assert delete.status_code == 409
    assert relock.status_code == 202
    assert unlock.status_code == 202
    assert (await act(client, server_id, {"pause": None})).status_code == 202


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"pause": None, "unpause": None},
        {"explode": None},
        {"reboot": {}},
        {"reboot": {"type": "GENTLE"}},
        {"reboot": None},
        {"rebuild": {}},
        {"rebuild": {"imageRef": ""}},
        {"pause": {}},
        {"lock": {"why": "x"}},
        "pause",
    ],
)
async def test_malformed_actions_get_400(
    client: httpx.AsyncClient, server_id: str, body: Any
) -> None:
    response = await act(client, server_id, body)

    assert response.status_code == 400


async def test_actions_on_a_deleted_server_get_409(
    client: httpx.AsyncClient, server_id: str
) -> None:
    await client.delete(f"{SERVERS}/{server_id}")

    response = await act(client, server_id, {"reboot": {"type": "HARD"}})

    assert response.status_code == 409


async def test_a_server_whose_build_failed_takes_no_action_but_delete() -> None:
    """Nova's `must_have_launched`: hard reboot works from ERROR only for a server that
    once ran; one that failed to build can only be deleted (or recreated)."""
    async with in_process_simcloud(SimConfig(build_latency_ms=5_000)) as client:
        client.headers.update(await login(client))
        body = {"server": {"name": "web-1", "imageRef": CIRROS, "flavorRef": SMALL}}
        server_id = (await client.post(SERVERS, json=body)).json()["server"]["id"]
        await client.post(f"/sim/servers/{server_id}/fault", json={"kind": "error"})
        shown = (await client.get(f"{SERVERS}/{server_id}")).json()["server"]
        assert (shown["status"], shown["OS-SRV-USG:launched_at"]) == ("ERROR", None)

        for action in ({"reboot": {"type": "HARD"}}, {"rebuild": {"imageRef": CIRROS}}):
            refused = await act(client, server_id, action)
            assert refused.status_code == 409
            assert refused.json()["conflictingRequest"]["message"] == (
                f"Instance {server_id} is in an invalid state for '{next(iter(action))}'"
            )
        assert (await client.delete(f"{SERVERS}/{server_id}")).status_code == 204


async def test_a_server_that_ran_shows_when_it_launched_and_hard_reboots_from_error(
    client: httpx.AsyncClient, server_id: str
) -> None:
    launched = (await client.get(f"{SERVERS}/{server_id}")).json()["server"]
    assert launched["OS-SRV-USG:launched_at"] is not None
    await client.post(f"/sim/servers/{server_id}/fault", json={"kind": "error"})
    assert await run(client, server_id, {"reboot": {"type": "HARD"}}) == ("HARD_REBOOT", "ACTIVE")
