"""The health benchmark's figures: each measurement beside its bare baseline and goal."""

from __future__ import annotations

from typing import Any

from bench.figures import figure, goal_met
from bench.health.settings import INTERVAL_S, RETRY_BACKOFF_S, SLACK_S

#: The longest a fault may go unseen (one interval and its slack).
GOAL_S = INTERVAL_S + SLACK_S


def _ms_to_s(value: float | None) -> float | None:
    return None if value is None else value / 1000


def _baseline_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The bare loop, the driver's listing and the idle worker."""
    bare, idle, listing = results["bare_unloaded"], results["idle"], results["listing"]
    return [
        figure("bare activity round trip p50 (unloaded)", bare["bare_round_p50_ms"], "ms"),
        figure("bare loop: history events per round", bare["bare_events_per_round"], "events"),
        figure(
            f"driver list_servers() of all {listing['servers']:,} servers p50",
            listing["list_all_p50_ms"],
            "ms",
        ),
        figure(
            f"idle worker CPU ({idle['nodes']:,} nodes, no policy)", idle["worker_cpu_pct"], "%"
        ),
        figure("idle worker RSS", idle["worker_rss_mib"], "MiB"),
    ]


def _round_rows(n: str, step: dict[str, Any]) -> list[dict[str, Any]]:
    """A step's probe rounds and their period, against the bare loops in its window."""
    return [
        figure(
            f"{n}: probe round p50",
            step["round_p50_ms"],
            "ms",
            step["bare_round_p50_ms"],
            "bare activity p50, same window",
        ),
        figure(
            f"{n}: probe round p99",
            step["round_p99_ms"],
            "ms",
            step["bare_round_p99_ms"],
            "bare activity p99, same window",
        ),
        figure(
            f"{n}: round period p99 (x{step['rounds']} rounds)",
            step["period_p99_s"],
            "s",
            step["bare_period_p99_s"],
            f"bare loops at {INTERVAL_S} s, same window",
            f"rounds keep up at {INTERVAL_S} s (≤ {INTERVAL_S + SLACK_S:.0f} s)",
            step["keeps_up"],
        ),
    ]


def _usage_rows(n: str, step: dict[str, Any], idle: dict[str, Any]) -> list[dict[str, Any]]:
    """A step's worker CPU and memory against the idle worker's, and its history per
    round against the bare loop's."""
    return [
        figure(
            f"{n}: worker CPU", step["worker_cpu_pct"], "%", idle["worker_cpu_pct"], "idle worker"
        ),
        figure(f"{n}: worker RSS", step["worker_rss_mib"], "MiB", idle["worker_rss_mib"], "idle"),
        figure(
            f"{n}: history events per round",
            step["events_per_round"],
            "events",
            step["bare_events_per_round"],
            "bare loop",
        ),
        figure(
            f"{n}: history bytes per round",
            step["bytes_per_round"],
            "B",
            step["bare_bytes_per_round"],
            "bare loop",
        ),
    ]


def _capacity_row(steps: dict[str, Any]) -> dict[str, Any]:
    """How many nodes one worker watched with its rounds keeping up."""
    kept_up = [s for s in steps.values() if s["keeps_up"]]
    return figure(
        "nodes watched by one worker with rounds keeping up",
        max((s["nodes_watched"] for s in kept_up), default=0),
        "nodes",
        goal=f"largest size tried ({max(int(s) for s in steps):,})",
        met=len(kept_up) == len(steps),
    )


def _polling_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Faults seen by polling, against half a period (the mean wait for a round) plus
    a probe, and at worst a period plus a probe."""
    polling = results["polling"]
    top = results["steps"][max(results["steps"], key=int)]
    expected = top["period_p50_s"] / 2 + (top["round_p50_ms"] or 0) / 1000
    return [
        figure(
            f"polling: fault → HEALTH_CHECK p50 (x{polling['detected']}/{polling['faults']})",
            polling["detect_p50_s"],
            "s",
            expected,
            "½ period + probe p50 (uniform fault phase)",
            f"≤ {GOAL_S:.0f} s",
            goal_met(polling["detect_p50_s"], lambda v: v <= GOAL_S),
        ),
        figure(
            "polling: fault → HEALTH_CHECK max",
            polling["detect_max_s"],
            "s",
            top["period_p99_s"] + (top["round_p99_ms"] or 0) / 1000,
            "period p99 + probe p99",
            f"≤ {GOAL_S:.0f} s",
            goal_met(polling["detect_max_s"], lambda v: v <= GOAL_S)
            if polling["detected"] == polling["faults"]
            else False,
        ),
        figure(
            "polling: fault → recovered (ACTIVE) p50",
            polling["recovered_p50_s"],
            "s",
            polling["detect_p50_s"],
            "its detection p50",
        ),
    ]


def _events_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Faults seen by lifecycle events, against a bare signal → activity; and the
    recoveries beyond one per fault."""
    events_mode = results["lifecycle"]
    bare_reaction = _ms_to_s(results["signals_loaded"]["signal_to_activity_p50_ms"])
    extra = results["lifecycle_after"]["extra_recoveries"]
    return [
        figure(
            f"events: fault → HEALTH_CHECK p50 (x{events_mode['detected']}/"
            f"{events_mode['faults']})",
            events_mode["detect_p50_s"],
            "s",
            bare_reaction,
            "bare signal → activity p50",
            f"≤ {GOAL_S:.0f} s",
            goal_met(events_mode["detect_p50_s"], lambda v: v <= GOAL_S),
        ),
        figure(
            "events: fault → recovered (UNPAUSE) p50",
            events_mode["recovered_p50_s"],
            "s",
            bare_reaction,
            "bare signal → activity p50",
        ),
        figure(
            f"events: recoveries beyond one per fault (≥ {RETRY_BACKOFF_S + INTERVAL_S} s later)",
            extra,
            "",
            results["polling_after"]["extra_recoveries"],
            "same, polling clusters",
            "0",
            extra == 0,
        ),
    ]


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The headline rows of the report."""
    rows = _baseline_rows(results)
    for size, step in results["steps"].items():
        n = f"{int(size):,} nodes ({step['clusters_watched']} clusters)"
        rows += [*_round_rows(n, step), *_usage_rows(n, step, results["idle"])]
    rows.append(_capacity_row(results["steps"]))
    return [*rows, *_polling_rows(results), *_events_rows(results)]
