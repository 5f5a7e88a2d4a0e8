"""Driver Octavia calls against simcloud over HTTP."""

from __future__ import annotations

import pytest

from activities.cloud import CloudSession
from domain.errors import BackendNotFound, InvalidRequest
from tests.support.cloud_ids import CIRROS, SMALL
from tests.support.simcloud_server import SimControl


async def test_members_report_operating_status_of_their_servers(
    cloud: CloudSession, sim: SimControl
) -> None:
    meta = {"lb_pool_id": "web-pool"}
    one = await cloud.compute.create_server("web-1", CIRROS, SMALL, meta)
    two = await cloud.compute.create_server("web-2", CIRROS, SMALL, meta)

    before = await cloud.loadbalancer.list_members("web-pool")
    await sim.fault(one.id, "lb_offline")
    await sim.fault(two.id, "error")
    after = {m.name: m for m in await cloud.loadbalancer.list_members("web-pool")}

    assert {m.operating_status for m in before} == {"ONLINE"}
    assert not any(m.failed for m in before)
    assert after["web-1"].operating_status == "OFFLINE"
    assert after["web-2"].operating_status == "ERROR"
    assert after["web-1"].failed
    assert after["web-2"].failed
    assert after["web-1"].address == one.ip_addresses[0]


async def test_add_and_remove_members(cloud: CloudSession) -> None:
    server = await cloud.compute.create_server("db-1", CIRROS, SMALL)

    member = await cloud.loadbalancer.add_member("db-pool", server.ip_addresses[0], 5432, "db")
    listed = await cloud.loadbalancer.list_members("db-pool")
    removed = await cloud.loadbalancer.remove_member("db-pool", member.id)
    removed_again = await cloud.loadbalancer.remove_member("db-pool", member.id)

    assert member.operating_status == "ONLINE"
    assert [m.id for m in listed] == [member.id]
    assert (removed, removed_again) == (True, False)
    assert await cloud.loadbalancer.list_members("db-pool") == []


async def test_unknown_pool_raises_backend_not_found(cloud: CloudSession) -> None:
    with pytest.raises(BackendNotFound):
        await cloud.loadbalancer.list_members("no-such-pool")


async def test_bad_member_is_an_invalid_request(cloud: CloudSession) -> None:
    with pytest.raises(InvalidRequest):
        await cloud.loadbalancer.add_member("p", "not-an-address", 80)
