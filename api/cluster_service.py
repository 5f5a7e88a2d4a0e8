"""Commands on cluster entity workflows (routes stay thin by calling these)."""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from api.auth import Caller
from api.deps import Database
from api.schemas.clusters import ClusterBody, ClusterUpdateBody, PolicyAttachBody, PolicyDetachBody
from api.temporal import TemporalGateway
from domain.cluster.policies.health import HealthPolicyProperties
from domain.cluster.policies.specs import ParsedPolicy, ensure_profile_supports, parse_policy_spec
from domain.cluster.requests import (
    ClusterOperationRequest,
    OperationAccepted,
    PolicyAttachRequest,
    PolicyDetachRequest,
)
from domain.cluster.scaling import validate_capacity
from domain.cluster.state import AttachedPolicy, ClusterSpec, ClusterState
from domain.errors import InvalidRequest, NotFound
from store.clusters import ClusterRecord, get_cluster
from store.policies import PolicyRecord, get_policy
from store.profiles import ProfileRecord, get_profile
from workflows import ids
from workflows.cluster.messages import CLUSTER_WORKFLOW, ClusterInput, ClusterOperations
from workflows.operation import ActionRequest, Operation
from workflows.search_attributes import warden_attributes

RequestT = TypeVar("RequestT", bound=ActionRequest)


async def create_cluster(
    db: Database, temporal: TemporalGateway, caller: Caller, body: ClusterBody
) -> tuple[str, OperationAccepted]:
    """Start the cluster's entity workflow with its `create` update; returns ids."""
    validate_capacity(body.desired_capacity, body.min_size, body.max_size)
    profile: ProfileRecord | None = await db.run(get_profile, caller.project_id, body.profile_id)
    if profile is None:
        raise InvalidRequest(f"The specified profile '{body.profile_id}' could not be found.")
    cluster_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
    spec = ClusterSpec(
        cluster_id=cluster_id,
        project_id=caller.project_id,
        name=body.name,
        profile_id=profile.id,
        desired_capacity=body.desired_capacity,
        min_size=body.min_size,
        max_size=body.max_size,
        metadata=body.metadata,
    )
    client = await temporal.client()
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        CLUSTER_WORKFLOW,
        ClusterInput(
            state=ClusterState(spec=spec, profile=profile.spec),
            api_url=temporal.settings.api_url,
            server_poll_interval_s=temporal.settings.hook_server_poll_interval_s,
        ),
        id=ids.cluster(cluster_id),
        result_type=ClusterState,
        task_queue=temporal.settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=warden_attributes(caller.project_id, "cluster", cluster_id, "INIT"),
        static_summary=f"cluster {body.name}",
        static_details=f"Cluster `{cluster_id}` of project `{caller.project_id}`, "
        f"profile `{profile.name}`, {body.desired_capacity} node(s) desired",
    )
    accepted = await temporal.call(
        client.execute_update_with_start_workflow(
            ClusterOperations.create.name,
            ClusterOperationRequest(action_id=action_id),
            start_workflow_operation=start,
            id=action_id,
            result_type=ClusterOperations.create.answer,
            rpc_timeout=temporal.rpc_timeout,
        ),
        subject=f"Cluster {body.name}",
    )
    return cluster_id, accepted


async def find_cluster(db: Database, caller: Caller, cluster_id: str) -> ClusterRecord:
    """The caller's cluster by id or unique name (404 otherwise)."""
    record: ClusterRecord | None = await db.run(get_cluster, caller.project_id, cluster_id)
    if record is None:
        raise NotFound(f"The cluster '{cluster_id}' could not be found.")
    return record


async def send_cluster_update(
    temporal: TemporalGateway,
    record: ClusterRecord,
    operation: Operation[ClusterState, RequestT, OperationAccepted],
    request: RequestT,
) -> OperationAccepted:
    """Send one of `ClusterOperations` to the cluster's workflow; rejections become 409/400."""
    return await temporal.update(
        ids.cluster(record.id), operation, request, subject=f"Cluster {record.name}"
    )


def new_action_id() -> str:
    """A fresh action id (also the update id, so client retries dedup)."""
    return str(uuid.uuid4())


async def attach_request(
    db: Database, caller: Caller, cluster: ClusterRecord, body: PolicyAttachBody
) -> PolicyAttachRequest:
    """Resolve the policy and check it suits the cluster's profile (400 otherwise)."""
    policy: PolicyRecord | None = await db.run(get_policy, caller.project_id, body.policy_id)
    if policy is None:
        raise NotFound(f"The policy '{body.policy_id}' could not be found.")
    parsed = parse_stored_policy(policy.spec)
    profile: ProfileRecord | None = await db.run(get_profile, caller.project_id, cluster.profile_id)
    if isinstance(parsed.properties, HealthPolicyProperties):
        ensure_profile_supports(parsed.properties, profile.type if profile else "")
    return PolicyAttachRequest(
        action_id=new_action_id(),
        policy=AttachedPolicy(
            policy_id=policy.id,
            name=policy.name,
            type=policy.type,
            enabled=body.enabled,
            properties=policy.spec.get("properties", {}),
        ),
    )


async def detach_request(
    db: Database, caller: Caller, body: PolicyDetachBody
) -> PolicyDetachRequest:
    """Detach by policy id or name (an id of a since-deleted policy still works)."""
    policy: PolicyRecord | None = await db.run(get_policy, caller.project_id, body.policy_id)
    return PolicyDetachRequest(
        action_id=new_action_id(), policy_id=policy.id if policy else body.policy_id
    )


def parse_stored_policy(spec: dict[str, Any]) -> ParsedPolicy:
    """A stored (already validated) policy spec, parsed again for its type's rules."""
    return parse_policy_spec(spec, min_interval=1)


async def update_request(
    db: Database, caller: Caller, body: ClusterUpdateBody
) -> ClusterOperationRequest:
    """The new profile, resolved and sent with its spec (400 when none or unknown)."""
    if body.profile_id is None:
        raise InvalidRequest("cluster.profile_id: required (Warden updates a cluster's profile)")
    profile: ProfileRecord | None = await db.run(get_profile, caller.project_id, body.profile_id)
    if profile is None:
        raise InvalidRequest(f"The specified profile '{body.profile_id}' could not be found.")
    params = {"profile_id": profile.id, "profile": profile.spec, "profile_name": profile.name}
    return ClusterOperationRequest(action_id=new_action_id(), params=params)
