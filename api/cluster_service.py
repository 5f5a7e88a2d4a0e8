"""Commands on cluster entity workflows (routes stay thin by calling these)."""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from api.auth import Caller
from api.deps import Database
from api.schemas.clusters import (
    ClusterBody,
    ClusterUpdateBody,
    PolicyAttachBody,
    PolicyDetachBody,
    PolicyUpdateBody,
)
from api.temporal import TemporalGateway
from domain.cluster.nodes import NodeStatus
from domain.cluster.policies.health import HealthPolicyProperties
from domain.cluster.policies.loadbalance import LoadBalancePolicyProperties
from domain.cluster.policies.specs import ParsedPolicy, ensure_profile_supports, parse_policy_spec
from domain.cluster.requests import (
    ClusterOperationRequest,
    OperationAccepted,
    PolicyAttachRequest,
    PolicyDetachRequest,
    PolicyUpdateRequest,
)
from domain.cluster.scaling import validate_capacity, validate_new_cluster_size
from domain.cluster.state import AttachedPolicy, ClusterSpec, ClusterState
from domain.errors import ActionInProgress, InvalidRequest, MultipleChoices, NotFound
from store.clusters import ClusterRecord, NodeRecord, get_cluster, get_node
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
    validate_new_cluster_size(body.desired_capacity, body.min_size, body.max_size)
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
        config=body.config or {},
        timeout=body.timeout,
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
    """Send one of `ClusterOperations` to the cluster's workflow; rejections become 409/400.

    A cluster busy with another action refuses in Senlin's words (its `ResourceIsLocked`);
    which action holds it is in `GET /v1/actions?status=RUNNING`.
    """
    try:
        return await temporal.update(
            ids.cluster(record.id), operation, request, subject=f"Cluster {record.name}"
        )
    except ActionInProgress as err:
        raise ActionInProgress(
            f"{operation.action} for cluster '{record.id}' cannot be completed because it is "
            "already locked."
        ) from err


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
    if isinstance(parsed.properties, HealthPolicyProperties | LoadBalancePolicyProperties):
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
    """Detach by policy id or name (Senlin's 400 when no such policy exists)."""
    policy: PolicyRecord | None = await db.run(get_policy, caller.project_id, body.policy_id)
    if policy is None:
        raise InvalidRequest(f"The specified policy '{body.policy_id}' could not be found.")
    return PolicyDetachRequest(action_id=new_action_id(), policy_id=policy.id)


async def policy_update_request(
    db: Database, caller: Caller, body: PolicyUpdateBody
) -> PolicyUpdateRequest:
    """Update a binding by policy id or name (400 when no such policy exists)."""
    policy: PolicyRecord | None = await db.run(get_policy, caller.project_id, body.policy_id)
    if policy is None:
        raise InvalidRequest(f"The specified policy '{body.policy_id}' could not be found.")
    return PolicyUpdateRequest(action_id=new_action_id(), policy_id=policy.id, enabled=body.enabled)


def parse_stored_policy(spec: dict[str, Any]) -> ParsedPolicy:
    """A stored (already validated) policy spec, parsed again for its type's rules."""
    return parse_policy_spec(spec, min_interval=1)


async def update_request(
    db: Database, caller: Caller, cluster: ClusterRecord, body: ClusterUpdateBody
) -> ClusterOperationRequest:
    """The new profile, resolved and sent with its spec; Senlin's 400 when it is unknown
    or of another type (checked here, before any other property of the update changes)."""
    if body.profile_id is None:
        raise InvalidRequest("cluster.profile_id: required")
    profile: ProfileRecord | None = await db.run(get_profile, caller.project_id, body.profile_id)
    if profile is None:
        raise InvalidRequest(f"The specified profile '{body.profile_id}' could not be found.")
    current = await db.run(get_profile, caller.project_id, cluster.profile_id)
    if current is not None and versioned_type(current) != versioned_type(profile):
        raise InvalidRequest(
            "Cannot update a cluster to a different profile type, operation aborted."
        )
    params = {
        "profile_id": profile.id,
        "profile": profile.spec,
        "profile_name": profile.name,
        "profile_only": bool(body.profile_only),
    }
    return ClusterOperationRequest(action_id=new_action_id(), params=params)


async def _node_or_none(db: Database, caller: Caller, key: str) -> NodeRecord | None:
    """The node a key names; None when none or several do (Senlin's "not found")."""
    try:
        found: NodeRecord | None = await db.run(get_node, caller.project_id, key)
    except MultipleChoices:
        return None
    return found


async def _nodes_by_key(
    db: Database, caller: Caller, keys: list[str]
) -> tuple[list[NodeRecord], list[str]]:
    """The nodes the keys (ids, names, short ids) name, and the keys naming none."""
    found: list[NodeRecord] = []
    missing: list[str] = []
    for key in keys:
        node = await _node_or_none(db, caller, key)
        if node is None:
            missing.append(key)
        else:
            found.append(node)
    return found, missing


def _problems(*found: tuple[str, list[str]]) -> None:
    """Senlin's 400 naming every group of nodes with a problem, one line each."""
    lines = [text.format(ids) for text, ids in found if ids]
    if lines:
        raise InvalidRequest("\n".join(lines))


async def add_nodes_request(
    db: Database, caller: Caller, cluster: ClusterRecord, keys: list[str]
) -> list[str]:
    """Ids of the standalone nodes `add_nodes` may take, or Senlin's 400 naming those it
    may not (another profile type, owned by a cluster, not ACTIVE, not found)."""
    found, missing = await _nodes_by_key(db, caller, keys)
    wanted = type_of(await db.run(get_profile, caller.project_id, cluster.profile_id))
    unmatched = [
        n.id
        for n in found
        if type_of(await db.run(get_profile, caller.project_id, n.profile_id)) != wanted
    ]
    _problems(
        ("Profile type of nodes {} does not match that of the cluster.", unmatched),
        ("Nodes {} already owned by some cluster.", [n.id for n in found if n.cluster_id]),
        ("Nodes are not ACTIVE: {}.", [n.id for n in found if n.status != NodeStatus.ACTIVE]),
        ("Nodes not found: {}.", missing),
    )
    return [n.id for n in found]


async def del_nodes_request(
    db: Database, caller: Caller, cluster: ClusterRecord, keys: list[str]
) -> list[str]:
    """Ids of the members `del_nodes` removes, or Senlin's 400 (not found, not members,
    the cluster would fall below its min_size)."""
    found, missing = await _nodes_by_key(db, caller, keys)
    _problems(
        ("Nodes not found: {}.", missing),
        (
            "Nodes not members of specified cluster: {}.",
            [n.id for n in found if n.cluster_id != cluster.id],
        ),
    )
    validate_capacity(cluster.desired_capacity - len(found), cluster.min_size, cluster.max_size)
    return [n.id for n in found]


async def replace_nodes_request(
    db: Database, caller: Caller, cluster: ClusterRecord, pairs: dict[str, str]
) -> dict[str, str]:
    """Member id → standalone node id for `replace_nodes`, or Senlin's 400 naming every
    problem (`_validate_replace_nodes`)."""
    wanted = type_of(await db.run(get_profile, caller.project_id, cluster.profile_id))
    found: dict[str, str] = {}
    old_missing: list[str] = []
    new_missing: list[str] = []
    strangers: list[str] = []
    owned: list[str] = []
    inactive: list[str] = []
    unmatched: list[str] = []
    for old_key, new_key in pairs.items():
        old = await _node_or_none(db, caller, old_key)
        if old is None:
            old_missing.append(old_key)
            continue
        new = await _node_or_none(db, caller, new_key)
        if new is None:
            new_missing.append(new_key)
            continue
        if old.cluster_id != cluster.id:
            strangers.append(old_key)
        if new.cluster_id:
            owned.append(new_key)
        if new.status != NodeStatus.ACTIVE:
            inactive.append(new_key)
        if type_of(await db.run(get_profile, caller.project_id, new.profile_id)) != wanted:
            unmatched.append(new_key)
        found[old.id] = new.id
    _problems(
        (
            "The specified nodes {} to be replaced are not members of the cluster "
            + f"{cluster.id}.",
            strangers,
        ),
        ("Nodes {} already member of a cluster.", owned),
        ("Nodes are not ACTIVE: {}.", inactive),
        ("Profile type of nodes {} do not match that of the cluster.", unmatched),
        ("Original nodes not found: {}.", old_missing),
        ("Replacement nodes not found: {}.", new_missing),
    )
    return found


def type_of(profile: ProfileRecord | None) -> str:
    """`os.nova.server` of a profile (its type without the version)."""
    return profile.type if profile else ""


def versioned_type(profile: ProfileRecord | None) -> str:
    """`os.nova.server-1.0` of a profile, as Senlin names a profile type."""
    return f"{profile.type}-{profile.version}" if profile else ""
