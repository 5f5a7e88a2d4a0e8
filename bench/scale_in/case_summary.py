"""What one scale-in left behind (`Collected`), summed up as the case's results."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.measure import ms, pct, per
from bench.scale_in.probes import LoadProbe
from bench.scale_in.receiver import Records
from bench.scale_in.signal_paths import SignalPath, held_by_running_task, signal_steps_p50_ms
from bench.stack import Stack
from bench.usage import log_problems
from bench.warden_api import utc_timestamp


@dataclass(frozen=True)
class Prepared:
    """The cluster about to be scaled in, with its hook policy attached."""

    cluster_id: str
    #: Its creation's figures (`create_cluster`): the case's first results.
    created: dict[str, Any]
    #: The listed bare fan-out run right before, with `BENCH_SCALE_IN_GROWN=1`.
    grown: dict[str, Any] | None
    cluster_wf: str
    run_before: str
    length_before: int
    servers: set[str]


@dataclass(frozen=True)
class Timed:
    """The scale_in call, from its POST to its action's end, and what it cost."""

    sent_wall: float
    accepted_ms: float
    action_id: str
    action: dict[str, Any]
    observed_s: float
    cpu_used: dict[str, float]
    work: dict[str, float]
    threads: dict[str, float]


@dataclass
class Histories:
    """The histories of the scale-in's workflows: its operation and shards (`lengths`),
    its victims and the cluster's whole history."""

    lengths: dict[str, int] = field(default_factory=dict)
    victim_lengths: dict[str, int] = field(default_factory=dict)
    cluster_full: dict[str, int] = field(default_factory=dict)
    types: Counter[str] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    #: When each victim started, from the scale_in POST (s).
    started: list[float] = field(default_factory=list)
    paths: dict[str, SignalPath] = field(default_factory=dict)
    victim_sizes: dict[str, int] = field(default_factory=dict)
    victim_bytes: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class After:
    """The cluster as the API shows it afterwards."""

    cluster_view: dict[str, Any]
    succeeded: int
    warnings: dict[str, int]


@dataclass(frozen=True)
class Collected:
    """Everything read of one scale-in of `n` nodes."""

    n: int
    prepared: Prepared
    timed: Timed
    records: Records
    histories: Histories
    cluster_events: int
    after: After


def _action_part(c: Collected) -> dict[str, Any]:
    action = c.timed.action
    ended = utc_timestamp(action["ended_at"]) if action.get("ended_at") else None
    e2e = (ended - c.timed.sent_wall) if ended is not None else c.timed.observed_s
    return {
        "nodes": c.n,
        "cluster_id": c.prepared.cluster_id,
        "action_id": c.timed.action_id,
        "action_status": action["status"],
        "action_status_reason": action["status_reason"],
        "scale_in_post_ms": c.timed.accepted_ms,
        "e2e_s": e2e,
        "e2e_observed_s": c.timed.observed_s,
        "per_node_ms": e2e / c.n * 1000,
    }


def _message_part(c: Collected) -> dict[str, Any]:
    arrivals = sorted(at - c.timed.sent_wall for at, _ in c.records.messages.values())
    started, warnings = c.histories.started, c.after.warnings
    return {
        "messages": len(c.records.messages),
        "duplicate_messages": c.records.duplicates,
        "first_message_s": arrivals[0] if arrivals else None,
        "median_message_s": pct(arrivals, 0.5),
        "last_message_s": arrivals[-1] if arrivals else None,
        "victims_started_p50_s": pct(started, 0.5),
        "victims_started_last_s": started[-1] if started else None,
        "warning_events": sum(warnings.values()),
        "warning_event_reasons": warnings,
    }


def _completion_part(c: Collected) -> dict[str, Any]:
    completions, paths = c.records.completions, c.histories.paths
    rtts = [d.returned - d.sent for d in completions.values() if d.status == "202"]
    # The POST's two halves: until Temporal recorded the signal (the API's own work,
    # its database read and the signal call), then until the answer came back.
    recorded = [
        (paths[f"node-delete:{t}"].recorded, d)
        for t, d in completions.items()
        if d.status == "202" and d.attempts == 1 and f"node-delete:{t}" in paths
    ]
    return {
        "completions_202": len(rtts),
        "completion_statuses": dict(Counter(d.status for d in completions.values())),
        "completion_retries": sum(d.attempts - 1 for d in completions.values()),
        "complete_post_p50_ms": ms(pct(rtts, 0.5)),
        "complete_post_p99_ms": ms(pct(rtts, 0.99)),
        "complete_sent_to_signal_p50_ms": ms(pct((at - d.sent for at, d in recorded), 0.5)),
        "complete_signal_to_returned_p50_ms": ms(pct((d.returned - at for at, d in recorded), 0.5)),
    }


def _delete_part(c: Collected) -> dict[str, Any]:
    latency_sent: list[float] = []
    latency_returned: list[float] = []
    deleted_at: dict[str, float] = {}  # victim workflow id → simcloud's DELETE
    for token, (_, message) in c.records.messages.items():
        deleted = c.records.deletes.get(str(message["resource_id"]))
        done = c.records.completions.get(token)
        if deleted is not None:
            deleted_at[f"node-delete:{token}"] = deleted[0]
        if deleted is not None and done is not None:
            latency_sent.append(deleted[0] - done.sent)
            latency_returned.append(deleted[0] - done.returned)
    return {
        "servers_deleted": len(c.prepared.servers & c.records.deletes.keys()),
        "complete_to_delete_p50_ms": ms(pct(latency_sent, 0.5)),
        "complete_to_delete_p99_ms": ms(pct(latency_sent, 0.99)),
        "complete_returned_to_delete_p50_ms": ms(pct(latency_returned, 0.5)),
        "complete_returned_to_delete_p99_ms": ms(pct(latency_returned, 0.99)),
        "delete_steps_p50_ms": signal_steps_p50_ms(c.histories.paths, deleted_at),
    }


def _after_part(c: Collected) -> dict[str, Any]:
    return {
        "fanout_listed_grown": c.prepared.grown,
        **held_by_running_task(c.histories.paths),
        "node_delete_actions_succeeded": c.after.succeeded,
        "parent_action_depended_by": len(c.timed.action.get("depended_by") or []),
        "cluster_nodes_after": len(c.after.cluster_view["nodes"]),
        "cluster_status_after": c.after.cluster_view["status"],
    }


def _history_part(c: Collected) -> dict[str, Any]:
    h = c.histories
    total_events = c.cluster_events + sum(h.lengths.values()) + sum(h.victim_lengths.values())
    all_lengths = {**h.lengths, **h.victim_lengths, **h.cluster_full}
    largest = max(all_lengths, key=lambda w: all_lengths[w])
    shown_as = largest.replace(c.prepared.cluster_id, "{cluster}")
    return {
        "history_events_total": total_events,
        "events_per_node": total_events / c.n,
        "events_cluster_workflow": c.cluster_events,
        "events_cluster_op_and_shards": sum(h.lengths.values()),
        "shards": len(h.lengths) - 1,
        "events_node_delete_mean": sum(h.victim_lengths.values()) / max(1, len(h.victim_lengths)),
        "events_node_delete_max": max(h.victim_lengths.values(), default=0),
        "node_delete_history_bytes_mean": sum(h.victim_sizes.values())
        / max(1, len(h.victim_sizes)),
        "node_delete_history_bytes_by_event_type_mean": per(h.victim_bytes, len(h.victim_sizes)),
        "node_delete_workflows": len(h.victim_lengths),
        "largest_history": all_lengths[largest],
        "largest_history_workflow": shown_as.replace(c.timed.action_id, "{action}"),
        "cluster_history_total": h.cluster_full[c.prepared.cluster_wf],
        "workflow_task_timeouts": h.types["EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT"],
        "workflow_task_failures": h.types["EVENT_TYPE_WORKFLOW_TASK_FAILED"],
        "workflow_task_problems": dict(h.problems.most_common()),
        "event_types": dict(h.types.most_common()),
    }


def _usage_part(c: Collected, probe: LoadProbe, stack: Stack) -> dict[str, Any]:
    return {
        "scale_in_cpu_s": c.timed.cpu_used,
        "scale_in_worker_cpu_by_thread_s": c.timed.threads,
        "load_probe": probe.summary(),
        "temporal_work": c.timed.work,
        "rss_mib_after": {k: round(v) for k, v in stack.rss().items()},
        "worker_log": log_problems(stack.procs["worker"].log),
        "api_log": log_problems(stack.procs["api"].log),
    }


def summary(c: Collected, probe: LoadProbe, stack: Stack) -> dict[str, Any]:
    """The case's results: its creation's, then the scale-in's, in the order they have
    always been written to `latest.json`."""
    return (
        c.prepared.created
        | _action_part(c)
        | _message_part(c)
        | _completion_part(c)
        | _delete_part(c)
        | _after_part(c)
        | _history_part(c)
        | _usage_part(c, probe, stack)
    )
