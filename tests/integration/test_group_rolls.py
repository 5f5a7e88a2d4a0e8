"""A ResourceGroup's rolling update end to end: API over HTTP, real Temporal, simcloud.

Six servers, one marked unhealthy in the group's own stack, rolled onto a new image
two at a time with four in service: the marked one goes first and keeps its name,
the healthy ones are rebuilt in place, and no server is left behind.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from activities.cloud import CloudConfig, CloudSession
from activities.cloud.compute import Server
from config import Settings
from tests.integration.conftest import Warden
from tests.integration.test_stacks import BASE, create_stack, resources, settled
from tests.support.cloud_ids import CIRROS_V2

pytestmark = pytest.mark.integration

ROLLING = {"rolling_update": {"max_batch_size": 2, "min_in_service": 4, "pause_time": 1}}
SERVERS = {
    "heat_template_version": "2021-04-16",
    "parameters": {"image": {"type": "string", "default": "cirros"}},
    "resources": {
        "servers": {
            "type": "OS::Heat::ResourceGroup",
            "update_policy": ROLLING,
            "properties": {
                "count": 6,
                "resource_def": {
                    "type": "OS::Nova::Server",
                    "properties": {
                        "name": "web-%index%",
                        "image": {"get_param": "image"},
                        "flavor": "m1.tiny",
                    },
                },
            },
        }
    },
    "outputs": {"ids": {"value": {"get_attr": ["servers", "refs"]}}},
}


async def servers_of(warden: Warden, stack_id: str) -> dict[str, Server]:
    settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        return {
            s.id: s
            for s in await cloud.compute.list_servers()
            if s.metadata.get("warden_stack") == stack_id
        }


async def group_stack(api: httpx.AsyncClient, stack_id: str) -> tuple[str, str]:
    listed = (await api.get(BASE, params={"show_nested": "true"})).json()["stacks"]
    (group,) = [s for s in listed if s["parent"] == stack_id]
    return group["id"], f"{BASE}/{group['stack_name']}/{group['id']}"


def update_order(events: list[dict[str, Any]]) -> list[str]:
    """Members in the order the roll started updating them (events come oldest first)."""
    started = [e["resource_name"] for e in events if e["resource_status"] == "UPDATE_IN_PROGRESS"]
    return list(dict.fromkeys(n for n in started if n.isdigit()))


def fewest_in_service(events: list[dict[str, Any]], unhealthy: set[str]) -> int:
    """The fewest members in service at any event of the roll (6 members)."""
    busy: set[str] = set()
    fewest = 6 - len(unhealthy)
    for e in (e for e in events if e["resource_name"].isdigit()):  # members, not the stack
        name, status = e["resource_name"], e["resource_status"]
        if status == "UPDATE_IN_PROGRESS":
            busy.add(name)
        elif status in ("UPDATE_COMPLETE", "CREATE_COMPLETE"):  # updated, or replaced
            busy.discard(name)
            unhealthy.discard(name)
        fewest = min(fewest, 6 - len(busy | unhealthy))
    return fewest


@pytest.mark.timeout(180)
async def test_resource_group_rolls_servers_onto_a_new_image_unhealthy_first(
    warden: Warden,
) -> None:
    async with warden.client() as api:
        _, url = await create_stack(api, SERVERS)
        stack = await settled(api, url)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        group_id, group_url = await group_stack(api, stack["id"])
        before = await resources(api, group_url)
        assert sorted(before) == [str(i) for i in range(6)]
        marked = await api.patch(f"{group_url}/resources/2", json={"mark_unhealthy": True})
        assert marked.status_code == 200, marked.text

        update = await api.patch(url, json={"parameters": {"image": "cirros-v2"}})
        assert update.status_code == 202, update.text
        stack = await settled(api, url)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]

        after = await resources(api, group_url)
        assert sorted(after) == sorted(before)  # names kept
        ids = {n: r["physical_resource_id"] for n, r in after.items()}
        assert ids["2"] != before["2"]["physical_resource_id"]  # replaced by the same name
        assert all(ids[n] == before[n]["physical_resource_id"] for n in after if n != "2")
        events = (await api.get(f"{group_url}/events", params={"limit": 1000})).json()["events"]
        order = update_order(events)
        assert sorted(order) == sorted(before) and "2" in order[:2], order
        assert fewest_in_service(events, {"2"}) >= 4

        servers = await servers_of(warden, group_id)
        assert set(servers) == set(ids.values())  # no orphan, none missing
        assert {s.image_id for s in servers.values()} == {CIRROS_V2}  # the name, looked up
        assert all(s.status == "ACTIVE" for s in servers.values())
