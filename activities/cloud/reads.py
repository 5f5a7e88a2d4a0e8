"""Reads inside a longer activity, tried again at once after a transient failure.

An activity such as `remove_node` or `create_server` makes several calls (a lookup, the
write, reads of what it made); any failure fails the whole attempt, and Temporal's
retry backs off for up to 30 s. Against a cloud failing 30 % of calls, five calls an attempt succeed
together 17 % of the time, and a removal needed 11 attempts (over 3 minutes) about
once in 20. A read changes nothing, so it is safe to repeat on the spot, as Heat's
clients do (`client_retry_limit`) and Nova's Neutron client does (`http_retries`):
the attempt then fails only on its write or on an outage that outlasts the repeats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from domain.errors import BackendUnavailable

T = TypeVar("T")

#: Tries of one read before its failure fails the activity's attempt.
READ_TRIES: Final = 3
#: Pause before the second try, doubled before each next one.
READ_PAUSE_S: Final = 0.2


async def read(
    call: Callable[[], Awaitable[T]], *, tries: int = READ_TRIES, pause_s: float = READ_PAUSE_S
) -> T:
    """`await call()`, tried up to `tries` times while it fails with a 5xx, a timeout
    or no route (`BackendUnavailable`); any other error, or the last, is raised."""
    for _ in range(tries - 1):
        try:
            return await call()
        except BackendUnavailable:
            await asyncio.sleep(pause_s)
            pause_s *= 2
    return await call()
