"""The README's performance table is generated from the committed benchmark results."""

from __future__ import annotations

import copy
from pathlib import Path

from bench import report


def test_the_readme_shows_the_committed_results() -> None:
    results = report.load()
    assert report.section(results) in report.README.read_text(), (
        "README.md's performance table is not the one bench/results/latest.json gives: "
        "run `uv run python -m bench.report`"
    )


def test_the_results_say_which_machine_and_commit_they_came_from() -> None:
    results = report.load()
    machine = results[report.MACHINE_KEY]
    assert machine["cores"] and machine["cpu"] and machine["temporal"]
    benches = {k: v for k, v in results.items() if k != report.MACHINE_KEY}
    assert {"stacks", "scale_in"} <= set(benches)
    for name, figures in benches.items():
        assert figures["setup"]["git"]["head"], f"{name} does not name its commit"
        assert figures["setup"]["measured_at"], f"{name} does not say when it ran"
    header = report.header(results)
    assert machine["cpu"] in header
    assert all(f"commit `{f['setup']['git']['head']}`" in header for f in benches.values())


def test_every_goal_is_in_the_table_with_its_baseline() -> None:
    results = report.load()
    table = report.headline(results)
    for name, figures in results.items():
        if name == report.MACHINE_KEY:
            continue
        for figure in figures.get("figures", []):
            if figure["goal"]:
                assert f"| {name}: {figure['measurement']} |" in table


def test_update_rewrites_only_the_generated_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n\n{report.START}\nstale\n{report.END}\n\nafter\n")
    results = copy.deepcopy(report.load())
    assert report.update_readme(results, readme)
    text = readme.read_text()
    assert text.startswith("# Title\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "stale" not in text and report.section(results) in text
    assert not report.update_readme(results, readme)  # already up to date
