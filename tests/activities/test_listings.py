"""SharedListing: one compute listing serves the probes that ask at about the same time."""

from __future__ import annotations

import asyncio

import pytest

from activities.listings import SharedListing
from domain.errors import BackendUnavailable


class Fetcher:
    """Counts calls; each call waits for `release` and answers its call number."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.fail_next = False

    async def __call__(self) -> dict[str, int]:
        self.calls += 1
        call = self.calls
        await self.release.wait()
        if self.fail_next:
            self.fail_next = False
            raise BackendUnavailable("compute API down")
        return {"call": call}


async def test_callers_join_a_listing_in_flight() -> None:
    fetch = Fetcher()
    shared = SharedListing(fetch, max_age_s=1.0)
    waiting = [asyncio.ensure_future(shared.get()) for _ in range(5)]
    await asyncio.sleep(0)
    fetch.release.set()
    assert [await w for w in waiting] == [{"call": 1}] * 5
    assert fetch.calls == 1


async def test_a_listing_is_reused_until_it_is_older_than_max_age() -> None:
    now = [100.0]
    fetch = Fetcher()
    fetch.release.set()
    shared = SharedListing(fetch, max_age_s=1.0, clock=lambda: now[0])
    assert await shared.get() == {"call": 1}
    now[0] = 100.9
    assert await shared.get() == {"call": 1}
    now[0] = 101.2
    assert await shared.get() == {"call": 2}
    assert shared.fetches == 2


async def test_a_failed_listing_is_never_reused() -> None:
    fetch = Fetcher()
    fetch.release.set()
    fetch.fail_next = True
    shared = SharedListing(fetch, max_age_s=60.0)
    with pytest.raises(BackendUnavailable):
        await shared.get()
    assert await shared.get() == {"call": 2}


async def test_a_cancelled_caller_does_not_cancel_the_others_listing() -> None:
    fetch = Fetcher()
    shared = SharedListing(fetch, max_age_s=1.0)
    first = asyncio.ensure_future(shared.get())
    second = asyncio.ensure_future(shared.get())
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0)
    fetch.release.set()
    assert await second == {"call": 1}
    assert first.cancelled()
    assert fetch.calls == 1
