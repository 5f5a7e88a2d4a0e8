"""Timing calls and summing up samples: percentiles, milliseconds, differences."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

#: A timed call: runs one call (and whatever untimed steps follow it), returns seconds.
Sample = Callable[[], Awaitable[float]]


def pct(samples: Iterable[float], q: float) -> float | None:
    """The `q` quantile of `samples` (0.5: the p50), None if there are none."""
    ordered = sorted(samples)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float | None) -> float | None:
    """Seconds in milliseconds (None stays None)."""
    return None if seconds is None else seconds * 1000


def per(totals: Counter[str], n: int) -> dict[str, float]:
    """Each total divided by `n` (a mean per history), largest first."""
    return {k: round(v / max(1, n), 1) for k, v in totals.most_common()}


def delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """What each counter (CPU seconds, store calls) grew by between two readings."""
    return {k: round(after[k] - before.get(k, 0.0), 2) for k in after}


def timing(call: Callable[[], Awaitable[Any]], windows: list[tuple[float, float]]) -> Sample:
    """`call` as a `Sample` that also records its wall-clock span in `windows`."""

    async def sample() -> float:
        sent, start = time.time(), time.perf_counter()
        await call()
        took = time.perf_counter() - start
        windows.append((sent, time.time()))
        return took

    return sample


async def timed(
    call: Callable[[], Awaitable[Any]],
    runs: int,
    windows: list[tuple[float, float]] | None = None,
    *,
    idle_s: float = 0.0,
) -> list[float]:
    """Durations of `runs` calls in turn; with `windows`, each call's wall-clock span too.
    `idle_s`: an untimed pause before each call (calls paced like the lock's)."""
    sample = timing(call, [] if windows is None else windows)
    samples = []
    for _ in range(runs):
        if idle_s:
            await asyncio.sleep(idle_s)
        samples.append(await sample())
    return samples
