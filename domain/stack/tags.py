"""Heat's stack tags in a stack list: `tags`, `tags_any`, `not_tags`, `not_tags_any`
and the hidden tags (`heat/db/api.py` `_filter_and_page_query`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TagFilter:
    """Which stacks a list shows, by their tags (empty: no condition)."""

    all_of: Sequence[str] = ()
    any_of: Sequence[str] = ()
    not_all_of: Sequence[str] = ()
    not_any_of: Sequence[str] = ()
    hidden: Sequence[str] = field(default_factory=tuple)

    def shows(self, tags: Sequence[str] | None) -> bool:
        """Whether a stack with these tags is listed."""
        have = set(tags or ())
        if self.all_of and not set(self.all_of) <= have:
            return False
        if self.any_of and not have & set(self.any_of):
            return False
        if self.not_all_of and set(self.not_all_of) <= have:
            return False
        if self.not_any_of and have & set(self.not_any_of):
            return False
        return not have & set(self.hidden)
