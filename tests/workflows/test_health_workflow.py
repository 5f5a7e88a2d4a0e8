"""The health manager on its own time-skipping server: detection rounds, safety, pauses."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from domain.cluster.health import HealthView, ProbeState, ProbeTarget
from domain.cluster.requests import ClusterOperationRequest, LockClusterRequest, PolicyAttachRequest
from domain.cluster.state import AttachedPolicy
from store.clusters import ClusterRecord, NodeRecord
from store.events import EventRecord
from tests.support.eventually import eventually
from tests.workflows.support import Harness
from workflows.health.manager import HealthManagerInput
from workflows.health.messages import HealthSummary, LifecycleEvent


def policy(**recovery: Any) -> PolicyAttachRequest:
    return PolicyAttachRequest(
        policy=AttachedPolicy(
            policy_id=str(uuid.uuid4()),
            name="heal",
            type="senlin.policy.health",
            properties={
                "detection": {
                    "interval": 60,
                    "node_update_timeout": 0,
                    "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
                },
                "recovery": {"actions": [{"name": "REBOOT"}], **recovery},
            },
        )
    )


async def watched(harness: Harness, size: int, **recovery: Any) -> tuple[Any, str]:
    handle, cluster_id = await harness.create(desired=size)
    await harness.update(handle, "policy_attach", policy(**recovery))
    harness.started.append(f"health:{cluster_id}")
    return handle, cluster_id


async def event_watched(harness: Harness, *, interval: int) -> tuple[Any, Any, NodeRecord]:
    """A 2-node cluster watched by LIFECYCLE_EVENTS: its handle, its manager, a node."""
    handle, cluster_id = await harness.create(desired=2)
    attach = policy()
    props = {
        **attach.policy.properties,
        "detection": {
            "interval": interval,
            "node_update_timeout": 0,
            "detection_modes": [{"type": "LIFECYCLE_EVENTS"}],
        },
    }
    await harness.update(
        handle,
        "policy_attach",
        PolicyAttachRequest(policy=attach.policy.model_copy(update={"properties": props})),
    )
    harness.started.append(f"health:{cluster_id}")
    health = harness.env.client.get_workflow_handle(f"health:{cluster_id}")
    return handle, health, nodes(harness, cluster_id)[0]


async def pause_with_notification(harness: Harness, health: Any, node: NodeRecord) -> None:
    """Pause the node's server and tell the manager, as /v1/notifications would."""
    harness.cloud._set(node.physical_id or "", "PAUSED")
    await health.signal(
        "lifecycle_event",
        LifecycleEvent(node_id=node.id, event_type="compute.instance.pause.end"),
    )


def nodes(harness: Harness, cluster_id: str) -> list[NodeRecord]:
    return sorted(harness.rows(NodeRecord, cluster_id=cluster_id), key=lambda n: n.name)


async def test_failed_node_is_detected_and_rebooted(own_harness: Harness) -> None:
    harness = own_harness
    _, cluster_id = await watched(harness, 3)
    broken = nodes(harness, cluster_id)[0]
    harness.cloud._set(broken.physical_id or "", "SHUTOFF")
    await harness.env.sleep(timedelta(minutes=3))

    async def recovered() -> bool:
        return ("start", broken.physical_id or "") in harness.cloud.calls

    await eventually(recovered, what="START (the SHUTOFF hint) tried first")
    [after] = harness.rows(NodeRecord, id=broken.id)
    assert after.status == "ACTIVE"
    health = harness.env.client.get_workflow_handle(f"health:{cluster_id}")
    summary = await health.query("describe", result_type=HealthSummary)
    assert [r.name for r in summary.recoveries] == [broken.name]
    events = [e.action for e in harness.rows(EventRecord, obj_id=broken.id)]
    assert "HEALTH_CHECK" in events and "RECOVER_START" in events


async def test_above_max_unhealthy_no_recovery_and_cluster_warns(own_harness: Harness) -> None:
    harness = own_harness
    _, cluster_id = await watched(harness, 3, max_unhealthy=1)
    for node in nodes(harness, cluster_id)[:2]:
        harness.cloud._set(node.physical_id or "", "ERROR")
    await harness.env.sleep(timedelta(minutes=3))

    async def warned() -> ClusterRecord | None:
        [cluster] = harness.rows(ClusterRecord, id=cluster_id)
        return cluster if cluster.status == "WARNING" else None

    cluster = await eventually(warned, what="cluster WARNING")
    assert "2 of 3 nodes are unhealthy, above max_unhealthy (1)" in cluster.status_reason
    assert not [c for c in harness.cloud.calls if c[0] in ("reboot", "start")]
    health = harness.env.client.get_workflow_handle(f"health:{cluster_id}")
    summary = await health.query("describe", result_type=HealthSummary)
    assert sum(n.state == ProbeState.UNHEALTHY for n in summary.nodes) == 2


async def test_locked_cluster_gets_no_automatic_recovery(own_harness: Harness) -> None:
    harness = own_harness
    handle, cluster_id = await watched(harness, 2)
    await harness.update(handle, "lock", LockClusterRequest(reason="maintenance"))
    broken = nodes(harness, cluster_id)[0]
    harness.cloud._set(broken.physical_id or "", "ERROR")
    await harness.env.sleep(timedelta(minutes=5))
    health = harness.env.client.get_workflow_handle(f"health:{cluster_id}")
    summary = await health.query("describe", result_type=HealthSummary)
    assert summary.locked and summary.recoveries == []
    assert not harness.cloud.calls


async def test_health_manager_continues_as_new_and_keeps_what_it_knows(
    own_harness: Harness,
) -> None:
    harness = own_harness
    _, cluster_id = await harness.create(desired=2)
    targets = [
        ProbeTarget(node_id=n.id, name=n.name, physical_id=n.physical_id)
        for n in nodes(harness, cluster_id)
    ]
    props = policy().policy.properties
    handle = await harness.env.client.start_workflow(
        "HealthManagerWorkflow",
        HealthManagerInput(
            project_id="p1",
            cluster_id=cluster_id,
            cluster_name="web",
            policy_id="pol",
            properties=props,
            view=HealthView(targets=targets),
            history_limit=30,
        ),
        id=f"health-can:{cluster_id}",
        task_queue=harness.task_queue,
    )
    harness.started.append(handle.id)
    first_run = (await handle.describe()).run_id
    await harness.env.sleep(timedelta(minutes=10))

    async def new_run() -> bool:
        return (await handle.describe()).run_id != first_run

    await eventually(new_run, what="continue-as-new")
    summary = await handle.query("describe", result_type=HealthSummary)
    assert {n.name for n in summary.nodes} == {t.name for t in targets}
    assert all(n.state == ProbeState.HEALTHY for n in summary.nodes)


async def test_event_driven_recovery_happens_once_per_event(own_harness: Harness) -> None:
    harness = own_harness
    _, health, paused = await event_watched(harness, interval=60)
    await pause_with_notification(harness, health, paused)

    async def unpaused() -> bool:
        return ("unpause", paused.physical_id or "") in harness.cloud.calls

    await eventually(unpaused, what="UNPAUSE from the event hint")
    await harness.env.sleep(timedelta(minutes=30))  # many intervals and backoffs later
    assert harness.cloud.calls == [("unpause", paused.physical_id or "")]
    summary = await health.query("describe", result_type=HealthSummary)
    [node] = [n for n in summary.nodes if n.node_id == paused.id]
    assert (node.state, node.reason) == (ProbeState.HEALTHY, "recovered")


async def test_event_arriving_while_locked_is_acted_on_at_unlock(own_harness: Harness) -> None:
    harness = own_harness
    handle, health, paused = await event_watched(harness, interval=3600)
    await harness.update(handle, "lock", LockClusterRequest(reason="deploy"))
    await pause_with_notification(harness, health, paused)
    await harness.update(handle, "unlock", ClusterOperationRequest())

    async def unpaused() -> bool:  # no time is skipped here: it must not wait an interval
        return ("unpause", paused.physical_id or "") in harness.cloud.calls

    await eventually(unpaused, what="UNPAUSE right after unlock")
