"""The networked-stacks benchmark's templates and figures (its runs are `make bench`'s)."""

from __future__ import annotations

from bench.networked import figures, networked, plain
from domain.hot.template import load_template


def test_the_networked_template_is_heat_s_and_waits_where_heat_waits() -> None:
    template = load_template(networked(3))
    deps = template.dependencies()

    assert len(template.resources) == 4 + 3 * 3
    assert {"port000", "interface"} <= deps["fip000"]  # the router before the floating IP
    assert "subnet" in deps["port000"]
    assert load_template(plain(3)).creation_order() == ["server000", "server001", "server002"]


def test_figures_hold_each_phase_against_the_plain_stack() -> None:
    runs = {
        "plain": [{"create_s": 1.0, "heal_s": 2.0, "delete_s": 1.0}] * 3,
        "networked": [{"create_s": 3.0, "heal_s": 3.0, "delete_s": 2.0}] * 3,
    }
    rows = figures(runs)

    assert [round(r["ratio"], 2) for r in rows] == [3.0, 1.5, 2.0]
    assert all(r["headline"] for r in rows)
