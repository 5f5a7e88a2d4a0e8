"""The scale-in benchmark's sizes, timeouts and pacing (`BENCH_SCALE_IN_SIZES`)."""

from __future__ import annotations

import os

SIZES = (100, 1000)
#: The lifecycle hook's timeout: a victim not completed by then is deleted anyway.
HOOK_TIMEOUT_S = 600
#: How long the whole scale-in may take before the benchmark gives up.
SCALE_IN_TIMEOUT_S = HOOK_TIMEOUT_S + 900
#: Concurrent connections of the client that completes lifecycle tokens.
COMPLETER_CONNECTIONS = 200
#: Victims of the unloaded probe, scaled in one at a time (after one warm-up round).
UNLOADED_ROUNDS = 15
#: The untimed pause before each bare call of the unloaded probe's rounds.
UNLOADED_PAUSE_S = 0.2
#: During each scale-in, the floors of complete_lifecycle's steps are probed this often,
#: in turn: a bare signal, a bare victim, an API GET and a complete_lifecycle that
#: answers without calling Temporal, each meeting the same load as the completions.
LOAD_PROBE_INTERVAL_S = 0.5


def sizes() -> list[int]:
    """The cluster sizes to scale in: `BENCH_SCALE_IN_SIZES`, else `SIZES`."""
    raw = os.environ.get("BENCH_SCALE_IN_SIZES", "")
    return [int(s) for s in raw.split(",") if s.strip()] if raw.strip() else list(SIZES)
