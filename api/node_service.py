"""Commands on nodes: standalone nodes' own entity workflows, members' clusters."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, TypeVar

from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from api.auth import Caller
from api.cluster_service import find_cluster, send_cluster_update, type_of
from api.deps import Database
from api.schemas.clusters import NodePublic
from api.schemas.nodes import NodeBody
from api.temporal import TemporalGateway
from domain.cluster.nodes import NodeState
from domain.cluster.requests import ClusterOperationRequest, OperationAccepted
from domain.cluster.stack_calls import STACK_NAME_KEY
from domain.cluster.standalone import NO_CLUSTER, StandaloneNode
from domain.errors import InvalidRequest, NotFound
from store.clusters import NodeRecord, get_node
from store.profiles import ProfileRecord, get_profile
from workflows import ids
from workflows.cluster.messages import ClusterOperations
from workflows.node.messages import NODE_WORKFLOW, NodeInput, NodeOperations
from workflows.operation import ActionRequest, Operation
from workflows.search_attributes import warden_attributes

RequestT = TypeVar("RequestT", bound=ActionRequest)


async def create_node(
    db: Database, temporal: TemporalGateway, caller: Caller, body: NodeBody
) -> tuple[str, OperationAccepted]:
    """A node: standalone (its own entity workflow) or, with `cluster_id`, the cluster's
    new member (Senlin's NODE_CREATE: the cluster grows by one). Returns its id."""
    profile: ProfileRecord | None = await db.run(get_profile, caller.project_id, body.profile_id)
    if profile is None:
        raise InvalidRequest(f"The specified profile '{body.profile_id}' could not be found.")
    node_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
    if body.cluster_id:
        try:
            cluster = await find_cluster(db, caller, body.cluster_id)
        except NotFound as err:
            raise InvalidRequest(
                f"The specified cluster '{body.cluster_id}' could not be found."
            ) from err
        theirs: ProfileRecord | None = await db.run(
            get_profile, caller.project_id, cluster.profile_id
        )
        if type_of(theirs) != type_of(profile):
            raise InvalidRequest("Node and cluster have different profile type, operation aborted.")
        params: dict[str, Any] = {
            "node_id": node_id,
            "name": body.name,
            "profile_id": profile.id,
            "role": body.role or "",
            "metadata": body.metadata,
        }
        request = ClusterOperationRequest(action_id=action_id, params=params)
        accepted = await send_cluster_update(
            temporal, cluster, ClusterOperations.create_node, request
        )
        return node_id, accepted
    return node_id, await _start_standalone(temporal, caller, body, profile, node_id, action_id)


async def _start_standalone(
    temporal: TemporalGateway,
    caller: Caller,
    body: NodeBody,
    profile: ProfileRecord,
    node_id: str,
    action_id: str,
) -> OperationAccepted:
    now = datetime.now(UTC)
    node = NodeState(
        node_id=node_id,
        name=body.name,
        index=-1,
        profile_id=profile.id,
        role=body.role or "",
        metadata=body.metadata,
        created_at=now,
        updated_at=now,
    )
    state = StandaloneNode(project_id=caller.project_id, profile=profile.spec, node=node)
    client = await temporal.client()
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        NODE_WORKFLOW,
        NodeInput(state=state),
        id=ids.node(node_id),
        result_type=StandaloneNode,
        task_queue=temporal.settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=warden_attributes(caller.project_id, "node", node_id, "INIT"),
        static_summary=f"node {body.name}",
        static_details=f"Standalone node `{node_id}` of project `{caller.project_id}`, "
        f"profile `{profile.name}`",
    )
    return await temporal.call(
        client.execute_update_with_start_workflow(
            NodeOperations.create.name,
            ClusterOperationRequest(action_id=action_id),
            start_workflow_operation=start,
            id=action_id,
            result_type=NodeOperations.create.answer,
            rpc_timeout=temporal.rpc_timeout,
        ),
        subject=f"Node {body.name}",
    )


async def find_node(db: Database, caller: Caller, node_id: str) -> NodeRecord:
    """The caller's node by id, unique name or short id (404 otherwise)."""
    record: NodeRecord | None = await db.run(get_node, caller.project_id, node_id)
    if record is None:
        raise NotFound(f"The node '{node_id}' could not be found.")
    return record


def is_standalone(node: NodeRecord) -> bool:
    """Whether the node belongs to no cluster (its own entity workflow owns it)."""
    return node.cluster_id == NO_CLUSTER


async def send_node_update(
    temporal: TemporalGateway,
    node: NodeRecord,
    operation: Operation[StandaloneNode, RequestT, OperationAccepted],
    request: RequestT,
) -> OperationAccepted:
    """Send one of `NodeOperations` to a standalone node's workflow."""
    return await temporal.update(ids.node(node.id), operation, request, subject=f"Node {node.name}")


async def with_details(temporal: TemporalGateway, nodes: list[NodePublic]) -> list[NodePublic]:
    """The nodes with Senlin's `details` of their servers, read by the worker in one
    short workflow; a node without a server (or of a stack) shows `{}`."""
    servers = [n.physical_id for n in nodes if n.physical_id and STACK_NAME_KEY not in n.data]
    if not servers:
        return nodes
    found = await temporal.server_details(servers)
    return [
        n.model_copy(update={"details": found.get(n.physical_id, {})}) if n.physical_id else n
        for n in nodes
    ]
