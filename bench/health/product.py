"""The health benchmark's calls to Warden: watched clusters, health policies attached to
them, and what their managers and events show."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from temporalio.client import Client, WorkflowHistory

from bench.health.settings import CREATE_CONCURRENCY, INTERVAL_S
from bench.stack import Stack
from bench.warden_api import create_cluster, ok, wait_action


@dataclass
class Watched:
    """A cluster of the benchmark and what the bench knows about it."""

    cluster_id: str
    nodes: list[dict[str, Any]] = field(default_factory=list)
    attached_at: float | None = None


def _health_spec(modes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "interval": INTERVAL_S,
                "node_update_timeout": 0,
                "detection_modes": modes,
            },
            "recovery": {"actions": [{"name": "REBOOT", "params": {"type": "HARD"}}]},
        },
    }


async def create_policy(api: httpx.AsyncClient, modes: list[dict[str, Any]]) -> str:
    """A health policy with these detection modes (interval `INTERVAL_S`, REBOOT)."""
    body = {"policy": {"name": f"bench-health-{uuid.uuid4().hex[:6]}", "spec": _health_spec(modes)}}
    return str(ok(await api.post("/v1/policies", json=body), 201)["policy"]["id"])


async def attach(api: httpx.AsyncClient, cluster: Watched, policy_id: str) -> None:
    """Attach the policy and wait for it; the cluster is watched from then on."""
    body = {"policy_attach": {"policy_id": policy_id}}
    response = await api.post(f"/v1/clusters/{cluster.cluster_id}/actions", json=body)
    action = await wait_action(api, str(ok(response, 202)["action"]), 60, 0.1)
    if action["status"] != "SUCCEEDED":
        raise RuntimeError(f"policy_attach: {action['status']}: {action['status_reason']}")
    cluster.attached_at = time.time()


async def health(api: httpx.AsyncClient, cluster_id: str) -> dict[str, Any]:
    """What the cluster's health manager reports (the cluster's `health`)."""
    cluster = ok(await api.get(f"/v1/clusters/{cluster_id}"), 200)["cluster"]
    found: dict[str, Any] = cluster.get("health") or {}
    return found


async def first_round_done(api: httpx.AsyncClient, clusters: list[Watched]) -> None:
    """Wait until every manager has run a round (the first one writes an event per node)."""
    deadline = time.monotonic() + INTERVAL_S * 6
    for cluster in clusters:
        while (await health(api, cluster.cluster_id)).get("last_round") is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"health:{cluster.cluster_id} ran no round")
            await asyncio.sleep(0.5)
    await asyncio.sleep(3)  # the first round's HEALTH_CHECK events are being recorded


async def histories(client: Client, workflow_ids: list[str]) -> list[WorkflowHistory]:
    """The histories of these workflows, eight fetched at a time."""
    gate = asyncio.Semaphore(8)

    async def one(wid: str) -> WorkflowHistory:
        async with gate:
            return await client.get_workflow_handle(wid).fetch_history()

    return list(await asyncio.gather(*(one(w) for w in workflow_ids)))


async def events(api: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    """Every event the API lists with these filters, page by page."""
    found: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        query: dict[str, str | int] = {**params, "limit": 1000}
        if marker:
            query["marker"] = marker
        page: list[dict[str, Any]] = ok(await api.get("/v1/events", params=query), 200)["events"]
        found += page
        if len(page) < 1000:
            return found
        marker = page[-1]["id"]


async def create_clusters(
    stack: Stack, api: httpx.AsyncClient, profile_id: str, sizes: list[int]
) -> list[Watched]:
    """A cluster of each size, `CREATE_CONCURRENCY` created at a time, with its nodes."""
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(size: int) -> Watched:
        async with gate:
            cluster_id, _, _ = await create_cluster(stack, api, profile_id, size)
        nodes = ok(await api.get("/v1/nodes", params={"cluster_id": cluster_id}), 200)["nodes"]
        return Watched(cluster_id=cluster_id, nodes=nodes)

    return list(await asyncio.gather(*(one(s) for s in sizes)))
