"""NodeDetailsWorkflow: the servers of some nodes, read for the API's `details`.

The API never calls the cloud itself: `GET /v1/nodes/{id}?show_details=true` and a
cluster collect of `details.…` run this short workflow (`node-details:<uuid>`, visible
in the Temporal UI like any other) and wait for its answer.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from workflows.node.messages import NODE_DETAILS_WORKFLOW

#: A read for a GET: a few quick tries, then the API says the cloud did not answer.
READ_RETRY: Final = RetryPolicy(maximum_attempts=3, maximum_interval=timedelta(seconds=2))


@workflow.defn(name=NODE_DETAILS_WORKFLOW)
class NodeDetailsWorkflow:
    """Senlin's details of each server named (by physical id)."""

    @workflow.run
    async def run(self, physical_ids: list[str]) -> dict[str, dict[str, Any]]:
        workflow.set_current_details(f"Reading {len(physical_ids)} server(s) for their details")
        if not physical_ids:
            return {}
        details: dict[str, dict[str, Any]] = await workflow.execute_activity_method(
            ComputeActivities.get_server_details,
            physical_ids,
            start_to_close_timeout=timedelta(seconds=20),
            retry_policy=READ_RETRY,
            summary=f"details of {len(physical_ids)} server(s)",
        )
        return details
