"""One scale-in of N nodes with a lifecycle hook: the cluster created, its hook policy
attached, N nodes scaled in under the load probe, then everything read back."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx
from temporalio.client import Client

from bench.measure import delta
from bench.scale_in.api_calls import attach_hook_policy, succeeded_node_deletes, warning_events
from bench.scale_in.baselines import grown_fanout_baseline
from bench.scale_in.case_summary import After, Collected, Histories, Prepared, Timed, summary
from bench.scale_in.probes import LoadProbe
from bench.scale_in.receiver import HookReceiver, Records
from bench.scale_in.settings import SCALE_IN_TIMEOUT_S
from bench.scale_in.workflow_histories import (
    history_lengths,
    listed,
    quiet_history,
    save_timelines,
    timelines_wanted,
    victim_timelines,
)
from bench.stack import Stack
from bench.warden_api import create_cluster, ok, wait_action


async def _prepare(
    stack: Stack, api: httpx.AsyncClient, receiver: HookReceiver, profile_id: str, n: int
) -> Prepared:
    """An `n`-node cluster with the hook policy, its workflow quiet, its servers known."""
    cluster_id, _, created = await create_cluster(stack, api, profile_id, n)
    print(f"scale_in: {n}-node cluster created in {created['create_s']:.0f} s", flush=True)
    await attach_hook_policy(api, cluster_id, receiver)
    grown = None
    if os.environ.get("BENCH_SCALE_IN_GROWN") == "1":
        grown = await grown_fanout_baseline(stack.temporal, n, stack)
    cluster_wf = f"cluster:{cluster_id}"
    run_before, length_before = await quiet_history(stack.temporal, cluster_wf)
    servers = {
        nd["physical_id"]
        for nd in (ok(await api.get(f"/v1/nodes?cluster_id={cluster_id}"), 200))["nodes"]
    }
    return Prepared(cluster_id, created, grown, cluster_wf, run_before, length_before, servers)


async def _timed_scale_in(
    stack: Stack, api: httpx.AsyncClient, cluster_id: str, n: int, probe: LoadProbe
) -> Timed:
    """Scale in `n` nodes, timed to the action's end, with `probe` running meanwhile."""
    cpu, work, threads = stack.cpu(), stack.temporal_work(), stack.worker_threads_cpu()
    stop_probe = asyncio.Event()
    probing = asyncio.create_task(probe.run(stop_probe))
    try:
        sent_wall, start = time.time(), time.perf_counter()
        response = await api.post(
            f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": n}}
        )
        accepted_ms = (time.perf_counter() - start) * 1000
        action_id = str((ok(response, 202))["action"])
        action = await wait_action(api, action_id, SCALE_IN_TIMEOUT_S, 0.25)
        observed_s = time.perf_counter() - start
        cpu_used = delta(stack.cpu(), cpu)
        work = delta(stack.temporal_work(), work)
        threads = delta(stack.worker_threads_cpu(), threads)
    finally:
        stop_probe.set()
        await probing
    return Timed(sent_wall, accepted_ms, action_id, action, observed_s, cpu_used, work, threads)


async def _deletes_notified(receiver: HookReceiver, servers: set[str]) -> None:
    """Deletions are notified fire-and-forget: give stragglers a moment."""
    for _ in range(100):
        if receiver.counts()[2] >= len(servers):
            break
        await asyncio.sleep(0.1)


async def _cluster_events(client: Client, prepared: Prepared) -> int:
    """Events the cluster's workflow grew by during the scale-in."""
    cluster_wf = prepared.cluster_wf
    run_after, length_after = await quiet_history(client, cluster_wf)
    if run_after == prepared.run_before:
        return length_after - prepared.length_before
    # Continued as new during the scale-in: the rest of the old run, and the new one.
    old = client.get_workflow_handle(cluster_wf, run_id=prepared.run_before)
    return len((await old.fetch_history()).events) - prepared.length_before + length_after


async def _workflows(
    client: Client, prepared: Prepared, timed: Timed, records: Records
) -> tuple[list[str], list[str]]:
    """The scale-in operation and its shards; every victim (listed, or known from its
    message)."""
    cluster_id = prepared.cluster_id
    op = f"cluster-op:{cluster_id}:{timed.action_id}"
    query = f'WardenKind="cluster-op" AND WardenTarget="{cluster_id}"'
    ops = [w for w in await listed(client, query) if w.startswith(op)]
    query = f'WardenKind="node-delete" AND WardenTarget="{cluster_id}"'
    listed_victims = await listed(client, query)
    victims = sorted({*listed_victims, *(f"node-delete:{t}" for t in records.messages)})
    return sorted({op, *ops}), victims


async def _op_histories(
    client: Client, ops: list[str], timed: Timed, n: int, found: Histories
) -> None:
    """The scale-in operation's history and its shards', and when its victims started."""
    starts: list[float] = []
    op_lines = timelines_wanted()
    found.lengths = await history_lengths(
        client, ops, found.types, starts, found.problems, timelines=op_lines
    )
    if op_lines is not None:
        save_timelines(f"ops-{n}", {w: {"events": e} for w, e in op_lines.items()})
    found.started = sorted(t - timed.sent_wall for t in starts if t >= timed.sent_wall)


async def _victim_histories(
    client: Client,
    victims: list[str],
    prepared: Prepared,
    records: Records,
    n: int,
    found: Histories,
) -> None:
    """Every victim's history, then the cluster's."""
    timelines = timelines_wanted()
    found.victim_lengths = await history_lengths(
        client,
        victims,
        found.types,
        task_problems=found.problems,
        paths=found.paths,
        sizes=found.victim_sizes,
        type_bytes=found.victim_bytes,
        timelines=timelines,
    )
    if timelines is not None:
        rows = victim_timelines(timelines, records.messages, records.completions, records.deletes)
        save_timelines(str(n), rows)
    found.cluster_full = await history_lengths(
        client, [prepared.cluster_wf], task_problems=found.problems
    )


async def _after(api: httpx.AsyncClient, cluster_id: str, records: Records) -> After:
    """The cluster, its NODE_DELETE actions and its warnings, as the API shows them."""
    cluster_view = (ok(await api.get(f"/v1/clusters/{cluster_id}"), 200))["cluster"]
    succeeded = await succeeded_node_deletes(api, set(records.messages))
    warnings = await warning_events(api, cluster_id)
    return After(cluster_view, succeeded, warnings)


async def scale_in_case(
    stack: Stack, receiver: HookReceiver, profile_id: str, n: int, probe: LoadProbe
) -> dict[str, Any]:
    """Create an `n`-node cluster and scale it all in with the hook; its results."""
    async with stack.api() as api:
        prepared = await _prepare(stack, api, receiver, profile_id, n)
        timed = await _timed_scale_in(stack, api, prepared.cluster_id, n, probe)
        await _deletes_notified(receiver, prepared.servers)
        cluster_events = await _cluster_events(stack.temporal, prepared)
        records = receiver.of_cluster(prepared.cluster_id)
        ops, victims = await _workflows(stack.temporal, prepared, timed, records)
        histories = Histories()
        await _op_histories(stack.temporal, ops, timed, n, histories)
        await _victim_histories(stack.temporal, victims, prepared, records, n, histories)
        after = await _after(api, prepared.cluster_id, records)
    found = Collected(n, prepared, timed, records, histories, cluster_events, after)
    return summary(found, probe, stack)
