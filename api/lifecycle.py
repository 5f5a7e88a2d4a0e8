"""complete_lifecycle / heartbeat_lifecycle: find the waiting victim and signal it."""

from __future__ import annotations

import asyncio

from sqlmodel import Session

from api.auth import Caller
from api.deps import Database
from api.temporal import TemporalGateway
from domain.actions import ActionName, ActionStatus
from domain.cluster.lifecycle import LifecycleNote
from domain.errors import Conflict, InvalidRequest, NotFound
from store.actions import ActionRecord, get_action
from store.clusters import ClusterRecord, get_cluster
from workflows import ids
from workflows.cluster.lifecycle_messages import LIFECYCLE_SIGNALS

#: A victim's workflow starts within milliseconds of its row; wait this long at most.
START_RETRIES = 25
START_RETRY_DELAY_S = 0.2


def _cluster_and_action(
    session: Session, project_id: str, cluster_id: str, token: str
) -> tuple[ClusterRecord | None, ActionRecord | None]:
    return get_cluster(session, project_id, cluster_id), get_action(session, project_id, token)


async def signal_lifecycle(
    db: Database,
    temporal: TemporalGateway,
    caller: Caller,
    cluster_id: str,
    signal: str,
    token: str,
) -> str:
    """Signal `node-delete:{token}` with one of `LIFECYCLE_SIGNALS`; answers the token
    (the NODE_DELETE action's id).

    An unknown cluster, an unknown token, or one of another cluster, is a 404. A token
    that is no longer waiting is a no-op, so an app may safely retry its call; so is
    another action of the cluster, which has no hook to complete (Senlin answers 202 and
    resumes nothing, too). The
    cluster and the action are read in one database call: an app completing a burst of
    tokens waits on one thread hop each, not two (docs/performance.md).
    """
    if signal not in LIFECYCLE_SIGNALS:
        raise InvalidRequest(f"{signal} is not a lifecycle signal.")
    cluster, action = await db.run(_cluster_and_action, caller.project_id, cluster_id, token)
    if cluster is None:
        raise NotFound(f"The cluster '{cluster_id}' could not be found.")
    ours = action is not None and cluster.id in (action.target, action.inputs.get("cluster_id"))
    if action is None or not ours:
        raise NotFound(
            f"The lifecycle action token '{token}' could not be found in cluster {cluster.name}."
        )
    if action.name != ActionName.NODE_DELETE:
        return token  # an action of the cluster with no lifecycle to complete
    client = await temporal.client()
    handle = client.get_workflow_handle(ids.node_deletion(token))
    for _ in range(START_RETRIES):
        if action is None or action.status != ActionStatus.WAITING_LIFECYCLE_COMPLETION:
            return token  # no longer waiting: a retry of a call that already worked
        try:
            await temporal.call(
                handle.signal(
                    signal, LifecycleNote(source="api"), rpc_timeout=temporal.rpc_timeout
                ),
                subject=f"Lifecycle action {token}",
            )
        except NotFound:
            # The victim is recorded as waiting just before its workflow starts, and
            # stops waiting just before its row changes: look again shortly.
            await asyncio.sleep(START_RETRY_DELAY_S)
            action = await db.run(get_action, caller.project_id, token)
            continue
        return token
    raise Conflict(f"The lifecycle action {token} is not ready yet; retry shortly.")
