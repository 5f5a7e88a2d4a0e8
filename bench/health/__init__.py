"""Benchmark the health manager: `uv run python -m bench health`.

docs/api-contract.md §Benchmarks, item 3.

Everything runs against one real stack (`bench.stack`: Temporal dev server with a
SQLite file, simcloud, worker, API; `WARDEN_HEALTH_CHECK_INTERVAL_MIN=1`; simcloud
posts its Nova notifications to the API's `/v1/notifications`) in the same run:

1. Baselines from a worker in this process, on its own task queue of the same dev
   server: a bare loop shaped like the health manager's (a `wait_condition` timeout,
   then one no-op activity) gives the activity round trip (scheduled → completed in
   the history, exactly how probe rounds are measured) and its history events per
   round; the same loops at the health interval run inside every measurement window
   (the floor of the round period and of the activity round trip under that load); a
   bare signal → activity reaction; a driver `list_servers()` of every server from
   this process (the probe's cloud call).
2. Capacity: clusters of `BENCH_HEALTH_CLUSTER_SIZE` nodes (default 100) adding up to
   the largest size are created first; the worker is measured idle with all of them
   (CPU %, RSS). Then for each size N (`BENCH_HEALTH_SIZES`, default
   `100,500,1000,2000,4000`) a NODE_STATUS_POLLING health policy (interval 10 s) is
   attached to more clusters (attaches spread over one interval, as they would be in
   life) until N nodes are watched; after the new managers' first round, a window of
   `WINDOW_S` seconds gives: probe round durations (`probe_nodes` scheduled →
   completed in every manager's history), the period between rounds, history events
   and bytes per round, worker CPU % and RSS, and bare loops run in the same window.
3. Detection by polling, with every size watched: `shutoff` faults (cured_by REBOOT)
   on nodes of different clusters, each timed from its manager's history to land at a
   different phase of the round period ((i + ½)/K of a period before the next round),
   so the samples span the best to the worst case. fault → first UNHEALTHY
   HEALTH_CHECK event and fault → `RECOVER_*: healthy again` event (event timestamps;
   the node is then ACTIVE). Runs after 4; notifications are refused meanwhile (the
   notify token is out of the tokens file), or they would bring the next round
   forward and hide the polling latency.
4. LIFECYCLE_EVENTS: the notify token is added to the tokens file (the API reloads
   it), a small cluster with a LIFECYCLE_EVENTS policy gets `pause` faults (cured_by
   UNPAUSE) one at a time: fault → HEALTH_CHECK and fault → recovered. Afterwards
   (≥ one retry backoff later) the recoveries the cluster ran are counted: one per
   fault is expected.

Environment: `BENCH_HEALTH_SIZES=100,500` (nodes watched per step),
`BENCH_HEALTH_CLUSTER_SIZE=100`, `BENCH_HEALTH_WINDOW_S=40`, `BENCH_TEMPORAL_DB=memory`
(dev server on in-memory SQLite instead of a file).
"""

from bench.health.runner import run
from bench.health.tables import table

__all__ = ["run", "table"]
