"""Stacks end to end: API over HTTP, real Temporal, worker and simcloud.

Proves the Heat mark-unhealthy and lock-stack designs: CHECK_FAILED by a user and by
stack check, the next update replacing it with a new server, the 409s while busy or
locked, lock level `all` locking servers at the compute API, and bad input as 400s.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid
from typing import Any

import httpx
import pytest

from activities.cloud import CloudConfig, CloudSession
from config import Settings
from tests.integration.conftest import Warden
from tests.integration.test_platform import sim_servers
from tests.support.eventually import eventually
from tests.support.processes import wait_http
from tests.support.simcloud_server import SimControl
from tests.support.temporal import binary

pytestmark = pytest.mark.integration

BASE = "/v1/demo/stacks"
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"flavor": {"type": "string", "default": "m1.tiny"}},
    "resources": {
        "config": {"type": "OS::Heat::TestResource", "properties": {"value": "v1"}},
        "web": {
            "type": "OS::Nova::Server",
            "properties": {
                "image": "cirros",
                "flavor": {"get_param": "flavor"},
                "metadata": {"config": {"get_attr": ["config", "output"]}},
            },
        },
    },
    "outputs": {"web_id": {"value": {"get_resource": "web"}}},
}


async def create_stack(
    api: httpx.AsyncClient, template: dict[str, Any] | str = TEMPLATE, **extra: Any
) -> tuple[str, str]:
    name = f"s{uuid.uuid4().hex[:8]}"
    response = await api.post(BASE, json={"stack_name": name, "template": template, **extra})
    assert response.status_code == 201, response.text
    body = response.json()["stack"]
    base = str(api.base_url).rstrip("/")
    assert body["links"][0]["href"] == f"{base}{BASE}/{name}/{body['id']}"
    return name, f"{BASE}/{name}/{body['id']}"


async def settled(api: httpx.AsyncClient, url: str, within: float = 60) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        stack: dict[str, Any] = (await api.get(url)).json()["stack"]
        return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

    return await eventually(done, timeout=within, what=f"{url} settled")


async def resources(api: httpx.AsyncClient, url: str) -> dict[str, dict[str, Any]]:
    response = await api.get(f"{url}/resources")
    assert response.status_code == 200, response.text
    return {r["resource_name"]: r for r in response.json()["resources"]}


async def server_locked(warden: Warden, server_id: str) -> bool:
    settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        return (await cloud.compute.get_server(server_id)).locked


async def test_mark_unhealthy_then_patch_replaces_server(
    warden_on_each_database: Warden,
) -> None:
    """On SQLite, and on PostgreSQL through replicas (see `warden_on_each_database`)."""
    warden = warden_on_each_database
    async with warden.client() as api:
        name, url = await create_stack(api)
        stack = await settled(api, url)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        redirect = await api.get(f"{BASE}/{name}", follow_redirects=False)
        assert redirect.status_code == 302
        assert redirect.headers["location"] == f"{warden.api_url}{url}"
        old = (await resources(api, url))["web"]
        assert old["resource_status"] == "CREATE_COMPLETE"
        assert stack["outputs"] == [
            {
                "output_key": "web_id",
                "output_value": old["physical_resource_id"],
                "description": "No description given",
            }
        ]

        # By physical id, with a reason; the answer is 200 with an empty body.
        marked = await api.patch(
            f"{url}/resources/{old['physical_resource_id']}",
            json={"mark_unhealthy": "True", "resource_status_reason": "app is wedged"},
        )
        assert marked.status_code == 200 and marked.content == b""
        web = (await resources(api, url))["web"]
        assert (web["resource_status"], web["resource_status_reason"]) == (
            "CHECK_FAILED",
            "app is wedged",
        )

        assert (await api.patch(url, json={})).status_code == 202
        stack = await settled(api, url)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        web = (await resources(api, url))["web"]
        assert web["physical_resource_id"] not in ("", old["physical_resource_id"])
        assert web["resource_status"] == "CREATE_COMPLETE"  # the replacement, as in Heat
        servers = await sim_servers(warden)
        assert old["physical_resource_id"] not in servers
        assert servers[web["physical_resource_id"]] == "ACTIVE"
        events = (await api.get(f"{url}/events")).json()["events"]
        assert any(
            e["resource_name"] == "web" and e["resource_status"] == "CHECK_FAILED" for e in events
        )


async def test_mark_unhealthy_rules_and_bad_bodies(warden: Warden) -> None:
    async with warden.client() as api:
        _, url = await create_stack(api)
        await settled(api, url)
        web = f"{url}/resources/web"
        for body in (
            {},
            {"mark_unhealthy": "yes"},
            {"mark_unhealthy": 1},
            {"mark_unhealthy": True, "extra": 1},
        ):
            response = await api.patch(web, json=body)
            assert response.status_code == 400, (body, response.text)
        missing = await api.patch(f"{url}/resources/nope", json={"mark_unhealthy": True})
        assert missing.status_code == 404
        # false on a healthy resource changes nothing.
        assert (await api.patch(web, json={"mark_unhealthy": False})).status_code == 200
        assert (await resources(api, url))["web"]["resource_status"] == "CREATE_COMPLETE"
        assert (await api.patch(web, json={"mark_unhealthy": True})).status_code == 200
        row = (await resources(api, url))["web"]
        assert row["resource_status_reason"] == "state changed by resource_mark_unhealthy api"
        assert (await api.patch(web, json={"mark_unhealthy": "FALSE"})).status_code == 200
        assert (await resources(api, url))["web"]["resource_status"] == "CHECK_COMPLETE"


async def test_busy_stack_answers_409_with_heat_wording(warden: Warden) -> None:
    slow = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "slow": {
                "type": "OS::Heat::TestResource",
                "properties": {"action_wait_secs": {"create": 4}},
            }
        },
    }
    async with warden.client() as api:
        name, url = await create_stack(api, slow)
        response = await api.patch(f"{url}/resources/slow", json={"mark_unhealthy": True})
        assert response.status_code == 409
        assert response.json()["error"]["message"] == (
            f"Stack {name} already has an action (CREATE) in progress."
        )
        assert (await api.patch(url, json={})).status_code == 409
        assert (await api.post(f"{url}/actions", json={"lock": None})).status_code == 409
        stack = await settled(api, url)
        assert stack["stack_status"] == "CREATE_COMPLETE"


async def test_lock_all_locks_servers_and_refuses_changes(warden: Warden) -> None:
    async with warden.client() as api:
        _, url = await create_stack(api)
        await settled(api, url)
        server = (await resources(api, url))["web"]["physical_resource_id"]
        lock = {"lock": {"level": "all", "reason": "db maintenance", "owner": "ops"}}
        response = await api.post(f"{url}/actions", json=lock)
        assert response.status_code == 200, response.text
        stack = await settled(api, url)
        assert stack["stack_status"] == "LOCK_COMPLETE", stack["stack_status_reason"]
        assert stack["lock"]["reason"] == "db maintenance"
        assert await server_locked(warden, server)

        refused = [
            await api.patch(url, json={}),
            await api.put(url, json={"template": TEMPLATE}),
            await api.delete(url),
            await api.post(f"{url}/actions", json={"check": None}),
            await api.post(f"{url}/actions", json={"suspend": None}),
            await api.patch(f"{url}/resources/web", json={"mark_unhealthy": True}),
        ]
        assert [r.status_code for r in refused] == [409] * len(refused)
        assert "locked" in refused[0].json()["error"]["message"]
        assert (await resources(api, url))["web"]["resource_status"] == "LOCK_COMPLETE"

        # Lock again to change the level: servers are unlocked, the stack stays locked.
        stacks_only = {"lock": {"level": "stacks"}}
        assert (await api.post(f"{url}/actions", json=stacks_only)).status_code == 200
        assert (await settled(api, url))["stack_status"] == "LOCK_COMPLETE"
        assert not await server_locked(warden, server)
        assert (await api.patch(url, json={})).status_code == 409

        assert (await api.post(f"{url}/actions", json={"unlock": None})).status_code == 200
        assert (await settled(api, url))["stack_status"] == "UNLOCK_COMPLETE"
        again = await api.post(f"{url}/actions", json={"unlock": None})
        assert again.status_code == 409
        assert (await api.patch(url, json={})).status_code == 202
        assert (await settled(api, url))["stack_status"] == "UPDATE_COMPLETE"


async def test_stack_check_finds_a_stopped_server_and_update_replaces_it(warden: Warden) -> None:
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        _, url = await create_stack(api)
        await settled(api, url)
        web = (await resources(api, url))["web"]
        await SimControl(sim).fault(web["physical_resource_id"], "shutoff")
        assert (await api.post(f"{url}/actions", json={"check": None})).status_code == 200
        stack = await settled(api, url)
        assert stack["stack_status"] == "CHECK_FAILED"
        rows = await resources(api, url)
        assert rows["web"]["resource_status"] == "CHECK_FAILED"
        assert "SHUTOFF" in rows["web"]["resource_status_reason"]
        assert rows["config"]["resource_status"] == "CHECK_COMPLETE"
        assert (await api.patch(url, json={})).status_code == 202
        assert (await settled(api, url))["stack_status"] == "UPDATE_COMPLETE"
        new = (await resources(api, url))["web"]["physical_resource_id"]
        assert new != web["physical_resource_id"]
        assert (await sim_servers(warden))[new] == "ACTIVE"


async def test_action_bodies_and_templates_are_checked(warden: Warden) -> None:
    async with warden.client() as api:
        _, url = await create_stack(api)
        await settled(api, url)
        cases = {
            "No action specified": {},
            "Multiple actions specified": {"check": None, "suspend": None},
            "Invalid action explode specified": {"explode": None},
        }
        for message, body in cases.items():
            response = await api.post(f"{url}/actions", json=body)
            assert response.status_code == 400
            assert response.json()["error"]["message"] == message
        bad_templates = [
            {"heat_template_version": "2021-04-16", "resources": {"a": {"type": "OS::Nope"}}},
            {
                "heat_template_version": "2021-04-16",
                "resources": {
                    "a": {"type": "OS::Heat::None", "depends_on": "b"},
                    "b": {"type": "OS::Heat::None", "depends_on": "a"},
                },
            },
            {
                "heat_template_version": "2021-04-16",
                "resources": {
                    "a": {"type": "OS::Heat::None", "properties": {"x": {"get_resource": "zz"}}}
                },
            },
            "heat_template_version: [unclosed",
        ]
        for template in bad_templates:
            response = await api.post(BASE, json={"stack_name": "bad", "template": template})
            assert response.status_code == 400, (template, response.text)
        listed = (await api.get(BASE)).json()["stacks"]
        assert "bad" not in {s["stack_name"] for s in listed}
        name = url.split("/")[-2]
        dup = await api.post(BASE, json={"stack_name": name, "template": TEMPLATE})
        assert dup.status_code == 409


async def test_delete_removes_servers_and_the_stack(warden: Warden) -> None:
    async with warden.client() as api:
        _, url = await create_stack(api)
        await settled(api, url)
        server = (await resources(api, url))["web"]["physical_resource_id"]
        assert (await api.delete(url)).status_code == 204

        async def gone() -> bool:
            return (await api.get(url)).status_code == 404

        await eventually(gone, timeout=60, what="stack deleted")
        assert server not in await sim_servers(warden)


async def test_other_project_and_reader_are_refused(warden: Warden) -> None:
    async with warden.client() as api:
        _, url = await create_stack(api)
        await settled(api, url)
    async with warden.client("it-other") as other:
        assert (await other.get(url)).status_code == 403
        assert (await other.get(url.replace("/demo/", "/other/"))).status_code == 404
    async with warden.client("it-reader") as reader:
        assert (await reader.get(url)).status_code == 200
        assert (await reader.patch(url, json={})).status_code == 403


GROUP_TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "app": {
            "type": "OS::Heat::Stack",
            "properties": {
                "template": {
                    "heat_template_version": "2021-04-16",
                    "resources": {"note": {"type": "OS::Heat::TestResource"}},
                }
            },
        },
        "asg": {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {
                "min_size": 1,
                "max_size": 3,
                "desired_capacity": 2,
                "resource": {
                    "type": "OS::Nova::Server",
                    "properties": {"image": "cirros", "flavor": "m1.tiny"},
                },
            },
        },
        "down": {
            "type": "OS::Heat::ScalingPolicy",
            "properties": {
                "auto_scaling_group_id": {"get_resource": "asg"},
                "adjustment_type": "change_in_capacity",
                "scaling_adjustment": -1,
            },
        },
    },
}


async def test_nested_stacks_and_group_scale_down_removes_failed_member_first(
    warden: Warden,
) -> None:
    async with warden.client() as api:
        name, url = await create_stack(api, GROUP_TEMPLATE)
        stack = await settled(api, url)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        top = {s["stack_name"] for s in (await api.get(BASE)).json()["stacks"]}
        everything = (await api.get(BASE, params={"show_nested": "true"})).json()["stacks"]
        nested = [s for s in everything if s["parent"] == stack["id"]]
        assert name in top and len(nested) == 2
        assert not {s["stack_name"] for s in nested} & top

        deep = (await api.get(f"{url}/resources", params={"nested_depth": 1})).json()
        members = [r for r in deep["resources"] if r["resource_type"] == "OS::Nova::Server"]
        assert len(members) == 2 and all(r["stack_id"] != stack["id"] for r in members)
        group = next(s for s in nested if s["id"] == members[0]["stack_id"])
        group_url = f"{BASE}/{group['stack_name']}/{group['id']}"

        # Mark the younger member unhealthy in the group's own stack, then scale down.
        victim = max(members, key=lambda r: (r["creation_time"], r["resource_name"]))
        marked = await api.patch(
            f"{group_url}/resources/{victim['resource_name']}", json={"mark_unhealthy": True}
        )
        assert marked.status_code == 200
        assert (await api.post(f"{url}/resources/down/signal")).status_code == 200
        stack = await settled(api, url)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        left = [r["resource_name"] for r in (await resources(api, group_url)).values()]
        assert victim["resource_name"] not in left and len(left) == 1
        assert victim["physical_resource_id"] not in await sim_servers(warden)

        not_a_policy = await api.post(f"{url}/resources/app/signal")
        assert not_a_policy.status_code == 400
        lock = await api.post(f"{url}/actions", json={"lock": {"level": "stacks"}})
        assert lock.status_code == 200
        assert (await settled(api, url))["stack_status"] == "LOCK_COMPLETE"
        assert (await api.get(group_url)).json()["stack"]["stack_status"] == "LOCK_COMPLETE"
        assert (await api.post(f"{url}/resources/down/signal")).status_code == 409
        assert (await api.patch(group_url, json={})).status_code == 409
        assert (await api.post(f"{url}/actions", json={"unlock": None})).status_code == 200
        await settled(api, url)
        assert (await api.delete(url)).status_code == 204

        async def all_gone() -> bool:
            listed = (await api.get(BASE, params={"show_nested": "true"})).json()["stacks"]
            return not any(s["id"] == stack["id"] or s["parent"] == stack["id"] for s in listed)

        await eventually(all_gone, timeout=60, what="stack and nested stacks deleted")


async def stack_servers(warden: Warden, stack_id: str) -> list[str]:
    settings = Settings(simcloud_port=int(warden.env["WARDEN_SIMCLOUD_PORT"]))
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        return [
            s.status
            for s in await cloud.compute.list_servers()
            if s.metadata.get("warden_stack") == stack_id
        ]


@pytest.mark.timeout(420)
async def test_create_survives_worker_kill_and_flaky_cloud_without_duplicates(
    warden: Warden,
) -> None:
    """Bounded by the activity timeouts and the retry back-off: a create_server that died
    with the worker is retried once its 60 s start-to-close timeout expires, and a call
    failing half the time backs off 1, 2, 4 … 30 s (ten failures in a row, 1 server in
    200, wait 181 s). Usually 1-2 minutes; the wait allows 60 s + ~13 failures in a row."""
    servers = {
        f"vm{i}": {
            "type": "OS::Nova::Server",
            "properties": {"image": "cirros", "flavor": "m1.tiny"},
        }
        for i in range(5)
    }
    template = {"heat_template_version": "2021-04-16", "resources": servers}
    async with warden.client() as api, httpx.AsyncClient(base_url=warden.simcloud_url) as sim:
        control = SimControl(sim)
        await control.api_faults(error_rate=0.3, latency_ms=300)
        try:
            _, url = await create_stack(api, template)
            worker = warden.procs["worker"]
            worker.stop(signal.SIGKILL)
            worker.start()
            wait_http(warden.worker_health_url, worker)
            stack = await eventually(
                lambda: _settled_once(api, url), timeout=360, what="create after worker kill"
            )
        finally:
            await control.api_faults(error_rate=0)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        assert await stack_servers(warden, stack["id"]) == ["ACTIVE"] * 5
        assert (await api.delete(url)).status_code == 204

        async def gone() -> bool:
            return (await api.get(url)).status_code == 404

        await eventually(gone, timeout=60, what="stack deleted")
        assert await stack_servers(warden, stack["id"]) == []


async def _settled_once(api: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
    stack: dict[str, Any] = (await api.get(url)).json()["stack"]
    return None if stack["stack_status"].endswith("IN_PROGRESS") else stack


async def test_app_marks_and_locks_a_stack_straight_through_temporal(warden: Warden) -> None:
    """The snippets of docs/stacks.md §From your app: a `temporalio` signal with a plain
    dict, then the `temporal workflow signal` CLI, reach the stack without the API."""
    async with warden.client() as api:
        _, url = await create_stack(api)
        stack = await settled(api, url)
        handle = warden.temporal.get_workflow_handle(f"stack:{stack['id']}")
        await handle.signal(
            "mark_unhealthy",
            {"resource_name": "web", "mark_unhealthy": True, "resource_status_reason": "probe"},
        )

        async def marked() -> dict[str, Any] | None:
            web = (await resources(api, url))["web"]
            return web if web["resource_status"] == "CHECK_FAILED" else None

        assert (await eventually(marked, what="mark by signal"))[
            "resource_status_reason"
        ] == "probe"

        lock_input = '{"level": "stacks", "reason": "from a shell", "owner": "ops"}'
        shell = await asyncio.to_thread(
            subprocess.run,
            [
                *(binary("temporal"), "workflow", "signal"),
                *("--address", warden.env["TEMPORAL_ADDRESS"]),
                *("--workflow-id", f"stack:{stack['id']}", "--name", "lock", "--input", lock_input),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shell.returncode == 0, shell.stderr

        async def locked() -> dict[str, Any] | None:
            current: dict[str, Any] = (await api.get(url)).json()["stack"]
            return current if current["stack_status"] == "LOCK_COMPLETE" else None

        assert (await eventually(locked, what="lock by shell signal"))["lock"]["owner"] == "ops"
        refused = await api.patch(url, json={})
        assert refused.status_code == 409 and "from a shell" in refused.text
        await handle.signal("unlock", {})

        async def unlocked() -> bool | None:
            current = (await api.get(url)).json()["stack"]
            return current["stack_status"] == "UNLOCK_COMPLETE" or None

        await eventually(unlocked, what="unlock by signal")
        assert (await api.delete(url)).status_code == 204
