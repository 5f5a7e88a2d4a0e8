"""Senlin's node operations (`reboot`, `stop`, `lock`, …) on nodes' servers: one child
per action, one activity per server, batched as every node operation is."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from activities.recovery import RecoveryActivities
    from domain.cluster.nodes import NodeState, NodeStatus
    from domain.cluster.policies.health import RebootType
    from domain.cluster.recovery import RebootRequest, RebuildRequest
    from domain.cluster.server_ops import ServerOperation
    from domain.servers import LockServerRequest
    from workflows.cluster.operations import (
        NodesOperationInput,
        NodesOperationResult,
        batches,
        finished,
        record_nodes,
        summarize_errors,
        with_status,
    )
    from workflows.cluster.retries import CLOUD_RETRY, POLL_RETRY, SERVER_WAIT
    from workflows.entity import failure_reason

#: Operations after which the server is waited for until ACTIVE again.
_BACK_TO_ACTIVE = frozenset({"reboot", "rebuild", "start", "unpause"})


class ServerOperationsInput(BaseModel):
    """The nodes and the operation to carry out on each one's server."""

    base: NodesOperationInput
    operation: ServerOperation


@workflow.defn(name="ServerOperationsWorkflow")
class ServerOperationsWorkflow:
    """Carry out one operation on every node's server; a node whose server refuses it
    goes to ERROR with the cloud's reason."""

    @workflow.run
    async def run(self, inp: ServerOperationsInput) -> NodesOperationResult:
        op, base = inp.operation, inp.base
        done: list[NodeState] = []
        for batch in batches(base.nodes):
            workflow.set_current_details(
                f"`{op.name}` on {len(done) + len(batch)} of {len(base.nodes)} node(s) of "
                f"**{base.cluster_name}**"
            )
            results = await asyncio.gather(*(self._one(op, n) for n in batch))
            await record_nodes(base, list(results), "NODE_OPERATION")
            done.extend(results)
        error = summarize_errors(done, op.name)
        return finished(NodesOperationResult(nodes=done, error=error))

    async def _one(self, op: ServerOperation, node: NodeState) -> NodeState:
        if not node.physical_id:
            return with_status(node, NodeStatus.ERROR, f"{op.name}: the node has no server")
        pid = node.physical_id
        method, arg = _call(op, pid)
        try:
            await workflow.execute_activity_method(
                method,
                arg,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=CLOUD_RETRY,
                summary=f"{op.name} {node.name}",
            )
            if op.name in _BACK_TO_ACTIVE:
                await workflow.execute_activity_method(
                    ComputeActivities.wait_server_active,
                    pid,
                    start_to_close_timeout=timedelta(seconds=30),
                    schedule_to_close_timeout=SERVER_WAIT,
                    retry_policy=POLL_RETRY,
                    summary=f"wait for {node.name} ACTIVE",
                )
        except ActivityError as err:
            return with_status(node, NodeStatus.ERROR, f"{op.name}: {failure_reason(err)}")
        status = NodeStatus.ACTIVE if op.name in _BACK_TO_ACTIVE else node.status
        return with_status(node, status, f"Operation '{op.name}' succeeded")


def _call(op: ServerOperation, pid: str) -> tuple[Any, Any]:
    """The activity that carries out `op` on server `pid`, and its argument."""
    if op.name == "reboot":
        kind = RebootType(op.params.get("type", "SOFT").upper())
        return RecoveryActivities.reboot_server, RebootRequest(physical_id=pid, type=kind)
    if op.name == "rebuild":
        return RecoveryActivities.rebuild_server, RebuildRequest(physical_id=pid)
    if op.name == "lock":
        return RecoveryActivities.lock_server, LockServerRequest(physical_id=pid)
    simple = {
        "start": RecoveryActivities.start_server,
        "stop": RecoveryActivities.stop_server,
        "pause": RecoveryActivities.pause_server,
        "unpause": RecoveryActivities.unpause_server,
        "unlock": RecoveryActivities.unlock_server,
    }
    return simple[op.name], pid
