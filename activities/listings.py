"""One compute listing shared by the health probes that ask for it at about the same time.

Every `probe_nodes` with NODE_STATUS_POLLING needs the project's servers. Listing them
once per cluster per round costs clusters times servers; sharing a listing between probes
that start within `max_age_s` of it makes the cost per round about one listing per
project, at the price of results at most `max_age_s` (plus the listing's own time) old.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")

#: How long a listing is reused; well inside the health goal of interval + 2 s.
DEFAULT_MAX_AGE_S = 1.0


class SharedListing(Generic[T]):
    """Shares one `fetch()` result (by id) among callers within `max_age_s` of its start.

    A fetch in flight is joined rather than repeated; a fetch that failed is never
    reused, so every caller sees its own attempt's error or a fresh success. A caller
    cancelled while waiting does not cancel the fetch others are waiting on.
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[Mapping[str, T]]],
        *,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._max_age_s = max_age_s
        self._clock = clock
        self._task: asyncio.Task[Mapping[str, T]] | None = None
        self._started = 0.0
        self.fetches = 0

    def _reusable(self) -> bool:
        task = self._task
        if task is None:
            return False
        if not task.done():
            return True
        if task.cancelled() or task.exception() is not None:
            return False
        return self._clock() - self._started <= self._max_age_s

    async def get(self) -> Mapping[str, T]:
        """The shared listing: a fresh one, or one started at most `max_age_s` ago."""
        if not self._reusable():
            self._started = self._clock()
            self.fetches += 1
            self._task = asyncio.ensure_future(self._fetch())
        assert self._task is not None
        return await asyncio.shield(self._task)
