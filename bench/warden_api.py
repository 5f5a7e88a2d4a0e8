"""Calls to Warden's API that several benchmarks make: a profile, a cluster, an action."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from bench.measure import delta
from bench.stack import Stack

#: The profile of every benchmark's servers.
PROFILE = {
    "profile": {
        "name": "bench-tiny",
        "spec": {
            "type": "os.nova.server",
            "version": "1.0",
            "properties": {"flavor": "m1.tiny", "image": "cirros"},
        },
    }
}
CREATE_TIMEOUT_S = 3600


def ok(response: httpx.Response, expected: int) -> dict[str, Any]:
    """The body of an answer with the `expected` status ({} when it has none, as a
    delete's 202); anything else fails the run."""
    if response.status_code != expected:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} → {response.status_code}: "
            f"{response.text[:500]}"
        )
    body: dict[str, Any] = response.json() if response.content else {}
    return body


def utc_timestamp(text: str) -> float:
    """An API timestamp (UTC when it names no zone) as Unix seconds."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def action_of(response: httpx.Response) -> str:
    """The action a 202 started, from its `Location` (Senlin's way of saying it)."""
    return response.headers["Location"].rsplit("/", 1)[-1]


async def wait_action(
    api: httpx.AsyncClient, action_id: str, within_s: float, interval: float
) -> dict[str, Any]:
    """The action once it has finished, read every `interval` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        response = await api.get(f"/v1/actions/{action_id}")
        if response.status_code == 200:
            action: dict[str, Any] = response.json()["action"]
            if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                return action
        await asyncio.sleep(interval)
    raise TimeoutError(f"action {action_id} did not finish within {within_s} s")


async def create_cluster(
    stack: Stack, api: httpx.AsyncClient, profile_id: str, n: int
) -> tuple[str, str, dict[str, Any]]:
    """An `n`-node cluster, created and waited for: its id, its name, and how long its
    creation took, its operation's history length and the CPU it used."""
    name = f"bench-{n}-{uuid.uuid4().hex[:6]}"
    body = {
        "cluster": {
            "name": name,
            "profile_id": profile_id,
            "desired_capacity": n,
            "max_size": max(2 * n, 10),
        }
    }
    cpu = stack.cpu()
    start = time.perf_counter()
    response = await api.post("/v1/clusters", json=body)
    cluster_id = ok(response, 202)["cluster"]["id"]
    action_id = action_of(response)
    action = await wait_action(api, action_id, CREATE_TIMEOUT_S, 1.0)
    seconds = time.perf_counter() - start
    if action["status"] != "SUCCEEDED":
        raise RuntimeError(f"creating {n} nodes: {action['status']}: {action['status_reason']}")
    op = f"cluster-op:{cluster_id}:{action_id}"
    history = await stack.temporal.get_workflow_handle(op).fetch_history()
    return (
        cluster_id,
        name,
        {
            "create_s": seconds,
            "create_nodes_per_s": n / seconds,
            "create_op_history": len(history.events),
            "create_cpu_s": delta(stack.cpu(), cpu),
        },
    )
