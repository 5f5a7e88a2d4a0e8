"""The health benchmark's results as Markdown: figures, each step's details, and every
fault's trace."""

from __future__ import annotations

from typing import Any

from bench.figures import figure_rows, shown

#: A step's results shown in the details table, one row each.
STEP_DETAILS = [
    "nodes_watched",
    "clusters_watched",
    "servers_listed_per_probe",
    "worker_cpu_ms_per_round",
    "rounds",
    "round_max_ms",
    "schedule_to_start_p50_ms",
    "schedule_to_start_p99_ms",
    "period_p50_s",
    "period_max_s",
    "events_per_round_max",
    "bytes_per_round_max",
    "rounds_to_can_suggested",
    "history_length_max",
    "history_bytes_max",
    "warning_events",
    "bare_round_p99_ms",
    "bare_period_p50_s",
    "bare_rounds",
]


def _steps(steps: dict[str, Any]) -> str:
    """One column per number of nodes watched, one row per detail."""
    lines = [
        "| detail | " + " | ".join(f"{int(s):,} nodes" for s in steps) + " |",
        "|---|" + "---|" * len(steps),
    ]
    lines += [
        f"| {key} | " + " | ".join(shown(steps[s].get(key)) for s in steps) + " |"
        for key in STEP_DETAILS
    ]
    lines.append(
        "| cpu % | "
        + " | ".join(
            ", ".join(f"{k} {v:.0f}" for k, v in steps[s]["cpu_pct"].items()) for s in steps
        )
        + " |"
    )
    return "\n".join(lines)


def _samples(results: dict[str, Any]) -> str:
    """Every fault, polling's then lifecycle events', with what followed it."""
    samples = ["", "| fault | node | detect | seen | recovered | by | ACTIVE seen | failed |"]
    samples.append("|---|---|---|---|---|---|---|---|")
    for mode in ("polling", "lifecycle"):
        for s in results[mode]["samples"]:
            samples.append(
                f"| {mode} {s['kind']} | {s['node_id'][:8]} | {shown(s['detect_s'], 's')} "
                f"| {shown(s['detect_seen_s'], 's')} | {shown(s['recovered_s'], 's')} "
                f"| {s['recovered_by'] or '—'} | {shown(s['active_seen_s'], 's')} "
                f"| {s['failed'] or '—'} |"
            )
    return "\n".join(samples)


def table(results: dict[str, Any]) -> str:
    """The headline figures, per-size details and fault samples, as Markdown."""
    rows = figure_rows(results["figures"])
    out = ["\n".join(rows), ""]
    if results["steps"]:
        out.append(_steps(results["steps"]))
    out.append(_samples(results))
    out.append(f"\nlifecycle cluster afterwards: {results['lifecycle_after']}")
    out.append(f"polling clusters afterwards: {results['polling_after']}")
    out.append(f"idle: {results['idle']}")
    out.append(f"logs: {results['logs']}")
    out.append(f"setup: {results['setup']}")
    return "\n".join(out)
