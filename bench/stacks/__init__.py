"""Benchmark stacks: `uv run python -m bench stacks`.

One real stack (`bench.stack`) whose simcloud answers every OpenStack call after
200 ms (`POST /sim/api-faults {"latency_ms": 200}`), measured in the same run:

1. Stack create wall time (POST → CREATE_COMPLETE, GET polled every ≥ 20 ms) of 1, 10,
   100 and 1,000 independent `OS::Nova::Server` resources (`RUNS` times each, 1,000 once;
   medians; 1 is the baseline) and a 10-deep `depends_on` chain. Each size is also held
   against its CPU floor: the CPU seconds every process spent on it, over the cores.
   The critical-path floor is the one-server time for independent servers and 10x it
   for the chain. A server is 3 compute calls (`create_server`: lookup, POST, GET; simcloud
   builds at once, so no `wait_server_active`), at least 600 ms of latency. Each create's
   histories are profiled (queueing and run times of activities and workflow tasks,
   retries) with each process's CPU seconds.
2. The bare floor of the same sizes: one bare workflow runs Warden's own compute
   activities for every server at once (`BenchServersWorkflow`, worker here, Warden's
   cloud driver, the same simcloud): whether a goal is below what bare Temporal does
   with the same cloud calls on this machine, and what Warden adds to it.
3. API round trips on an idle one-server stack: mark-unhealthy (`PATCH` true and false
   alternately) and lock (`POST …/actions` until the 200; LOCK_COMPLETE, unlock and
   UNLOCK_COMPLETE are waited for untimed, then `IDLE_S`), p50/p99 against a bare
   Temporal update on the same dev server (`bench.echo`'s echo workflow, worker here),
   and against the floor of an update that must write before it answers: a bare update
   awaiting a local activity's SQLite commit, plus the API's own GET. Locks are paced
   (each waits for the last lock or unlock to finish, then `IDLE_S`), and a call after an
   idle pause costs more on this machine than one right after another: they are held to
   the same bare updates, and the same GET, paced the same way. Each Warden call and its
   baselines are timed interleaved, in rounds of `ROUND_CALLS` of each (`interleaved`),
   so that a stall of the machine lands on both sides of a ratio, not on one.
"""

from bench.stacks.runner import run
from bench.stacks.tables import table

__all__ = ["run", "table"]
