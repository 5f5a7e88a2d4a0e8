"""A scaling policy on the time-skipping server: its count, its refusal as a FAILED
action, and its cooldown (a 409 until an hour of workflow time has passed)."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from domain.cluster.requests import ClusterOperationRequest, PolicyAttachRequest
from domain.cluster.state import AttachedPolicy
from store.clusters import ClusterRecord, NodeRecord
from tests.workflows.support import Harness

HOUR = 3600


def scaling_policy(event: str, **adjustment: object) -> PolicyAttachRequest:
    return PolicyAttachRequest(
        policy=AttachedPolicy(
            policy_id=str(uuid.uuid4()),
            name="by-two",
            type="senlin.policy.scaling",
            properties={"event": event, "adjustment": adjustment},
        )
    )


async def test_the_policy_sizes_a_scale_and_its_refusal_fails_the_action(
    harness: Harness,
) -> None:
    handle, cluster_id = await harness.create(desired=1, max_size=4)
    policy = scaling_policy("CLUSTER_SCALE_OUT", number=2)
    await harness.update(handle, "policy_attach", policy)
    out = await harness.update(handle, "scale_out", ClusterOperationRequest(params={}))
    assert (await harness.action_ends(out.action_id)).status == "SUCCEEDED"
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 3

    refused = await harness.update(handle, "scale_out", ClusterOperationRequest(params={}))
    action = await harness.action_ends(refused.action_id)
    assert (action.status, action.status_reason) == (
        "FAILED",
        "Policy check failure: Failed policy 'by-two': The target capacity (5) is greater "
        "than the cluster's max_size (4).",
    )
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert (cluster.status, cluster.desired_capacity) == ("ACTIVE", 3)


async def test_a_cooldown_refuses_the_next_scale_until_it_has_passed(own_harness: Harness) -> None:
    harness = own_harness
    handle, cluster_id = await harness.create(desired=1)
    await harness.update(
        handle, "policy_attach", scaling_policy("CLUSTER_SCALE_OUT", number=1, cooldown=HOUR)
    )
    first = await harness.update(handle, "scale_out", ClusterOperationRequest(params={}))
    assert (await harness.action_ends(first.action_id)).status == "SUCCEEDED"
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(handle, "scale_out", ClusterOperationRequest(params={}))
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "Conflict"
    assert "cooldown still in progress" in cause.message
    # a scale-in has no policy of its own: no cooldown
    scaled_in = await harness.update(handle, "scale_in", ClusterOperationRequest(params={}))
    assert (await harness.action_ends(scaled_in.action_id)).status == "SUCCEEDED"

    await harness.env.sleep(HOUR + 1)
    again = await harness.update(handle, "scale_out", ClusterOperationRequest(params={}))
    assert (await harness.action_ends(again.action_id)).status == "SUCCEEDED"
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 2


async def test_best_effort_at_the_limit_succeeds_without_a_change(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=2, max_size=2)
    policy = scaling_policy("CLUSTER_SCALE_OUT", number=1, best_effort=True)
    await harness.update(handle, "policy_attach", policy)
    out = await harness.update(handle, "scale_out", ClusterOperationRequest(params={}))
    assert (await harness.action_ends(out.action_id)).status == "SUCCEEDED"
    [cluster] = harness.rows(ClusterRecord, id=cluster_id)
    assert (cluster.status, cluster.desired_capacity) == ("ACTIVE", 2)
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 2
