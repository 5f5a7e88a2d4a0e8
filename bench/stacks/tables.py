"""The stacks benchmark's results as Markdown: figures, then where each create's time
went."""

from __future__ import annotations

from typing import Any

from bench.figures import figure_rows, shown

#: A create's results shown in the details table, one row each.
DETAILS = ["wall_s", "post_ms", "before_child_ms", "child_span_s", "child_events"]
DETAILS += ["workflow_tasks", "failed_workflow_tasks", "workflow_task_queue_max_ms"]
DETAILS += ["workflow_task_run_max_ms"]
DETAILS += ["activity_queue_p50_ms"]
DETAILS += ["activity_queue_max_ms", "activity_run_p50_ms", "activity_run_max_ms"]
DETAILS += ["activity_retries", "cpu_s"]


def _cell(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {shown(v)}" for k, v in value.items())
    return shown(value)


def table(results: dict[str, Any]) -> str:
    """The headline figures, then where each create's time went, as Markdown."""
    creates = results["creates"]
    lines = ["| detail | " + " | ".join(creates) + " |", "|---|" + "---|" * len(creates)]
    for key in DETAILS:
        lines.append(f"| {key} | " + " | ".join(_cell(c.get(key)) for c in creates.values()) + " |")
    out = ["\n".join(figure_rows(results["figures"])), "", "\n".join(lines)]
    if bare := results.get("bare_creates"):
        out.append("\n| bare fan-out | " + " | ".join(bare) + " |")
        out.append("|---|" + "---|" * len(bare))
        for key in ("wall_s", "cpu_s", "failed_workflow_tasks"):
            out.append(f"| {key} | " + " | ".join(_cell(c.get(key)) for c in bare.values()) + " |")
    out.append(f"\nround trips: {results['round_trips']}")
    out.append(f"setup: {results['setup']}")
    return "\n".join(out)
