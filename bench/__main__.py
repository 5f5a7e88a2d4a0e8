"""`make bench`: every benchmark, results in bench/results/latest.json and a table.

    uv run python -m bench                # all of them
    uv run python -m bench scale_in       # only the ones named
    BENCH_SCALE_IN_SIZES=100 uv run python -m bench scale_in
    BENCH_HEALTH_SIZES=100,500 uv run python -m bench health
    uv run python -m bench stacks         # stack create and round trips
    uv run python -m bench networked      # 100 servers with ports and floating IPs
    uv run python -m bench server_creates # 2,000 creates on a 30 % 5xx cloud
    uv run python -m bench rolling        # a 100-node cluster update in batches of 10
    uv run python -m bench store          # the projection's writes, in process

Benchmarks run against real processes; none of this is part of `make test`. Running
a subset keeps the other benchmarks' last results in latest.json / latest.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import cloud, health, networked, report, rolling, scale_in, server_creates, stacks, store

RESULTS = Path(__file__).parent / "results"

#: name → (run, table): each run returns JSON-able figures, each table renders them.
BENCHMARKS: dict[str, tuple[Callable[[], Awaitable[dict[str, Any]]], Callable[..., str]]] = {
    "cloud": (cloud.run, cloud.table),
    "scale_in": (scale_in.run, scale_in.table),
    "health": (health.run, health.table),
    "stacks": (stacks.run, stacks.table),
    "networked": (networked.run, networked.table),
    "server_creates": (server_creates.run, server_creates.table),
    "rolling": (rolling.run, rolling.table),
    "store": (store.run, store.table),
}


async def run_selected(names: list[str]) -> dict[str, dict[str, Any]]:
    """Run the named benchmarks in turn."""
    return {name: _stamped(await BENCHMARKS[name][0]()) for name in names}


def _previous() -> dict[str, dict[str, Any]]:
    try:
        loaded: dict[str, dict[str, Any]] = json.loads((RESULTS / "latest.json").read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in loaded.items() if k in BENCHMARKS}


def _stamped(figures: dict[str, Any]) -> dict[str, Any]:
    """A fresh result with when it ended, for latest.md and docs/performance.md."""
    setup = figures.setdefault("setup", {})
    setup["measured_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    setup["machine"] = report.machine()
    setup.setdefault("git", report.git_state())
    return figures


def main(argv: list[str] | None = None) -> None:
    """Run, print the tables, write latest.json and latest.md."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="benchmark", help=", ".join(BENCHMARKS))
    names = parser.parse_args(argv).names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(
            f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}"
        )
    fresh = asyncio.run(run_selected(names))
    results = _previous() | fresh
    everything = {report.MACHINE_KEY: report.machine(), **results}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(everything, indent=2, default=str) + "\n")
    sections = {
        name: f"## {name}\n\n{BENCHMARKS[name][1](figures)}" for name, figures in results.items()
    }
    top = f"# Benchmark results\n\n{report.header(everything)}\n\n"
    (RESULTS / "latest.md").write_text(top + "\n\n".join(sections.values()) + "\n")
    print("\n\n".join(sections[name] for name in fresh))
    if report.update_doc(everything):
        print("docs/performance.md: performance table updated from latest.json")


if __name__ == "__main__":
    main()
