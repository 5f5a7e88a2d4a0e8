"""The scale-in benchmark's results as Markdown: its figures, then each size's details."""

from __future__ import annotations

from typing import Any

from bench.figures import figure_rows, shown

#: A case's results shown in the details table, one row each.
DETAILS = [
    "nodes",
    "action_status",
    "e2e_observed_s",
    "scale_in_post_ms",
    "victims_started_p50_s",
    "victims_started_last_s",
    "first_message_s",
    "median_message_s",
    "last_message_s",
    "messages",
    "completions_202",
    "completion_retries",
    "warning_events",
    "complete_post_p99_ms",
    "complete_returned_to_delete_p50_ms",
    "complete_returned_to_delete_p99_ms",
    "servers_deleted",
    "node_delete_actions_succeeded",
    "parent_action_depended_by",
    "cluster_nodes_after",
    "events_cluster_workflow",
    "events_cluster_op_and_shards",
    "shards",
    "workflow_task_timeouts",
    "workflow_task_failures",
    "events_node_delete_mean",
    "events_node_delete_max",
    "cluster_history_total",
    "create_op_history",
    "create_nodes_per_s",
]
#: A case's CPU seconds, by process (or, for the worker, by thread pool).
CPU_DETAILS = ("scale_in_cpu_s", "scale_in_worker_cpu_by_thread_s", "create_cpu_s")


def cpu_cell(seconds: dict[str, float] | None, *, breakdown: bool = False) -> str:
    """CPU seconds by process (`simcloud 4, worker 25`, in the stack's order), or with
    `breakdown` by thread pool, largest first, to a tenth, leaving out what rounds to 0;
    — for a case measured before the figure existed."""
    if not seconds:
        return "—"
    if not breakdown:
        return ", ".join(f"{k} {v:.0f}" for k, v in seconds.items())
    ranked = sorted(seconds.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:.1f}" for k, v in ranked if round(v, 1))


def _details(cases: dict[str, Any]) -> str:
    """One column per size, one row per detail."""
    sizes = list(cases)
    head = "| detail | " + " | ".join(f"{s} nodes" for s in sizes) + " |"
    lines = [head, "|---|" + "---|" * len(sizes)]
    for key in DETAILS:
        lines.append(f"| {key} | " + " | ".join(shown(cases[s].get(key)) for s in sizes) + " |")
    for key in CPU_DETAILS:
        breakdown = key == "scale_in_worker_cpu_by_thread_s"
        lines.append(
            f"| {key} | "
            + " | ".join(cpu_cell(cases[s].get(key), breakdown=breakdown) for s in sizes)
            + " |"
        )
    return "\n".join(lines)


def table(results: dict[str, Any]) -> str:
    """The headline figures, then per-size details, as Markdown."""
    rows = figure_rows(results["figures"])
    cases = results["cases"]
    out = ["\n".join(rows), ""]
    if cases:
        out.append(_details(cases))
    out.append(f"\nsetup: {results['setup']}")
    return "\n".join(out)
