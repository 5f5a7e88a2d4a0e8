"""The health benchmark's sizes, intervals and counts (`BENCH_HEALTH_*`)."""

from __future__ import annotations

import os

from temporalio.api.enums.v1 import EventType

SIZES = (100, 500, 1000, 2000, 4000)
CLUSTER_SIZE = 100
INTERVAL_S = 10
#: Slack over the interval for "keeps up" and for detection (docs/api-contract.md §Benchmarks).
SLACK_S = 2.0
#: Measurement window of each size (about four rounds).
WINDOW_S = 40.0
IDLE_WINDOW_S = 20.0
CREATE_CONCURRENCY = 3
#: Polling faults, each on its own cluster (fewer when fewer clusters are watched).
POLL_FAULTS = 8
LIFECYCLE_FAULTS = 5
#: Nodes of the LIFECYCLE_EVENTS cluster: max_unhealthy 49% must tolerate every fault.
LIFECYCLE_NODES = 20
#: The default `retry_backoff` of a health policy: spurious retries come after it.
RETRY_BACKOFF_S = 30
#: The unloaded bare loop: short waits, many rounds (activity round trip, events per round).
BARE_LOOP_ROUNDS = 20
BARE_LOOP_INTERVAL_MS = 100
#: Bare loops at the health interval run alongside the product in each window.
BARE_LOOPS_IN_WINDOW = 5
BARE_SIGNALS = 30
LIST_RUNS = 5
FAULT_TIMEOUT_S = 120.0
EVENT_POLL_S = 0.2
#: The Temporal server suggests continue-as-new at this history size.
CAN_SUGGESTED_BYTES = 4 * 1024 * 1024
#: simcloud's X-Auth-Token for notifications; in the tokens file only while wanted.
NOTIFY_TOKEN = "bench-notify"

PROBE_ACTIVITY = "probe_nodes"
BARE_ACTIVITY = "bench_health_noop"
SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
COMPLETED = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED


def sizes() -> list[int]:
    """Nodes watched at each step: `BENCH_HEALTH_SIZES`, else `SIZES`."""
    raw = os.environ.get("BENCH_HEALTH_SIZES", "")
    return sorted(int(s) for s in raw.split(",") if s.strip()) if raw.strip() else list(SIZES)


def cluster_size() -> int:
    """Nodes of each watched cluster: `BENCH_HEALTH_CLUSTER_SIZE`, else `CLUSTER_SIZE`."""
    return int(os.environ.get("BENCH_HEALTH_CLUSTER_SIZE", CLUSTER_SIZE))


def window_s() -> float:
    """Each step's measurement window: `BENCH_HEALTH_WINDOW_S`, else `WINDOW_S`."""
    return float(os.environ.get("BENCH_HEALTH_WINDOW_S", WINDOW_S))
