"""complete_lifecycle / heartbeat_lifecycle: find the waiting victim and signal it."""

from __future__ import annotations

import contextlib

from api.auth import Caller
from api.deps import Database
from api.temporal import TemporalGateway
from domain.actions import ActionName, ActionStatus
from domain.errors import NotFound
from domain.lifecycle import LifecycleNote
from store.actions import ActionRecord, get_action
from store.clusters import ClusterRecord


async def signal_lifecycle(
    db: Database,
    temporal: TemporalGateway,
    caller: Caller,
    cluster: ClusterRecord,
    signal: str,
    token: str,
) -> str:
    """Signal `node-delete:{token}`; answers the token (the NODE_DELETE action's id).

    An unknown token, or one of another cluster, is a 404. A token that is no
    longer waiting is a no-op, so an app may safely retry its call.
    """
    action: ActionRecord | None = await db.run(get_action, caller.project_id, token)
    if (
        action is None
        or action.name != ActionName.NODE_DELETE
        or action.inputs.get("cluster_id") != cluster.id
    ):
        raise NotFound(
            f"The lifecycle action token '{token}' could not be found in cluster {cluster.name}."
        )
    if action.status != ActionStatus.WAITING_LIFECYCLE_COMPLETION:
        return token
    client = await temporal.client()
    handle = client.get_workflow_handle(f"node-delete:{token}")
    # NotFound: the wait ended (deadline or an earlier completion) since the read: no-op.
    with contextlib.suppress(NotFound):
        await temporal.call(
            handle.signal(signal, LifecycleNote(source="api"), rpc_timeout=temporal.rpc_timeout),
            subject=f"Lifecycle action {token}",
        )
    return token
