"""Faults injected into servers, and how long the health manager took to see each one
and to bring its node back: by polling, and by lifecycle events."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml
from temporalio.client import Client

from bench.health.product import Watched, attach, create_policy, events, health
from bench.health.rounds import rounds_of
from bench.health.settings import (
    EVENT_POLL_S,
    FAULT_TIMEOUT_S,
    LIFECYCLE_FAULTS,
    NOTIFY_TOKEN,
    POLL_FAULTS,
    PROBE_ACTIVITY,
)
from bench.measure import pct
from bench.stack import BENCH_PROJECT, BENCH_TOKEN, Stack
from bench.warden_api import ok, utc_timestamp


@dataclass
class FaultTrace:
    """One injected fault and what the product did about it (wall-clock seconds)."""

    node_id: str
    kind: str
    at: float
    detected: float | None = None
    detected_seen: float | None = None
    recovered: float | None = None
    recovered_by: str = ""
    active_seen: float | None = None
    failed: str = ""

    def note(self, event: dict[str, Any]) -> None:
        """One of the node's events: its detection, its recovery, or a failed one."""
        at = utc_timestamp(event["timestamp"])
        if at < self.at - 0.5:
            return
        if (
            self.detected is None
            and event["action"] == "HEALTH_CHECK"
            and event["status"] == "UNHEALTHY"
        ):
            self.detected, self.detected_seen = at, time.time()
        if event["action"].startswith("RECOVER_") and "healthy again" in event["status_reason"]:
            self.recovered, self.recovered_by = at, event["action"]
        if event["action"] == "NODE_RECOVER" and event["level"] == "ERROR":
            self.failed = event["status_reason"][:200]

    def summary(self) -> dict[str, Any]:
        """Latencies from the fault (s)."""

        def since(t: float | None) -> float | None:
            return None if t is None else t - self.at

        return {
            "node_id": self.node_id,
            "kind": self.kind,
            "detect_s": since(self.detected),
            "detect_seen_s": since(self.detected_seen),
            "recovered_s": since(self.recovered),
            "recovered_by": self.recovered_by,
            "active_seen_s": since(self.active_seen),
            "failed": self.failed,
        }


async def _follow_events(api: httpx.AsyncClient, trace: FaultTrace, deadline: float) -> None:
    """Read the node's events until it is healthy again, its recovery failed, or time
    is up."""
    while time.monotonic() < deadline:
        for event in await events(api, obj_id=trace.node_id):
            trace.note(event)
        if trace.recovered is not None or trace.failed:
            break
        await asyncio.sleep(EVENT_POLL_S)
    if trace.recovered is None and not trace.failed:
        trace.failed = f"not recovered within {FAULT_TIMEOUT_S:.0f} s"


async def _wait_active(api: httpx.AsyncClient, trace: FaultTrace, deadline: float) -> None:
    """Once recovered, when the API first shows the node ACTIVE."""
    while trace.recovered is not None and time.monotonic() < deadline:
        shown = ok(await api.get(f"/v1/nodes/{trace.node_id}"), 200)["node"]
        if shown["status"] == "ACTIVE":
            trace.active_seen = time.time()
            break
        await asyncio.sleep(EVENT_POLL_S)


async def inject_and_follow(
    api: httpx.AsyncClient,
    sim: httpx.AsyncClient,
    node: dict[str, Any],
    kind: str,
    cure: str,
) -> FaultTrace:
    """Break one node's server and follow its events until it is healthy again."""
    trace = FaultTrace(node_id=str(node["id"]), kind=kind, at=time.time())
    body = {"kind": kind, "cured_by": [cure]}
    ok(await sim.post(f"/sim/servers/{node['physical_id']}/fault", json=body), 200)
    deadline = time.monotonic() + FAULT_TIMEOUT_S
    await _follow_events(api, trace, deadline)
    await _wait_active(api, trace, deadline)
    return trace


def _mean(samples: Sequence[float]) -> float | None:
    return sum(samples) / len(samples) if samples else None


def fault_summary(traces: list[FaultTrace]) -> dict[str, Any]:
    """How many faults were seen and cured, how fast, and each fault's trace."""
    detect = [t.detected - t.at for t in traces if t.detected is not None]
    recovered = [t.recovered - t.at for t in traces if t.recovered is not None]
    return {
        "faults": len(traces),
        "detected": len(detect),
        "recovered": len(recovered),
        "detect_p50_s": pct(detect, 0.5),
        "detect_max_s": max(detect, default=None),
        "detect_mean_s": _mean(detect),
        "recovered_p50_s": pct(recovered, 0.5),
        "recovered_max_s": max(recovered, default=None),
        "samples": [t.summary() for t in traces],
    }


async def polling_faults(
    client: Client,
    api: httpx.AsyncClient,
    sim: httpx.AsyncClient,
    clusters: list[Watched],
    period_s: float,
) -> dict[str, Any]:
    """One shutoff per cluster, at stratified phases before that cluster's next round.

    Fault i lands (i + ½)/K of a period before its manager's next `probe_nodes` (told
    from the last one in its history), so the samples cover every phase from "just
    before a round" to "just after one" and the largest is the worst case.
    """
    victims = [c for c in clusters if c.attached_at is not None][:POLL_FAULTS]
    lead: list[float] = []

    async def one(i: int, cluster: Watched) -> FaultTrace:
        history = await client.get_workflow_handle(f"health:{cluster.cluster_id}").fetch_history()
        rounds = rounds_of(history, PROBE_ACTIVITY)
        ahead = (i + 0.5) / len(victims) * period_s
        at = rounds[-1].scheduled + period_s - ahead
        while at < time.time() + 0.5:
            at += period_s
        lead.append(ahead)
        await asyncio.sleep(at - time.time())
        node = sorted(cluster.nodes, key=lambda nd: str(nd["name"]))[0]
        return await inject_and_follow(api, sim, node, "shutoff", "REBOOT")

    traces = await asyncio.gather(*(one(i, c) for i, c in enumerate(victims)))
    return fault_summary(list(traces)) | {"period_s": period_s, "fault_lead_s": sorted(lead)}


def _write_tokens(stack: Stack, *, notify: bool) -> None:
    """The stack's tokens file, with or without simcloud's notify token (reloaded by mtime)."""
    tokens: dict[str, dict[str, Any]] = {
        BENCH_TOKEN: {"project": BENCH_PROJECT, "roles": ["admin"]}
    }
    if notify:
        tokens[NOTIFY_TOKEN] = {"project": BENCH_PROJECT, "roles": ["member"]}
    path = Path(stack.env["WARDEN_TOKENS_FILE"])
    path.write_text(yaml.safe_dump({"tokens": tokens}))
    stamp = time.time()
    os.utime(path, (stamp, stamp))


async def lifecycle_faults(
    stack: Stack, api: httpx.AsyncClient, sim: httpx.AsyncClient, cluster: Watched
) -> dict[str, Any]:
    """Pause faults one at a time on a LIFECYCLE_EVENTS cluster; notifications accepted."""
    policy_id = await create_policy(api, [{"type": "LIFECYCLE_EVENTS"}])
    await attach(api, cluster, policy_id)
    _write_tokens(stack, notify=True)
    await asyncio.sleep(1)
    traces: list[FaultTrace] = []
    try:
        for node in sorted(cluster.nodes, key=lambda nd: str(nd["name"]))[:LIFECYCLE_FAULTS]:
            traces.append(await inject_and_follow(api, sim, node, "pause", "UNPAUSE"))
            await _cluster_idle(api, cluster.cluster_id)
    finally:
        _write_tokens(stack, notify=False)
    return fault_summary(traces)


async def _cluster_idle(api: httpx.AsyncClient, cluster_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        actions = ok(await api.get("/v1/actions", params={"target": cluster_id}), 200)["actions"]
        if all(a["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") for a in actions):
            return
        await asyncio.sleep(0.2)


async def _actions(api: httpx.AsyncClient, cluster_id: str) -> list[dict[str, Any]]:
    """Every action on the cluster, page by page."""
    actions: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        params: dict[str, str | int] = {"target": cluster_id, "limit": 1000}
        if marker:
            params["marker"] = marker
        page = ok(await api.get("/v1/actions", params=params), 200)["actions"]
        actions += page
        if len(page) < 1000:
            return actions
        marker = page[-1]["id"]


async def recoveries_per_fault(
    api: httpx.AsyncClient, cluster: Watched, faults: int
) -> dict[str, Any]:
    """Recover operations a cluster ran, against the faults it had; and the manager's memory."""
    recovers = [
        a for a in await _actions(api, cluster.cluster_id) if a["name"] == "CLUSTER_RECOVER"
    ]
    started = [
        e
        for e in await events(api, cluster_id=cluster.cluster_id)
        if e["action"] == "NODE_RECOVER" and e["status_reason"] == "Recovery started"
    ]
    manager = await health(api, cluster.cluster_id)
    unhealthy = [n["name"] for n in manager.get("nodes", []) if n.get("state") == "UNHEALTHY"]
    view = ok(await api.get(f"/v1/clusters/{cluster.cluster_id}"), 200)["cluster"]
    return {
        "faults": faults,
        "cluster_recover_actions": len(recovers),
        "node_recoveries_started": len(started),
        "extra_recoveries": len(started) - faults,
        "manager_still_unhealthy": len(unhealthy),
        "cluster_status": view["status"],
        "cluster_status_reason": view["status_reason"][:200],
        "manager_warning": manager.get("warning", ""),
    }
