"""A benchmark's figures: each measurement beside its same-run baseline and its goal.

Every benchmark but `cloud` reports its headline as rows made by `figure`, rendered as
a Markdown table by `figure_rows` (in `bench/results/latest.md`, and in docs/performance.md for
the rows with a goal or marked `headline`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def figure(
    measurement: str,
    value: float | None,
    unit: str,
    baseline: float | None = None,
    baseline_label: str = "",
    goal: str = "",
    met: bool | None = None,
    *,
    headline: bool = False,
) -> dict[str, Any]:
    """One row of a report; rows with a goal, or `headline`, are in docs/performance.md too."""
    ratio = value / baseline if value is not None and baseline else None
    return {
        "headline": headline,
        "measurement": measurement,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_label": baseline_label,
        "ratio": ratio,
        "goal": goal,
        "met": met,
    }


def goal_met(value: float | None, ok: Callable[[float], bool]) -> bool | None:
    """Whether `value` meets its goal (`ok`); None when it was not measured."""
    return None if value is None else ok(value)


def shown(value: object, unit: str = "") -> str:
    """A value as the tables show it: `—` for none, `met` / `**not met**` for a goal,
    numbers to a sensible precision with their unit."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "met" if value else "**not met**"
    if isinstance(value, float):
        text = (
            f"{value:,.0f}"
            if abs(value) >= 100
            else f"{value:.2f}"
            if value < 10
            else f"{value:.1f}"
        )
        return f"{text} {unit}".strip()
    if isinstance(value, int):
        return f"{value:,} {unit}".strip()
    return str(value)


def figure_rows(figures: list[dict[str, Any]]) -> list[str]:
    """The headline table: each figure beside its same-run baseline and its goal."""
    rows = [
        "| measurement | value | baseline | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for f in figures:
        baseline = (
            f"{shown(f['baseline'], f['unit'])} ({f['baseline_label']})"
            if f["baseline"] is not None
            else "—"
        )
        ratio = f"{f['ratio']:.1f}x" if f["ratio"] is not None else "—"
        rows.append(
            f"| {f['measurement']} | {shown(f['value'], f['unit'])} | {baseline} | {ratio} "
            f"| {f['goal'] or '—'} | {shown(f['met'])} |"
        )
    return rows
