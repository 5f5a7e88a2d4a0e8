"""The health manager's view of a cluster, for `GET /v1/clusters/{cluster_id}`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio.service import RPCError

from api.temporal import TemporalGateway
from domain.errors import WardenError
from workflows.health import HealthSummary

#: A cluster read must stay fast even when no worker answers queries.
QUERY_TIMEOUT = timedelta(seconds=2)


async def health_summary(temporal: TemporalGateway, cluster_id: str) -> dict[str, Any]:
    """`describe` of `health:{cluster_id}`, or why it is not available right now."""
    try:
        client = await temporal.client()
        handle = client.get_workflow_handle(f"health:{cluster_id}")
        summary = await handle.query(
            "describe", result_type=HealthSummary, rpc_timeout=QUERY_TIMEOUT
        )
    except (TimeoutError, RPCError, WardenError) as err:
        return {"available": False, "reason": str(err) or type(err).__name__}
    return {"available": True, **summary.model_dump(mode="json")}
