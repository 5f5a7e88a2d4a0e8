"""Heat's stack tags: which stacks a list shows, and what an update does to them."""

from __future__ import annotations

import pytest

from domain.stack.tags import TagFilter


@pytest.mark.parametrize(
    ("tags", "wanted", "shown"),
    [
        (["a", "b"], TagFilter(), True),
        (None, TagFilter(), True),
        (["a", "b"], TagFilter(all_of=("a", "b")), True),
        (["a"], TagFilter(all_of=("a", "b")), False),
        (["a"], TagFilter(any_of=("b", "a")), True),
        (None, TagFilter(any_of=("a",)), False),
        (["a", "b"], TagFilter(not_all_of=("a", "b")), False),
        (["a"], TagFilter(not_all_of=("a", "b")), True),
        (["a"], TagFilter(not_any_of=("b", "a")), False),
        (["x", "secret"], TagFilter(hidden=("secret",)), False),
        (["x"], TagFilter(hidden=("secret",)), True),
    ],
)
def test_a_list_shows_a_stack_as_heats_query_would(
    tags: list[str] | None, wanted: TagFilter, shown: bool
) -> None:
    assert wanted.shows(tags) is shown
