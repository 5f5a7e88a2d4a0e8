"""docs/performance.md's table is generated from the committed benchmark results."""

from __future__ import annotations

import copy
from pathlib import Path

from bench import report


def test_the_performance_doc_shows_the_committed_results() -> None:
    results = report.load()
    assert report.section(results) in report.PERFORMANCE_DOC.read_text(), (
        "docs/performance.md's table is not the one bench/results/latest.json gives: "
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
    assert all(f"commit `{f['setup']['git']['head']}`" in header for f in benches.values())
    for name in benches:
        assert report.machine_of(results, name)["cpu"] in header, f"{name}: no machine"


def test_each_benchmark_names_the_machine_it_ran_on() -> None:
    one = {"cpu": "Intel Xeon", "cores": 2}
    other = {"cpu": "AMD EPYC", "cores": 2}

    def ran_on(box: dict[str, object]) -> dict[str, object]:
        return {"setup": {"git": {"head": "abc1234"}, "machine": box}}

    same = report.header({report.MACHINE_KEY: other, "a": ran_on(one), "b": ran_on(one)})
    assert same.startswith("Measured on Intel Xeon, 2 cores") and "AMD" not in same
    mixed = report.header({report.MACHINE_KEY: other, "a": ran_on(one), "b": ran_on(other)})
    assert "- `a`: commit `abc1234`, on Intel Xeon, 2 cores" in mixed
    assert "- `b`: commit `abc1234`, on AMD EPYC, 2 cores" in mixed
    # Results written before benchmarks kept their own machine: the last run's.
    legacy = report.header({report.MACHINE_KEY: other, "a": {"setup": {}}})
    assert legacy.startswith("Measured on AMD EPYC, 2 cores")


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
    assert report.update_doc(results, readme)
    text = readme.read_text()
    assert text.startswith("# Title\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "stale" not in text and report.section(results) in text
    assert not report.update_doc(results, readme)  # already up to date
