"""Rolling update bench: `uv run python -m bench rolling`.

One real stack (`bench.stack`). A cluster of `BENCH_ROLL_NODES` nodes (default 100)
with a batch policy of `max_batch_size` 10 and `min_in_service` nodes - 10 (so 10
batches, no pause) is updated onto a new profile through the API, and the roll's wall
time is compared with its critical-path floor measured in the same run: the batches
run one after the other and each is at least one replacement (a server built, then
the old one removed), so the floor is batches x the update of a one-node cluster
(median of `BENCH_ROLL_SINGLES` runs, default 3).

Measured here (2 cores shared with another engineer's tests): 100 nodes in 10 batches
of 10 in 12.7 s against a floor of 10 x 0.87 s = 8.7 s: 1.46x. Each batch builds 10
servers and removes 10 at once, so its critical path is one replacement plus the
fan-out of ten on this machine's two cores.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from typing import Any

import httpx

from bench.figures import figure, figure_rows
from bench.report import git_state
from bench.stack import Stack, running_stack
from bench.warden_api import action_of, ok, wait_action

BATCH = 10
ACTION_TIMEOUT_S = 1800.0


def _setting(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


async def _profile(api: httpx.AsyncClient, image: str) -> str:
    spec: dict[str, Any] = {"type": "os.nova.server", "version": "1.0"}
    spec |= {"properties": {"flavor": "m1.tiny", "image": image}}  # as PROFILE, another image
    body = {"profile": {"name": f"roll-{uuid.uuid4().hex[:6]}", "spec": spec}}
    return str(ok(await api.post("/v1/profiles", json=body), 201)["profile"]["id"])


async def _cluster(api: httpx.AsyncClient, profile_id: str, size: int) -> str:
    body: dict[str, Any] = {"name": f"roll-{uuid.uuid4().hex[:6]}", "profile_id": profile_id}
    body |= {"desired_capacity": size, "max_size": size}
    response = await api.post("/v1/clusters", json={"cluster": body})
    created = ok(response, 202)
    done = await wait_action(api, action_of(response), ACTION_TIMEOUT_S, 1.0)
    if done["status"] != "SUCCEEDED":
        raise RuntimeError(f"cluster create failed: {done}")
    return str(created["cluster"]["id"])


async def _attach_batches(api: httpx.AsyncClient, cluster_id: str, size: int) -> None:
    spec = {
        "type": "senlin.policy.batch",
        "version": "1.0",
        "properties": {"min_in_service": size - BATCH, "max_batch_size": BATCH, "pause_time": 0},
    }
    name = f"batches-{uuid.uuid4().hex[:6]}"
    policy = ok(await api.post("/v1/policies", json={"policy": {"name": name, "spec": spec}}), 201)
    body = {"policy_attach": {"policy_id": policy["policy"]["id"]}}
    attached = ok(await api.post(f"/v1/clusters/{cluster_id}/actions", json=body), 202)
    await wait_action(api, str(attached["action"]), ACTION_TIMEOUT_S, 0.5)


async def _update(api: httpx.AsyncClient, cluster_id: str, profile_id: str) -> float:
    """Seconds from the PATCH to the update's action SUCCEEDED."""
    start = time.perf_counter()
    body = {"cluster": {"profile_id": profile_id}}
    response = await api.patch(f"/v1/clusters/{cluster_id}", json=body)
    ok(response, 202)
    done = await wait_action(api, action_of(response), ACTION_TIMEOUT_S, 0.2)
    if done["status"] != "SUCCEEDED":
        raise RuntimeError(f"cluster update failed: {done}")
    return time.perf_counter() - start


async def _case(stack: Stack, nodes: int, singles: int) -> dict[str, Any]:
    async with stack.api(timeout=120) as api:
        v1, v2 = await _profile(api, "cirros"), await _profile(api, "cirros-v2")
        one_node = []
        for _ in range(singles):
            single = await _cluster(api, v1, 1)
            one_node.append(await _update(api, single, v2))
        big = await _cluster(api, v1, nodes)
        await _attach_batches(api, big, nodes)
        roll_s = await _update(api, big, v2)
        listed = (await api.get("/v1/nodes", params={"cluster_id": big})).json()["nodes"]
    batches = -(-nodes // BATCH)
    floor_s = batches * statistics.median(one_node)
    return {
        "nodes": nodes,
        "batches": batches,
        "roll_s": roll_s,
        "one_replacement_s": one_node,
        "floor_s": floor_s,
        "ratio": roll_s / floor_s,
        "nodes_on_new_profile": sum(1 for n in listed if n["profile_id"] == v2),
    }


def figures(case: dict[str, Any], nodes: int) -> list[dict[str, Any]]:
    """The roll against its floor, and the nodes it moved onto the new profile."""
    return [
        figure(
            f"rolling update, {nodes} nodes in batches of {BATCH}",
            case["roll_s"] * 1000,
            "ms",
            baseline=case["floor_s"] * 1000,
            baseline_label=f"{case['batches']} x one replacement",
            goal="report the ratio",
        ),
        figure(
            "nodes on the new profile",
            case["nodes_on_new_profile"],
            "",
            goal=str(nodes),
            met=case["nodes_on_new_profile"] == nodes,
        ),
    ]


async def run() -> dict[str, object]:
    """The one-node updates, then the big roll, on one fresh stack."""
    nodes = _setting("BENCH_ROLL_NODES", 100)
    singles = _setting("BENCH_ROLL_SINGLES", 3)
    git = git_state()
    async with running_stack(temporal_in_memory=True) as stack:
        case = await _case(stack, nodes, singles)
    return {
        "figures": figures(case, nodes),
        "case": case,
        "setup": {"batch": BATCH, "temporal": "dev server, SQLite in memory", "git": git},
    }


def table(results: dict[str, Any]) -> str:
    """Headline figures, then the details, as Markdown."""
    details = "\n".join(f"| {k} | {v} |" for k, v in results["case"].items())
    return "\n".join(
        [*figure_rows(results["figures"]), "", "| detail | value |", "|---|---|", details]
    )
