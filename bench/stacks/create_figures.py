"""The stacks benchmark's create figures: N servers against one, against the CPU all of
it took, and against bare Temporal doing the same cloud calls."""

from __future__ import annotations

import os
import statistics
from typing import Any

from bench.figures import figure
from bench.stacks.settings import CHAIN, SIZES

#: Wall time of N independent servers against one server's.
GOAL_INDEPENDENT_RATIO = {100: 1.3, 1000: 3.0}


def _cpu_floor_s(creates: dict[str, Any], size: int) -> float:
    """Median CPU seconds (every process) of a size's creates, spread over the cores: no
    schedule on this machine can finish that work sooner."""
    used: list[float] = [
        sum(c["cpu_s"].values()) for k, c in creates.items() if k.startswith(f"{size} ind")
    ]
    return statistics.median(used) / (os.cpu_count() or 1)


def _median_of(walls: dict[str, float], prefix: str) -> tuple[float, str] | None:
    runs = [w for k, w in walls.items() if k.startswith(prefix)]
    if not runs:
        return None
    return statistics.median(runs), f"median of {len(runs)}: {min(runs):.2f}-{max(runs):.2f} s"


def _goal(n: int, single: float, wall: float, goal_label: str) -> tuple[str, bool | None]:
    """The goal of `n` independent servers (if it has one) and whether `wall` meets it."""
    goal_ratio = GOAL_INDEPENDENT_RATIO.get(n)
    goal = goal_label.format(goal_ratio) if goal_ratio else ""
    return goal, (wall <= goal_ratio * single if goal_ratio else None)


def _server_cpu_row(n: int, bare: dict[str, dict[str, Any]], single: float) -> dict[str, Any]:
    """However cheap the worker, the Temporal server and the cloud must do this."""
    used = [c["cpu_s"] for k, c in bare.items() if k.startswith(f"{n} bare #")]
    server_cpu = statistics.median(
        u.get("temporal", 0.0) + u.get("simcloud", 0.0) for u in used
    ) / (os.cpu_count() or 1)
    goal, met = _goal(n, single, server_cpu, "Warden's: ≤ {:g}x 1 server")
    return figure(
        f"{n} independent servers, bare: CPU of the Temporal server and simcloud "
        f"alone / {os.cpu_count()} cores",
        server_cpu,
        "s",
        single,
        "bare: 1 server",
        goal,
        met,
        headline=True,
    )


def _bare_size_rows(
    n: int, bare: dict[str, dict[str, Any]], walls: dict[str, float], single: float
) -> list[dict[str, Any]]:
    """The bare fan-out of `n` servers against bare one server (is the goal below it?),
    and Warden's create against it (what Warden adds)."""
    bare_walls = {k: c["wall_s"] for k, c in bare.items()}
    fan, warden = _median_of(bare_walls, f"{n} bare #"), _median_of(walls, f"{n} independent #")
    if fan is None or warden is None:
        return []
    has_goal = n in GOAL_INDEPENDENT_RATIO
    goal, met = _goal(n, single, fan[0], "Warden's: ≤ {:g}x 1 server")
    label = f"{n} independent servers, bare Temporal with the same activities ({fan[1]})"
    rows = [figure(label, fan[0], "s", single, "bare: 1 server", goal, met, headline=has_goal)]
    if has_goal:
        rows.append(_server_cpu_row(n, bare, single))
    rows.append(
        figure(
            f"{n} independent servers: create, against the bare fan-out",
            warden[0],
            "s",
            fan[0],
            f"bare: {n} servers",
            headline=has_goal,
        )
    )
    return rows


def _bare_rows(bare: dict[str, dict[str, Any]], walls: dict[str, float]) -> list[dict[str, Any]]:
    """The bare fan-out of each size against bare one server, and Warden's create
    against the bare fan-out of its size."""
    one = _median_of({k: c["wall_s"] for k, c in bare.items()}, "1 bare #")
    if one is None:
        return []
    single, spread = one
    label = f"1 server, bare Temporal with Warden's compute activities ({spread})"
    rows = [figure(label, single, "s", headline=True)]
    for n in SIZES:
        rows += _bare_size_rows(n, bare, walls, single)
    return rows


def _size_rows(
    n: int, creates: dict[str, Any], walls: dict[str, float], single: float
) -> list[dict[str, Any]]:
    """`n` independent servers against one server's create, and against its CPU floor."""
    found = _median_of(walls, f"{n} independent #")
    assert found is not None, f"no create of {n} servers"
    wall, spread = found
    goal, met = _goal(n, single, wall, "≤ {:g}x 1 server")
    label = f"{n} independent servers: create ({spread})"
    rows = [figure(label, wall, "s", single, "critical path: 1 server", goal, met)]
    if "cpu_s" in next(iter(creates.values())):
        rows.append(
            figure(
                f"{n} independent servers: create, against its CPU floor",
                wall,
                "s",
                _cpu_floor_s(creates, n),
                f"CPU s of every process / {os.cpu_count()} cores",
                headline=n in GOAL_INDEPENDENT_RATIO,
            )
        )
    return rows


def create_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Create times against the critical-path floor and the bare floor."""
    creates = results["creates"]
    walls = {k: c["wall_s"] for k, c in creates.items()}
    one = _median_of(walls, "1 independent #")
    assert one is not None, "no create of 1 servers"
    single, spread = one
    rows = [figure(f"1 server: create ({spread})", single, "s", headline=True)]
    for n in SIZES:
        if any(k.startswith(f"{n} independent #") for k in walls):
            rows += _size_rows(n, creates, walls, single)
    rows += _bare_rows(results.get("bare_creates", {}), walls)
    chain = walls[f"{CHAIN}-deep chain"]
    rows.append(
        figure(f"{CHAIN}-deep chain: create", chain, "s", CHAIN * single, f"{CHAIN}x 1 server")
    )
    return rows
