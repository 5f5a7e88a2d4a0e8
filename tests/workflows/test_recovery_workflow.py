"""Recovery on the time-skipping server: ordered steps, verification, fencing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from domain.cluster.requests import (
    ClusterOperationRequest,
    LockClusterRequest,
    MarkNodeRequest,
    PolicyAttachRequest,
    PolicyDetachRequest,
)
from domain.cluster.state import AttachedPolicy
from store.clusters import NodeRecord
from store.events import EventRecord
from tests.workflows.support import Harness


def health_policy(actions: list[dict[str, Any]], **recovery: Any) -> PolicyAttachRequest:
    return PolicyAttachRequest(
        policy=AttachedPolicy(
            policy_id=str(uuid.uuid4()),
            name="heal",
            type="senlin.policy.health",
            properties={
                "detection": {
                    "interval": 60,
                    "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
                },
                "recovery": {"actions": actions, "fencing": ["COMPUTE"], **recovery},
            },
        )
    )


async def break_node(harness: Harness, cluster_id: str, status: str = "ERROR") -> NodeRecord:
    node: NodeRecord = sorted(
        harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.name
    )[0]
    harness.cloud._set(node.physical_id or "", status)
    return node


async def recover(harness: Harness, handle: Any, **params: Any) -> str:
    accepted = await harness.update(handle, "recover", ClusterOperationRequest(params=params))
    return accepted.action_id


async def test_manual_reboot_recovers_a_node_and_logs_each_step(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=2)
    node = await break_node(harness, cluster_id, "SHUTOFF")
    action = await harness.action_ends(
        await recover(harness, handle, operation="reboot", nodes=[node.id])
    )
    assert action.status == "SUCCEEDED", action.status_reason
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ACTIVE" and after.physical_id == node.physical_id
    steps = [e.action for e in harness.rows(EventRecord, obj_id=node.id)]
    assert steps[-2:] == ["NODE_RECOVER", "RECOVER_REBOOT"]


async def test_policy_list_falls_through_to_recreate_with_fencing_first(harness: Harness) -> None:
    harness.cloud.cures = set()  # reboot and rebuild do not help here
    handle, cluster_id = await harness.create(desired=2)
    await harness.update(
        handle,
        "policy_attach",
        health_policy(
            [
                {"name": "REBOOT", "params": {"type": "hard"}},
                {"name": "REBUILD"},
                {"name": "RECREATE"},
            ]
        ),
    )
    node = await break_node(harness, cluster_id)
    action = await harness.action_ends(await recover(harness, handle, nodes=[node.name]))
    assert action.status == "SUCCEEDED", action.status_reason
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ACTIVE" and after.physical_id != node.physical_id
    assert node.physical_id not in harness.cloud.servers
    kinds = [kind for kind, pid in harness.cloud.calls if pid == node.physical_id]
    assert kinds == ["reboot", "rebuild", "fence"]
    reasons = [e.status_reason for e in harness.rows(EventRecord, obj_id=node.id)]
    assert any("Step 1 REBOOT failed" in r for r in reasons)
    assert any("Step 3 RECREATE: healthy again" in r for r in reasons)


async def test_status_hint_tries_start_before_the_list(harness: Harness) -> None:
    handle, cluster_id = await harness.create(desired=1)
    await harness.update(handle, "policy_attach", health_policy([{"name": "RECREATE"}]))
    node = await break_node(harness, cluster_id, "SHUTOFF")
    action = await harness.action_ends(
        await recover(harness, handle, nodes=[node.id], hints={node.id: "SHUTOFF"})
    )
    assert action.status == "SUCCEEDED"
    assert [kind for kind, _ in harness.cloud.calls] == ["start"]
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.physical_id == node.physical_id  # the cheap fix worked: no recreate


async def test_when_every_step_fails_the_node_is_error_with_reasons(harness: Harness) -> None:
    harness.cloud.cures = set()
    handle, cluster_id = await harness.create(desired=1)
    node = await break_node(harness, cluster_id)
    action = await harness.action_ends(
        await recover(
            harness, handle, operation="REBOOT", operation_params={"type": "SOFT"}, nodes=[node.id]
        )
    )
    assert action.status == "FAILED"
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ERROR"
    assert after.status_reason.startswith("All recovery actions failed: REBOOT:")


async def test_recover_is_refused_when_locked_and_bad_operations_are_400(
    harness: Harness,
) -> None:
    handle, _ = await harness.create(desired=1)
    for params, kind in (
        ({"operation": "EXPLODE"}, "InvalidRequest"),
        ({"operation": "REBOOT", "operation_params": {"type": "GENTLE"}}, "InvalidRequest"),
        ({"operation_params": {"type": "HARD"}}, "InvalidRequest"),
        ({"colour": "red"}, "InvalidRequest"),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as failed:
            await harness.update(handle, "recover", ClusterOperationRequest(params=params))
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError) and cause.type == kind, params
    await harness.update(handle, "lock", LockClusterRequest(reason="upgrade"))
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(handle, "recover", ClusterOperationRequest())
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "Conflict"


async def test_user_temporal_workflow_step_gets_expanded_params(harness: Harness) -> None:
    harness.cloud.cures = set()
    handle, cluster_id = await harness.create(desired=1)
    await harness.update(
        handle,
        "policy_attach",
        health_policy(
            [
                {"name": "REBOOT"},
                {
                    "name": "FixServerWorkflow",
                    "type": "TEMPORAL_WORKFLOW",
                    "params": {"server": "{{ node.physical_id }}"},
                },
            ]
        ),
    )
    node = await break_node(harness, cluster_id)
    action = await harness.action_ends(await recover(harness, handle, nodes=[node.id]))
    assert action.status == "SUCCEEDED", action.status_reason
    assert ("user_fix", node.physical_id) in harness.cloud.calls
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ACTIVE" and after.physical_id == node.physical_id


async def test_server_that_cannot_be_deleted_is_powered_off_before_the_replacement(
    harness: Harness,
) -> None:
    harness.cloud.fence_fails = {"delete"}
    handle, cluster_id = await harness.create(desired=1)
    await harness.update(handle, "policy_attach", health_policy([{"name": "RECREATE"}]))
    node = await break_node(harness, cluster_id)
    action = await harness.action_ends(await recover(harness, handle, nodes=[node.id]))
    assert action.status == "SUCCEEDED", action.status_reason
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.physical_id != node.physical_id
    kinds = [kind for kind, pid in harness.cloud.calls if pid == node.physical_id]
    assert kinds == ["fence", "fence_power_off"]
    # Powered off first, deleted once the replacement ran: no orphan is left.
    assert node.physical_id not in harness.cloud.servers
    fence = [e for e in harness.rows(EventRecord, obj_id=node.id) if e.action == "FENCE"]
    assert len(fence) == 1 and "powered off" in fence[0].status_reason


async def test_unconfirmed_fence_fails_recreate_unless_forced(harness: Harness) -> None:
    harness.cloud.fence_fails = {"delete", "power_off"}
    handle, cluster_id = await harness.create(desired=2)
    unforced = health_policy([{"name": "RECREATE"}])
    await harness.update(handle, "policy_attach", unforced)
    first = await break_node(harness, cluster_id)
    creates = harness.cloud.creates
    action = await harness.action_ends(await recover(harness, handle, nodes=[first.id]))
    assert action.status == "FAILED"
    [after] = harness.rows(NodeRecord, id=first.id)
    assert after.status == "ERROR" and "Fencing server" in after.status_reason
    assert harness.cloud.creates == creates  # nothing was created beside a live server

    detach = PolicyDetachRequest(policy_id=unforced.policy.policy_id)
    await harness.update(handle, "policy_detach", detach)
    await harness.update(
        handle, "policy_attach", health_policy([{"name": "RECREATE"}], node_force_recreate=True)
    )
    action = await harness.action_ends(await recover(harness, handle, nodes=[first.id]))
    assert action.status == "SUCCEEDED", action.status_reason
    [forced] = harness.rows(NodeRecord, id=first.id)
    assert forced.status == "ACTIVE" and forced.physical_id != first.physical_id
    reasons = [e.status_reason for e in harness.rows(EventRecord, obj_id=first.id)]
    assert any("node_force_recreate" in r for r in reasons)


async def test_check_first_recovers_only_nodes_the_cloud_or_a_mark_calls_unhealthy(
    harness: Harness,
) -> None:
    """Senlin's `recover {check: true}`: every node's server is looked at first. A server
    that failed behind the cluster's back is found and recovered, a marked node is
    recovered though its server looks fine, and a healthy node is left alone."""
    handle, cluster_id = await harness.create(desired=3)
    failed, marked, fine = sorted(
        harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.name
    )
    harness.cloud._set(failed.physical_id or "", "ERROR")
    await harness.update(
        handle,
        "mark_unhealthy",
        MarkNodeRequest(node_id=marked.id, mark_unhealthy=True, status_reason="app wedged"),
    )
    [before] = harness.rows(NodeRecord, id=failed.id)
    assert before.status == "ACTIVE"  # the cluster has not seen the failure yet

    action = await harness.action_ends(
        await recover(harness, handle, operation="REBOOT", check=True)
    )

    assert action.status == "SUCCEEDED", action.status_reason
    rebooted = {pid for kind, pid in harness.cloud.calls if kind == "reboot"}
    assert rebooted == {failed.physical_id, marked.physical_id}
    after = {n.id: n for n in harness.rows(NodeRecord, cluster_id=cluster_id)}
    assert [after[n.id].status for n in (failed, marked, fine)] == ["ACTIVE"] * 3
    checks = [e for e in harness.rows(EventRecord, obj_id=failed.id) if e.action == "NODE_CHECK"]
    assert [e.status_reason for e in checks] == ["Server status is ERROR"]
    assert {e.action for e in harness.rows(EventRecord, obj_id=fine.id)} == {"NODE_CREATE"}


async def test_a_recover_that_heals_a_marked_node_clears_the_mark(harness: Harness) -> None:
    """The mark goes with the failure it reported: it stayed after a successful recover,
    so every later check-first recover (and a health policy, at every interval) rebooted
    the healthy server again, and the node could never leave the recovery loop."""
    handle, cluster_id = await harness.create(desired=2)
    node, _healthy = sorted(harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.name)
    await harness.update(
        handle,
        "mark_unhealthy",
        MarkNodeRequest(node_id=node.id, mark_unhealthy=True, status_reason="app wedged"),
    )

    healed = await harness.action_ends(
        await recover(harness, handle, operation="REBOOT", nodes=[node.id])
    )
    assert healed.status == "SUCCEEDED", healed.status_reason
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ACTIVE" and "marked_unhealthy" not in after.data, after.data

    again = await harness.action_ends(
        await recover(harness, handle, operation="REBOOT", check=True)
    )
    assert again.status == "SUCCEEDED", again.status_reason
    rebooted = [pid for kind, pid in harness.cloud.calls if kind == "reboot"]
    assert rebooted == [node.physical_id]


async def test_without_check_a_failure_the_cluster_has_not_seen_is_not_recovered(
    harness: Harness,
) -> None:
    handle, cluster_id = await harness.create(desired=2)
    node = await break_node(harness, cluster_id)
    action = await harness.action_ends(await recover(harness, handle, operation="REBOOT"))
    assert action.status == "SUCCEEDED"
    assert harness.cloud.calls == []
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ACTIVE"  # still its last known status


async def test_check_capacity_is_refused_with_what_to_do_instead(harness: Harness) -> None:
    handle, _ = await harness.create(desired=1)
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(
            handle, "recover", ClusterOperationRequest(params={"check_capacity": True})
        )
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidRequest"
    assert "resize it to that capacity" in str(cause)


async def test_recreate_keeps_the_replacement_when_the_old_server_cannot_be_deleted(
    harness: Harness,
) -> None:
    handle, cluster_id = await harness.create(desired=1)
    await harness.update(handle, "policy_attach", health_policy([{"name": "RECREATE"}], fencing=[]))
    node = await break_node(harness, cluster_id)
    harness.cloud.undeletable = {node.physical_id or ""}

    action = await harness.action_ends(await recover(harness, handle, nodes=[node.id]))

    assert action.status == "SUCCEEDED", action.status_reason
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ACTIVE" and after.physical_id not in (None, node.physical_id)
    # Both servers are known: the node's new one, and the old one the cloud kept.
    assert set(harness.cloud.servers) == {after.physical_id, node.physical_id}
    reasons = [e.status_reason for e in harness.rows(EventRecord, obj_id=node.id)]
    assert any(f"Old server {node.physical_id} could not be deleted" in r for r in reasons)

    # A second recovery replaces the new server, not the old one again.
    harness.cloud._set(after.physical_id or "", "ERROR")
    action = await harness.action_ends(await recover(harness, handle, nodes=[node.id]))
    assert action.status == "SUCCEEDED", action.status_reason
    [again] = harness.rows(NodeRecord, id=node.id)
    assert set(harness.cloud.servers) == {again.physical_id, node.physical_id}


async def test_a_replacement_that_never_becomes_active_is_still_the_nodes(
    harness: Harness,
) -> None:
    handle, cluster_id = await harness.create(desired=1)
    await harness.update(handle, "policy_attach", health_policy([{"name": "RECREATE"}]))
    node = await break_node(harness, cluster_id)
    harness.cloud.fail_names = {node.name}  # the new server goes to ERROR

    action = await harness.action_ends(await recover(harness, handle, nodes=[node.id]))

    assert action.status == "FAILED"
    [after] = harness.rows(NodeRecord, id=node.id)
    assert after.status == "ERROR" and "went to ERROR" in after.status_reason
    # The fenced old server is gone and the node names the one server that exists.
    assert list(harness.cloud.servers) == [after.physical_id]
    assert after.physical_id != node.physical_id
