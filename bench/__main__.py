"""`make bench`: every benchmark, results in bench/results/latest.json and a table.

Benchmarks run against real processes; none of this is part of `make test`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bench import cloud

RESULTS = Path(__file__).parent / "results"


async def run_all() -> dict[str, dict[str, object]]:
    """Run each benchmark module in turn."""
    return {"cloud": await cloud.run()}


def main() -> None:
    """Run, print the tables, write latest.json and latest.md."""
    results = asyncio.run(run_all())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    markdown = "\n\n".join(
        f"## {name}\n\n{cloud.table(figures)}" for name, figures in results.items()
    )
    (RESULTS / "latest.md").write_text(markdown + "\n")
    print(markdown)


main()
