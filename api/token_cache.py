"""Answers about tokens, kept for a while: a bounded LRU keyed by the token's digest."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from api.auth import Caller
from domain.errors import Forbidden, Unauthenticated

#: How many tokens' answers are remembered (least recently used go first).
MAX_CACHED_TOKENS = 10_000


@dataclass(frozen=True, slots=True)
class Answer:
    """What Keystone said about one token, and until when it may be reused."""

    until: float
    caller: Caller | None = None
    error: Unauthenticated | Forbidden | None = None

    def unwrap(self) -> Caller:
        """The caller, or the (fresh) error the token earned."""
        if self.caller is not None:
            return self.caller
        assert self.error is not None
        raise type(self.error)(self.error.message)


class AnswerCache:
    """A bounded LRU of answers keyed by the token's digest (tokens are not kept)."""

    def __init__(self, max_entries: int = MAX_CACHED_TOKENS) -> None:
        self._entries: OrderedDict[str, Answer] = OrderedDict()
        self._max = max_entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, now: float) -> Answer | None:
        """The live answer for `key`, if any."""
        answer = self._entries.get(key)
        if answer is None:
            return None
        if answer.until <= now:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return answer

    def put(self, key: str, answer: Answer) -> None:
        """Remember `answer`, forgetting the least recently used beyond the bound."""
        self._entries[key] = answer
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
