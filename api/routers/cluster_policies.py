"""`/v1/clusters/{cluster_id}/policies`: which policies a cluster has attached."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from api.auth import CallerDep
from api.cluster_service import find_cluster
from api.deps import DbDep
from api.paths import ClusterId, ClusterInPath
from api.schemas.cluster_policies import (
    ClusterPolicyEnvelope,
    ClusterPolicyList,
    ClusterPolicyPublic,
)
from api.schemas.common import ERROR_RESPONSES
from api.senlin_lists import ClusterPoliciesQuery, ListQuery, filter_and_page
from domain.errors import NotFound
from store.policies import PolicyRecord, get_policy

router = APIRouter(tags=["clusters"], responses=ERROR_RESPONSES)
NameQuery = Annotated[str | None, Query(max_length=255)]


@router.get("/clusters/{cluster_id}/policies", response_model=ClusterPolicyList)
async def list_cluster_policies_route(
    query: ClusterPoliciesQuery,
    cluster: ClusterInPath,
    policy_name: NameQuery = None,
    policy_type: NameQuery = None,
    enabled: bool | None = None,
) -> ClusterPolicyList:
    """The cluster's policy bindings, filtered and sorted as Senlin does."""
    record = await cluster.load()
    bindings = [
        b
        for b in ClusterPolicyPublic.bindings(record)
        if policy_name in (None, b.policy_name)
        and policy_type in (None, b.policy_type)
        and enabled in (None, b.enabled)
    ]
    return ClusterPolicyList(cluster_policies=filter_and_page(bindings, ListQuery(sort=query.sort)))


@router.get("/clusters/{cluster_id}/policies/{policy_id}", response_model=ClusterPolicyEnvelope)
async def get_cluster_policy_route(
    caller: CallerDep,
    db: DbDep,
    cluster_id: ClusterId,
    policy_id: Annotated[str, Path(max_length=255)],
) -> ClusterPolicyEnvelope:
    """One binding; the policy by id, unique name or short id (404 when not attached)."""
    cluster = await find_cluster(db, caller, cluster_id)
    policy: PolicyRecord | None = await db.run(get_policy, caller.project_id, policy_id)
    if policy is None:
        raise NotFound(f"The policy '{policy_id}' could not be found.")
    for binding in ClusterPolicyPublic.bindings(cluster):
        if binding.policy_id == policy.id:
            return ClusterPolicyEnvelope(cluster_policy=binding)
    raise NotFound(
        f"The policy '{policy_id}' is not found attached to the specified cluster '{cluster_id}'."
    )
