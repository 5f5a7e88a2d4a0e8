"""Two workers and two API replicas (separate processes) on one Temporal and one
PostgreSQL: Temporal shares the work between the workers; a worker SIGKILLed while a
scale-in waits on its lifecycle hooks, and one SIGKILLed while a recovery waits for
its new server, leave the other to finish; no server is deleted twice; both APIs
answer alike.

Which worker did what comes from the workflow histories: each workflow task and
activity attempt names its worker's identity, `<pid>@<host>` by default.
"""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from tests.integration.conftest import Warden, replica_warden
from tests.integration.test_health import attach_health, health_spec
from tests.integration.test_lifecycle_hooks import (
    act,
    hooked_cluster,
    nodes_of,
    queued_messages,
    waiting_tokens,
)
from tests.integration.test_platform import action_done, create_cluster
from tests.support.eventually import eventually
from tests.support.processes import Proc, wait_http
from tests.support.replicas import Replicas
from tests.support.simcloud_server import SimControl

pytestmark = pytest.mark.integration


def worker_pid(identity: str) -> int:
    """The process id in a default worker identity (`<pid>@<host>`)."""
    return int(identity.split("@", 1)[0])


async def identities(
    client: Client, workflow_id: str, since: datetime | None = None
) -> list[tuple[str, str]]:
    """(kind, worker identity) of each completed workflow task and started activity."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    found = []
    for event in history.events:
        if since is not None and event.event_time.ToDatetime(tzinfo=UTC) < since:
            continue
        if event.HasField("workflow_task_completed_event_attributes"):
            found.append(("workflow", event.workflow_task_completed_event_attributes.identity))
        if event.HasField("activity_task_started_event_attributes"):
            found.append(("activity", event.activity_task_started_event_attributes.identity))
    return found


async def workflow_ids(client: Client, task_queue: str) -> list[str]:
    """Every workflow run on the replicas' task queue so far."""
    return [wf.id async for wf in client.list_workflows(f'TaskQueue="{task_queue}"')]


def holder(replicas: Replicas, workers: Iterable[tuple[str, str]]) -> Proc:
    """The worker that completed the last workflow task (its cache holds the workflow)."""
    last = [identity for kind, identity in workers if kind == "workflow"][-1]
    [proc] = [p for p in replicas.workers if p.process and p.process.pid == worker_pid(last)]
    return proc


def kill(proc: Proc) -> datetime:
    """SIGKILL a worker; when (to compare with history event times)."""
    proc.stop(signal.SIGKILL)
    return datetime.now(UTC)


def restart(replicas: Replicas, proc: Proc) -> None:
    proc.start()
    wait_http(replicas.worker_health_urls[replicas.workers.index(proc)], proc)


async def same_answers(replicas: Replicas, paths: list[str]) -> None:
    """Both API replicas answer every path with the same status and body."""
    for path in paths:
        answers = []
        for url in replicas.api_urls:
            async with httpx.AsyncClient(
                base_url=url, headers={"X-Auth-Token": "it-admin"}, timeout=30
            ) as api:
                response = await api.get(path)
                answers.append((response.status_code, response.json()))
        assert answers[0] == answers[1], path
        assert answers[0][0] == 200, answers[0]


async def new_cluster(api: httpx.AsyncClient, size: int) -> str:
    cluster_id, location = await create_cluster(api, f"r-{uuid.uuid4().hex[:6]}", size)
    assert (await action_done(api, location))["status"] == "SUCCEEDED"
    return cluster_id


async def scale_in_survives_a_killed_worker(
    warden: Warden, other_api: httpx.AsyncClient, replicas: Replicas
) -> str:
    """Scale in 2 of 3 nodes with a Zaqar hook; SIGKILL the worker holding a waiting
    victim; complete both hooks through the other API; the survivor deletes each victim
    exactly once."""
    queue = f"q-{uuid.uuid4().hex[:8]}"
    hooks = {"type": "zaqar", "params": {"queue": queue}, "timeout": 300}
    async with warden.client() as api:
        cluster_id, _ = await hooked_cluster(api, hooks, size=3)
        before = {n["id"]: n["physical_id"] for n in await nodes_of(api, cluster_id)}
        scaled = await act(other_api, cluster_id, {"scale_in": {"count": 2}})
        assert scaled.status_code == 202, scaled.text
        parent = scaled.headers["Location"].rsplit("/", 1)[-1]
        tokens = [t["id"] for t in await waiting_tokens(api, parent, n=2)]
        await queued_messages(warden, queue, at_least=2)
        victim_workflow = f"node-delete:{tokens[0]}"

        async def first_task_done() -> list[tuple[str, str]] | None:
            # The message goes out from inside the victim's first workflow task (a local
            # activity), so it can be queued before that task's completion is recorded.
            found = await identities(warden.temporal, victim_workflow)
            return found if any(kind == "workflow" for kind, _ in found) else None

        killed = holder(replicas, await eventually(first_task_done, what="first task recorded"))
        [survivor] = [w for w in replicas.workers if w is not killed]
        killed_at = kill(killed)
        for token in tokens:
            body = {"complete_lifecycle": {"lifecycle_action_token": token}}
            assert (await act(other_api, cluster_id, body)).status_code == 202
        done = await action_done(other_api, scaled.headers["Location"])
        assert done["status"] == "SUCCEEDED", done
        assert survivor.process is not None
        after_kill = await identities(warden.temporal, victim_workflow, since=killed_at)
        assert after_kill and {worker_pid(i) for _, i in after_kill} == {survivor.process.pid}
        [kept] = await nodes_of(api, cluster_id)
        assert kept["physical_id"] == before[kept["id"]]
        deletes = replicas.delete_requests()
        assert {pid: deletes[pid] for pid in before.values()} == {
            pid: 0 if nid == kept["id"] else 1 for nid, pid in before.items()
        }
    restart(replicas, killed)
    return cluster_id


async def recovery_survives_a_killed_worker(
    warden: Warden, sim: SimControl, replicas: Replicas
) -> str:
    """RECREATE a failed node; SIGKILL the worker holding its recovery while the new
    server builds; the survivor finishes it; the old server is deleted once."""
    async with warden.client() as api:
        cluster_id = await new_cluster(api, 2)
        policy_id = await attach_health(api, cluster_id, health_spec([{"name": "RECREATE"}]))
        kept, victim = sorted(await nodes_of(api, cluster_id), key=lambda n: n["name"])
        await sim.fault(victim["physical_id"], "error", cured_by=["RECREATE"])
        action_id = await building_replacement(api, warden.temporal, cluster_id, victim["id"])
        workflow_id = f"node-recover:{victim['id']}:{action_id}"
        killed = holder(replicas, await identities(warden.temporal, workflow_id))
        [survivor] = [w for w in replicas.workers if w is not killed]
        killed_at = kill(killed)
        done = await action_done(api, f"/v1/actions/{action_id}")
        assert done["status"] == "SUCCEEDED", done
        assert survivor.process is not None
        after_kill = await identities(warden.temporal, workflow_id, since=killed_at)
        assert after_kill and {worker_pid(i) for _, i in after_kill} == {survivor.process.pid}
        node = (await api.get(f"/v1/nodes/{victim['id']}")).json()["node"]
        assert node["status"] == "ACTIVE" and node["physical_id"] != victim["physical_id"]
        deletes = replicas.delete_requests()
        assert deletes[victim["physical_id"]] == 1
        assert deletes[kept["physical_id"]] == deletes[node["physical_id"]] == 0
        detached = await act(api, cluster_id, {"policy_detach": {"policy_id": policy_id}})
        assert detached.status_code == 202, detached.text
    restart(replicas, killed)
    return cluster_id


async def building_replacement(
    api: httpx.AsyncClient, client: Client, cluster_id: str, node_id: str
) -> str:
    """The CLUSTER_RECOVER action, once its node's recovery workflow waits between polls
    of the new server (no activity runs anywhere: a killed worker leaves none to time out)."""

    async def waiting() -> str | None:
        params = {"target": cluster_id, "name": "CLUSTER_RECOVER"}
        actions: list[dict[str, Any]] = (await api.get("/v1/actions", params=params)).json()[
            "actions"
        ]
        for action in actions:
            workflow_id = f"node-recover:{node_id}:{action['id']}"
            try:
                described = await client.get_workflow_handle(workflow_id).describe()
            except RPCError:
                continue
            if any(
                p.activity_type.name == "wait_server_active"
                and p.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
                and p.attempt > 1
                for p in described.raw_description.pending_activities
            ):
                return str(action["id"])
        return None

    return await eventually(waiting, timeout=60, interval=0.05, what="replacement building")


async def worker_pids_at_work(client: Client, task_queue: str) -> dict[str, set[int]]:
    """The pids of the workers that ran workflow tasks, and activities, on the queue."""
    pids: dict[str, set[int]] = {"workflow": set(), "activity": set()}
    for workflow_id in await workflow_ids(client, task_queue):
        for kind, identity in await identities(client, workflow_id):
            pids[kind].add(worker_pid(identity))
    return pids


@pytest.mark.timeout(240)
async def test_two_workers_and_two_apis_share_the_work_and_survive_a_killed_worker(
    replicas: Replicas, dev_server: WorkflowEnvironment
) -> None:
    client = dev_server.client
    queue = replicas.env["WARDEN_TASK_QUEUE"]
    first, second = replica_warden(replicas, client, 1), replica_warden(replicas, client, 2)
    both = {w.process.pid for w in replicas.workers if w.process is not None}
    async with first.client() as api, second.client() as other_api:
        spread = await asyncio.gather(*(new_cluster(a, 2) for a in (api, other_api) * 2))
        at_work = await worker_pids_at_work(client, queue)
        assert at_work == {"workflow": both, "activity": both}, (at_work, both)
        scaled_in = await scale_in_survives_a_killed_worker(first, other_api, replicas)
        async with httpx.AsyncClient(base_url=replicas.simcloud_url) as sim:
            recovered = await recovery_survives_a_killed_worker(second, SimControl(sim), replicas)
    for cluster_id in [*spread, scaled_in, recovered]:
        await same_answers(
            replicas,
            [
                f"/v1/clusters/{cluster_id}",
                f"/v1/nodes?cluster_id={cluster_id}",
                f"/v1/actions?target={cluster_id}",
                f"/v1/events?cluster_id={cluster_id}",
            ],
        )
