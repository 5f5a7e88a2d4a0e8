"""What the worker runs: every workflow class and activity instance."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.engine import Engine

from activities.compute import ComputeActivities
from activities.store import StoreActivities
from workflows.cluster_ops import ClusterCheckWorkflow, ClusterCreateWorkflow, ClusterDeleteWorkflow
from workflows.clusters import ClusterWorkflow

WORKFLOWS: Sequence[type] = (
    ClusterWorkflow,
    ClusterCreateWorkflow,
    ClusterCheckWorkflow,
    ClusterDeleteWorkflow,
)


def build_activities(engine: Engine, compute: ComputeActivities) -> list[Callable[..., Any]]:
    """Bound activity methods over the process's long-lived clients."""
    store = StoreActivities(engine)
    return [
        store.record_changes,
        compute.create_server,
        compute.wait_server_active,
        compute.delete_server,
        compute.wait_server_deleted,
        compute.get_server_statuses,
    ]
