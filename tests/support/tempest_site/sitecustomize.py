"""Imported at start-up by the tempest processes Warden's tests run (on `PYTHONPATH`).

senlin-tempest-plugin waits for an action or a deletion by sleeping 5 s, hard-coded,
before each look: a cluster made and deleted costs 10 s of sleep, and its 300 API tests
took over half an hour against a Warden that answers in milliseconds. Here its 5 s
sleeps are `POLL_S`: the same waits, with the same timeouts and assertions, looked at
more often. No other sleep changes.
"""

from __future__ import annotations

import sys
import time
from typing import SupportsIndex

POLL_S = 0.25
_PLUGIN_POLL_S = 5
_sleep = time.sleep


def _sleep_polling_faster(seconds: float | SupportsIndex) -> None:
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if seconds == _PLUGIN_POLL_S and caller.startswith("senlin_tempest_plugin."):
        seconds = POLL_S
    _sleep(seconds)


time.sleep = _sleep_polling_faster
