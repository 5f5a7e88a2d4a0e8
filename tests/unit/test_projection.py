"""Pure projection helpers: cutting queued changes into writes of bounded size."""

from __future__ import annotations

from domain.projection import ChangeSet, split_by_size


def change(n: int, pad: int = 0) -> ChangeSet:
    return ChangeSet(deleted_nodes=[f"node-{n}", "x" * pad])


def size(c: ChangeSet) -> int:
    return len(c.model_dump_json().encode())


def test_changes_are_cut_into_runs_of_bounded_size_in_order() -> None:
    changes = [change(n, pad=100) for n in range(10, 60)]  # all of one size
    limit = 5 * size(changes[0])
    runs = split_by_size(changes, limit)
    assert [c for run in runs for c in run] == changes  # nothing lost, nothing reordered
    assert [len(run) for run in runs] == [5] * 10
    assert all(sum(size(c) for c in run) <= limit for run in runs)


def test_a_change_bigger_than_the_limit_goes_alone() -> None:
    small, big = change(1), change(2, pad=10_000)
    runs = split_by_size([small, big, small], 1_000)
    assert runs == [[small], [big], [small]]


def test_everything_fits_in_one_run_and_nothing_makes_none() -> None:
    changes = [change(n) for n in range(3)]
    assert split_by_size(changes, 1_000_000) == [changes]
    assert split_by_size([], 1_000) == []
