"""Standalone nodes on the time-skipping server: their own entity (`NodeWorkflow`), a
cluster's `add_nodes` taking them over, and `del_nodes` leaving them standalone.

The store activity is the real one (SQLite in tmp_path); compute activities are fakes
registered under the real names, as in test_cluster_workflow.py.
"""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from domain.cluster.requests import ClusterOperationRequest, OperationAccepted
from domain.cluster.standalone import NodeUpdateRequest, StandaloneNode
from store.actions import ActionRecord
from store.clusters import ClusterRecord, NodeRecord
from tests.support.eventually import eventually
from tests.workflows.support import PROFILE, Harness


async def test_a_standalone_node_is_created_updated_checked_and_deleted(harness: Harness) -> None:
    handle, node_id = await harness.create_node("solo")
    [row] = harness.rows(NodeRecord, id=node_id)
    assert (row.cluster_id, row.status, row.name) == ("", "ACTIVE", "solo")
    assert row.physical_id in harness.cloud.servers
    [created] = harness.rows(ActionRecord, target=node_id)
    assert (created.name, created.status) == ("NODE_CREATE", "SUCCEEDED")

    update = NodeUpdateRequest(name="solo-2", role="db", metadata={"k": 1}, tainted=True)
    done = await harness.update(handle, "update", update)
    assert done.status == "SUCCEEDED"
    [row] = harness.rows(NodeRecord, id=node_id)
    assert (row.name, row.role, row.metadata_) == ("solo-2", "db", {"k": 1})
    assert row.data.get("marked_unhealthy") is True

    checked = await harness.update(handle, "check", ClusterOperationRequest())
    assert (await harness.action_ends(checked.action_id)).status == "SUCCEEDED"

    server = row.physical_id
    deleting = await harness.update(handle, "delete", ClusterOperationRequest())
    assert (await harness.action_ends(deleting.action_id)).status == "SUCCEEDED"
    assert harness.rows(NodeRecord, id=node_id) == []
    assert server not in harness.cloud.servers
    result = await handle.result()
    assert StandaloneNode.model_validate(result).deleted


async def test_an_update_with_nothing_to_change_is_refused(harness: Harness) -> None:
    handle, _ = await harness.create_node()
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(handle, "update", NodeUpdateRequest())
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidRequest"


async def test_add_nodes_takes_a_standalone_node_over(harness: Harness) -> None:
    cluster, cluster_id = await harness.create(desired=1)
    node_handle, node_id = await harness.create_node("solo")
    [before] = harness.rows(NodeRecord, id=node_id)

    added = await harness.update(
        cluster, "add_nodes", ClusterOperationRequest(params={"nodes": [node_id]})
    )
    assert (await harness.action_ends(added.action_id)).status == "SUCCEEDED"

    [row] = harness.rows(NodeRecord, id=node_id)
    assert (row.cluster_id, row.name, row.physical_id) == (cluster_id, "solo", before.physical_id)
    assert row.index == 2  # the next index of the cluster (web-1 holds 1)
    [record] = harness.rows(ClusterRecord, id=cluster_id)
    assert (record.desired_capacity, record.status) == (2, "ACTIVE")
    assert (await node_handle.describe()).status == WorkflowExecutionStatus.COMPLETED

    # The cluster owns it now: deleting the cluster deletes its server.
    deleting = await harness.update(cluster, "delete", ClusterOperationRequest())
    await harness.action_ends(deleting.action_id)
    assert before.physical_id not in harness.cloud.servers


async def test_add_nodes_of_a_node_no_workflow_owns_fails_and_keeps_the_size(
    harness: Harness,
) -> None:
    cluster, cluster_id = await harness.create(desired=1)
    added = await harness.update(
        cluster, "add_nodes", ClusterOperationRequest(params={"nodes": ["no-such-node"]})
    )
    failed = await harness.action_ends(added.action_id)
    assert failed.status == "FAILED"
    assert "no-such-node is not an orphan node" in failed.status_reason
    [record] = harness.rows(ClusterRecord, id=cluster_id)
    assert record.desired_capacity == 1
    assert len(harness.rows(NodeRecord, cluster_id=cluster_id)) == 1


async def test_add_nodes_beyond_max_size_is_refused_before_anything_runs(
    harness: Harness,
) -> None:
    cluster, _ = await harness.create(desired=1, max_size=1)
    _, node_id = await harness.create_node()
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(
            cluster, "add_nodes", ClusterOperationRequest(params={"nodes": [node_id]})
        )
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.message == "The target capacity (2) is greater than the cluster's max_size (1)."


async def test_del_nodes_without_a_deletion_policy_leaves_the_node_standalone(
    harness: Harness,
) -> None:
    """Senlin's default (`destroy_after_deletion` false): the node leaves the cluster,
    keeps its server and lives on as a standalone node with an entity of its own."""
    cluster, cluster_id = await harness.create(desired=2)
    victim = sorted(harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.index)[0]
    removed = await harness.update(
        cluster, "del_nodes", ClusterOperationRequest(params={"nodes": [victim.id]})
    )
    assert (await harness.action_ends(removed.action_id)).status == "SUCCEEDED"
    [row] = harness.rows(NodeRecord, id=victim.id)
    assert (row.cluster_id, row.status) == ("", "ACTIVE")
    assert row.physical_id in harness.cloud.servers
    [record] = harness.rows(ClusterRecord, id=cluster_id)
    assert record.desired_capacity == 1

    # Its own entity runs it now: a delete there removes the server.
    node = harness.env.client.get_workflow_handle(f"node:{victim.id}")
    harness.started.append(node.id)
    deleting = await eventually(
        lambda: _try_delete(node), what="the standalone node's entity answers"
    )
    assert (await harness.action_ends(deleting.action_id)).status == "SUCCEEDED"
    assert victim.physical_id not in harness.cloud.servers


async def test_del_nodes_with_destroy_after_deletion_deletes_the_server(harness: Harness) -> None:
    cluster, cluster_id = await harness.create(desired=2)
    victim = harness.rows(NodeRecord, cluster_id=cluster_id)[0]
    params = {"nodes": [victim.id], "destroy_after_deletion": True}
    removed = await harness.update(cluster, "del_nodes", ClusterOperationRequest(params=params))
    assert (await harness.action_ends(removed.action_id)).status == "SUCCEEDED"
    assert harness.rows(NodeRecord, id=victim.id) == []
    assert victim.physical_id not in harness.cloud.servers


async def _try_delete(handle: object) -> OperationAccepted | None:
    try:
        answer: OperationAccepted = await handle.execute_update(  # type: ignore[attr-defined]
            "delete", ClusterOperationRequest(), result_type=OperationAccepted
        )
    except Exception:
        return None
    return answer


async def test_replace_nodes_swaps_a_member_for_a_standalone_node(harness: Harness) -> None:
    """Senlin's NODE_JOIN then NODE_LEAVE: the replacement joins, the replaced member
    leaves with its server and lives on standalone; the size does not change."""
    cluster, cluster_id = await harness.create(desired=2)
    old = sorted(harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.index)[0]
    _, new_id = await harness.create_node("spare")
    replaced = await harness.update(
        cluster, "replace_nodes", ClusterOperationRequest(params={"nodes": {old.id: new_id}})
    )
    assert (await harness.action_ends(replaced.action_id)).status == "SUCCEEDED"
    [joined] = harness.rows(NodeRecord, id=new_id)
    [left] = harness.rows(NodeRecord, id=old.id)
    assert (joined.cluster_id, joined.index) == (cluster_id, 3)
    assert (left.cluster_id, left.physical_id) == ("", old.physical_id)
    assert old.physical_id in harness.cloud.servers
    [record] = harness.rows(ClusterRecord, id=cluster_id)
    assert (record.desired_capacity, record.status) == (2, "ACTIVE")
    harness.started.append(f"node:{old.id}")


async def test_replace_nodes_naming_a_stranger_is_refused(harness: Harness) -> None:
    cluster, cluster_id = await harness.create(desired=1)
    _, new_id = await harness.create_node("spare")
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(
            cluster, "replace_nodes", ClusterOperationRequest(params={"nodes": {"x": new_id}})
        )
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.message == (
        f"The specified nodes ['x'] to be replaced are not members of the cluster {cluster_id}."
    )


async def test_a_node_operation_reboots_the_standalone_nodes_server(harness: Harness) -> None:
    handle, node_id = await harness.create_node()
    params = {"operation": "reboot", "params": {"type": "HARD"}, "nodes": [node_id]}
    rebooted = await harness.update(handle, "operation", ClusterOperationRequest(params=params))
    done = await harness.action_ends(rebooted.action_id)
    assert (done.name, done.status) == ("NODE_OPERATION", "SUCCEEDED")
    [row] = harness.rows(NodeRecord, id=node_id)
    assert (row.status, row.status_reason) == ("ACTIVE", "Operation 'reboot' succeeded")


async def test_a_new_profile_recreates_the_standalone_nodes_server(harness: Harness) -> None:
    handle, node_id = await harness.create_node()
    [before] = harness.rows(NodeRecord, id=node_id)
    bigger: dict[str, object] = {
        **PROFILE,
        "properties": {"image": "cirros", "flavor": "m1.small"},
    }
    params = {"profile_id": "prof-2", "profile": bigger}
    updated = await harness.update(handle, "update_profile", ClusterOperationRequest(params=params))
    done = await harness.action_ends(updated.action_id)
    assert (done.name, done.status) == ("NODE_UPDATE", "SUCCEEDED")
    [after] = harness.rows(NodeRecord, id=node_id)
    assert (after.profile_id, after.status) == ("prof-2", "ACTIVE")
    assert after.physical_id != before.physical_id
    assert before.physical_id not in harness.cloud.servers
    state = StandaloneNode.model_validate(await handle.query("describe"))
    assert state.profile["properties"]["flavor"] == "m1.small"


async def test_a_profile_of_another_type_is_refused(harness: Harness) -> None:
    handle, _ = await harness.create_node()
    params = {"profile_id": "p", "profile": {"type": "os.heat.stack", "version": "1.0"}}
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await harness.update(handle, "update_profile", ClusterOperationRequest(params=params))
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.message == "Cannot update a node to a different profile type, operation aborted."
