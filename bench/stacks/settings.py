"""The stacks benchmark's sizes, latencies, call counts and pacing."""

from __future__ import annotations

from bench.stack import BENCH_PROJECT

LATENCY_MS = 200
#: Creates of each independent size (the box's load makes 100 servers noisy).
RUNS = 3
SIZES = (10, 100, 1000)
#: Creates of each size (1,000 servers take about half a minute each).
RUNS_OF = {1000: 1}
CHAIN = 10
#: Locks (and their paced baselines) timed: 200, so that p99 is not simply the slowest
#: call (of 50 calls, the p99 was the maximum).
LOCK_CALLS = 200
LOCK_WARMUP = 3
#: Calls of each kind in a round of interleaved round trips (marks or locks, and their
#: baselines): 300 marks are 15 rounds, 200 locks 10.
ROUND_CALLS = 20
#: Pause after *_COMPLETE so the stack workflow is idle (its last task done) when timed.
IDLE_S = 0.2
POLL_S = 0.02
CREATE_TIMEOUT_S = 900.0
BASE = f"/v1/{BENCH_PROJECT}/stacks"
IMAGE, FLAVOR = "cirros", "m1.tiny"
SERVER = {"type": "OS::Nova::Server", "properties": {"image": IMAGE, "flavor": FLAVOR}}
