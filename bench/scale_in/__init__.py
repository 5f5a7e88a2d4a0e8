"""Benchmark scale-in with lifecycle hooks: `uv run python -m bench scale_in`.

Everything runs against one real stack (`bench.stack`: Temporal dev server with a
SQLite file, simcloud, worker, API) in the same run:

1. Baselines on the same dev server, from a worker in this process on its own task
   queue: a bare update round trip and a bare signal call (a trivial workflow), and a
   bare fan-out of N children shaped like the product's (announce activity, wait for a
   signal with a timer, one more activity) whose signals are sent as soon as each
   child announces itself: its end-to-end time, signal → activity latency and history
   events per child are the floor of the same work done with bare Temporal. The same
   fan-out again with *listed* victims, carrying what Warden's carry for the UI and
   `warden` listings (its four search attributes, a summary and details, a final status
   upsert): what those listings alone ask of the Temporal server.
2. Unloaded: a small cluster scaled in one node at a time, so complete_lifecycle →
   delete is seen without a burst (one warm-up round, not counted). After each round,
   with the same pause before each, a bare victim signalled as it announces itself and
   a bare update: the floor and the baseline of that round's call, timed in the same
   rounds. Then the API's own floor (a GET of an action, and complete_lifecycle on a
   finished token, which answers without calling Temporal).
3. For each size N (`BENCH_SCALE_IN_SIZES`, default `100,1000`): create an N-node
   cluster, attach a deletion policy with a webhook hook (timeout 600 s) pointing at a
   receiver in this process, and scale in N nodes. The receiver completes every
   lifecycle token through the API (`complete_lifecycle` at the message's
   `complete_url`) as soon as the message arrives. simcloud posts a Nova notification
   to the same receiver when a server's DELETE arrives; its `timestamp` (taken inside
   simcloud's DELETE handler) is the backend delete time. While it runs, `LoadProbe`
   times the call's steps one by one under the same load: a bare signal, a bare victim
   signalled as it announces itself, an API GET and a complete_lifecycle that answers
   without calling Temporal (one every 0.5 s).

Figures: end-to-end (scale_in POST → parent action SUCCEEDED, from the action's
`ended_at`), complete_lifecycle → backend delete p50/p99 (delete time minus the
moment the complete_lifecycle POST was sent; also minus when it returned), Temporal
history events per node over every workflow involved (the cluster workflow's growth
during the scale-in, `cluster-op:…`, its shards and every `node-delete:{token}`), and
the largest single history; each with its baseline and its goal. The Temporal server's
CPU and its store's work by operation (from its Prometheus metrics) are recorded for
the bare fan-out and for each scale-in, to compare what each asks of the server.

Environment: `BENCH_SCALE_IN_SIZES=100` (comma-separated sizes), `BENCH_TEMPORAL_DB=memory`
(dev server on in-memory SQLite instead of a file, as the integration tests run it),
`BENCH_SCALE_IN_GROWN=1` (also run the listed bare fan-out of each size right before its
scale-in, on the database that already holds the cluster's creation), `BENCH_WORKERS=2`
(replicas of Warden's worker, `bench.stack`), `BENCH_TIMELINES=/tmp/tl` (every victim's
history events beside the app's own times, Warden's and the bare fan-outs', to
`/tmp/tl-{size}.json`, `/tmp/tl-bare-{size}.json` and `/tmp/tl-listed-{size}.json`; the
scale-in's own workflow and its shards to `/tmp/tl-ops-{size}.json`).
"""

from bench.scale_in.runner import run
from bench.scale_in.tables import cpu_cell, table

# `cpu_cell` is read from here by tests/unit/worker/test_threads.py.
__all__ = ["cpu_cell", "run", "table"]
