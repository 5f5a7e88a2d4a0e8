"""Replay saved histories against today's workflow code (docs/style.md §Temporal: a change to
a workflow that may be running needs `workflow.patched()` and a replay test).

A change that would break workflows already running in production makes one of
these replays fail in `make test`. When a change is intended, guard it with
`workflow.patched("<change-id>")` so old histories still replay, and record fresh
histories with `WARDEN_RECORD_HISTORIES=1 uv run pytest tests/workflows/test_replay.py`
(they are added next to the old ones, which keep proving the old paths).
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.worker import Replayer

from config.codec import COMPRESSED, CodecKeys, new_keys_json
from config.temporal_client import warden_data_converter
from domain.cluster.lifecycle import LifecycleNote
from domain.cluster.requests import ClusterOperationRequest, PolicyAttachRequest
from domain.cluster.state import AttachedPolicy
from domain.stack.requests import LockStackRequest, MarkResourceRequest, StackOperationRequest
from domain.stack.state import LockLevel
from store.actions import ActionRecord
from tests.workflows.support import PROFILE, Harness
from tests.workflows.test_conditional_stacks import SIZED
from tests.workflows.test_group_rolls import batch_created, six_members
from tests.workflows.test_recovery_workflow import break_node, health_policy
from tests.workflows.test_scale_in_workflow import hooked_cluster, scale_in, waiting_tokens
from tests.workflows.test_software_deployments import deploying, deployment_row
from tests.workflows.test_software_deployments import signal as deployment_signal
from tests.workflows.test_stack_hooks import STEPS, clear, paused
from tests.workflows.test_stack_workflow import (
    GROUP,
    NESTED,
    WEB,
    create_stack,
    nested_of,
    send,
    stack_settles,
)
from tests.workflows.test_wait_conditions import handle_made, waiting
from tests.workflows.test_wait_conditions import signal as handle_signal
from worker.registry import WORKFLOWS

HISTORIES = Path(__file__).parent / "histories"
RECORD = os.environ.get("WARDEN_RECORD_HISTORIES") == "1"


def saved() -> list[Path]:
    return sorted(HISTORIES.glob("*.json"))


#: Plain, and with payload encryption on: histories written before encryption was turned
#: on hold plain payloads, which the encryption codec must pass through.
CONVERTERS: dict[str, DataConverter] = {
    "plain": pydantic_data_converter,
    "encrypted": warden_data_converter(CodecKeys.from_json(new_keys_json("replay"))),
}


def _encodings(node: Any) -> set[bytes]:
    """The `encoding` of every payload in a history's JSON."""
    found: set[bytes] = set()
    if isinstance(node, dict):
        encoding = node.get("metadata", {}).get("encoding") if "data" in node else None
        if isinstance(encoding, str):
            found.add(base64.b64decode(encoding))
        for value in node.values():
            found |= _encodings(value)
    elif isinstance(node, list):
        for value in node:
            found |= _encodings(value)
    return found


def replays() -> list[tuple[Path, str]]:
    """Each saved history once, with the converter that reads it as in production: one
    written by a worker that compresses large payloads (Warden's default codec) with that
    codec, the others plain. The codec also reads the first plain history of each
    workflow type, to prove it passes plain payloads through."""
    pairs = []
    sampled: set[str] = set()
    for path in saved():
        kind = path.name.split("-")[0]  # the workflow type: `StackWorkflow-r3-01.json`
        if COMPRESSED in _encodings(json.loads(path.read_text())["history"]):
            pairs.append((path, "encrypted"))
            sampled.add(kind)
            continue
        pairs.append((path, "plain"))
        if kind not in sampled:
            pairs.append((path, "encrypted"))
            sampled.add(kind)
    return pairs


@pytest.mark.skipif(RECORD, reason="recording new histories")
@pytest.mark.parametrize(
    ("path", "converter"), replays(), ids=lambda v: v.stem if isinstance(v, Path) else v
)
async def test_saved_history_replays_on_current_code(path: Path, converter: str) -> None:
    data = json.loads(path.read_text())
    history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
    replayer = Replayer(workflows=list(WORKFLOWS), data_converter=CONVERTERS[converter])
    await replayer.replay_workflow(history)


@pytest.mark.skipif(RECORD, reason="recording new histories")
def test_every_entity_and_operation_kind_has_a_saved_history() -> None:
    kinds = {json.loads(p.read_text())["workflow_type"] for p in saved()}
    expected = {
        "StackWorkflow",
        "StackOperationWorkflow",
        "ClusterWorkflow",
        "ClusterCreateWorkflow",
        "ScaleInWorkflow",
        "NodeDeletionWorkflow",
        "HealthManagerWorkflow",
        "ClusterRecoverWorkflow",
        "NodeRecoveryWorkflow",
        "ClusterUpdateWorkflow",
    }
    assert expected <= kinds, expected - kinds


async def record_stack_waits(harness: Harness) -> None:
    """The stack paths that wait: conditions worked out and changed by an update, a
    breakpoint hook cleared, a wait condition signalled, a software deployment signalled."""
    sized, sized_id = await create_stack(harness, SIZED)
    await send(sized, "update", StackOperationRequest(existing=True, parameters={"env": "dev"}))
    await stack_settles(harness, sized_id)
    hooked, hooked_id = await create_stack(
        harness, STEPS, wait=False, hooks={"foo_step2": {"hooks": "pre-create"}}
    )
    await paused(harness, hooked_id, "foo_step2", "CREATE paused until Hook pre-create is cleared")
    await clear(hooked, "foo_step2", "pre-create")
    await stack_settles(harness, hooked_id)
    waits, waits_id = await create_stack(harness, waiting(), wait=False)
    await handle_made(harness, waits_id)
    await send(waits, "deliver_signal", handle_signal({"reason": "up"}))
    await stack_settles(harness, waits_id)
    await send(waits, "deliver_signal", handle_signal({"reason": "late"}))
    deploys, deploys_id = await create_stack(harness, deploying(), wait=False)
    await deployment_row(harness, deploys_id, "IN_PROGRESS")
    await send(deploys, "deliver_signal", deployment_signal({"deploy_stdout": "ok"}))
    await stack_settles(harness, deploys_id)


async def record_spine_paths(harness: Harness, cluster: Any, node_id: str) -> None:
    """The paths added on the operation table: a node check, a cluster rolled onto a new
    profile in batches, a group rolled in batches and a group created in batches."""
    checked = await harness.update(
        cluster, "check_node", ClusterOperationRequest(params={"nodes": [node_id]})
    )
    await harness.action_ends(checked.action_id)
    rolled, _ = await harness.create(desired=3)
    batches = AttachedPolicy(
        policy_id=str(uuid.uuid4()),
        name="batches",
        type="senlin.policy.batch",
        properties={"min_in_service": 1, "max_batch_size": 2, "pause_time": 30},
    )
    await harness.update(rolled, "policy_attach", PolicyAttachRequest(policy=batches))
    profile: dict[str, Any] = {**PROFILE, "properties": {"image": "cirros-v2", "flavor": "m1.tiny"}}
    update = ClusterOperationRequest(params={"profile_id": "prof-v2", "profile": profile})
    updated = await harness.update(rolled, "update", update)
    await harness.env.sleep(60)
    await harness.action_ends(updated.action_id)
    group, group_id = await create_stack(harness, six_members("v1"))
    await send(group, "update", StackOperationRequest(template=six_members("v2")))
    await harness.env.sleep(150)
    await stack_settles(harness, group_id)
    _, batched_id = await create_stack(harness, batch_created(4), wait=False)
    await harness.env.sleep(150)
    await stack_settles(harness, batched_id)
    for parent in (group_id, batched_id):
        harness.started.append(f"stack:{nested_of(harness, parent).id}")


@pytest.mark.skipif(not RECORD, reason="set WARDEN_RECORD_HISTORIES=1 to record histories")
async def test_record_histories(harness: Harness) -> None:
    """Run one scenario per workflow kind and save each finished history."""
    HISTORIES.mkdir(exist_ok=True)
    # Old histories stay: they keep proving that the old paths behind workflow.patched
    # still replay. Each recording run gets the next tag (r1, r2, …).
    tags = {p.stem.rsplit("-", 2)[-2] for p in saved()}
    tag = f"r{len(tags) + 1}"
    handle, stack_id = await create_stack(harness, WEB)
    await send(
        handle, "mark_unhealthy", MarkResourceRequest(resource_name="web", mark_unhealthy=True)
    )
    await send(handle, "update", StackOperationRequest(existing=True))
    await stack_settles(harness, stack_id)
    await send(handle, "lock", LockStackRequest(level=LockLevel.ALL))
    await stack_settles(harness, stack_id)
    await send(handle, "unlock", StackOperationRequest())
    await stack_settles(harness, stack_id)
    await send(handle, "delete", StackOperationRequest())
    await handle.result()
    await create_stack(harness, NESTED)
    await create_stack(harness, GROUP)
    await record_stack_waits(harness)

    cluster, cluster_id = await hooked_cluster(harness, size=2, timeout=60)
    parent = await scale_in(harness, cluster, 1)
    [token] = await waiting_tokens(harness, parent)
    node_delete = harness.env.client.get_workflow_handle(f"node-delete:{token.id}")
    await node_delete.signal("complete_lifecycle", LifecycleNote(source="test"))
    await harness.action_ends(parent)
    check = await harness.update(cluster, "check", ClusterOperationRequest())
    await harness.action_ends(check.action_id)

    # Health and recovery: a manager watching the cluster, and a RECREATE whose old
    # server can't be deleted, so the fence falls back to power-off.
    await harness.update(cluster, "policy_attach", health_policy([{"name": "RECREATE"}]))
    harness.cloud.fence_fails = {"delete"}
    node = await break_node(harness, cluster_id)
    recovered = await harness.update(cluster, "recover", ClusterOperationRequest(
        params={"nodes": [node.id]}
    ))  # fmt: skip
    await harness.action_ends(recovered.action_id)
    # Senlin's recover {check: true}: every node checked first, only the failed one healed.
    node = await break_node(harness, cluster_id)
    checked = await harness.update(cluster, "recover", ClusterOperationRequest(
        params={"check": True, "operation": "REBOOT"}
    ))  # fmt: skip
    await harness.action_ends(checked.action_id)
    await record_spine_paths(harness, cluster, node.id)

    ids = {*harness.started, *(a.workflow_id for a in harness.rows(ActionRecord) if a.workflow_id)}
    ids |= {f"health:{cluster_id}", f"node-recover:{node.id}:{recovered.action_id}"}
    ids |= {f"node-recover:{node.id}:{checked.action_id}"}
    counts: dict[str, int] = {}
    for workflow_id in sorted(ids):
        wf = harness.env.client.get_workflow_handle(workflow_id)
        description = await wf.describe()
        if description.status != WorkflowExecutionStatus.COMPLETED and not workflow_id.startswith(
            ("stack:", "cluster:", "health:")
        ):
            continue
        history = await wf.fetch_history()
        kind = description.workflow_type
        counts[kind] = counts.get(kind, 0) + 1
        (HISTORIES / f"{kind}-{tag}-{counts[kind]:02d}.json").write_text(
            json.dumps(
                {
                    "workflow_id": workflow_id,
                    "workflow_type": kind,
                    "history": history.to_json_dict(),
                },
                indent=1,
            )
        )
