"""CloudChecksWorkflow: Heat's custom constraints looked up before a stack is made.

The API never calls the cloud itself: a stack create, preview or validate whose
template names flavors, images, key pairs, networks… (`domain.hot.cloud_lookups`) runs
this short workflow (`cloud-checks:<uuid>`, visible in the Temporal UI like any other)
and answers a 400 with what the cloud does not have.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from domain.hot.cloud_lookups import ConstraintCheck
    from workflows.stack.messages import CLOUD_CHECKS_WORKFLOW

#: Lookups for a request that waits: a few quick tries, then the API goes on without.
CHECK_RETRY: Final = RetryPolicy(maximum_attempts=3, maximum_interval=timedelta(seconds=2))


@workflow.defn(name=CLOUD_CHECKS_WORKFLOW)
class CloudChecksWorkflow:
    """The first named object the cloud lacks, in Heat's words; None when all exist."""

    @workflow.run
    async def run(self, checks: list[ConstraintCheck]) -> str | None:
        workflow.set_current_details(f"Looking up {len(checks)} named cloud object(s)")
        if not checks:
            return None
        problem: str | None = await workflow.execute_activity_method(
            ComputeActivities.check_cloud_constraints,
            checks,
            start_to_close_timeout=timedelta(seconds=15),
            retry_policy=CHECK_RETRY,
            summary=f"look up {len(checks)} object(s)",
        )
        return problem
