"""ClusterUpdateWorkflow: roll a cluster onto a new profile, one batch at a time.

A node whose server can take the new profile's changes (image, flavor, metadata,
password: `domain/cluster/server_update.py`) keeps its server and its id, updated in
place as Senlin's `ServerProfile.do_update` does: a rebuild, a resize confirmed once
Nova waits in VERIFY_RESIZE, a password change, new metadata. Every other node of a
batch is replaced: each batch first builds its replacements (new nodes on the new
profile, so capacity never drops), then removes the nodes they replace through the
same scale-in path as any removal: the deletion policy's grace period and lifecycle
hook apply, and an app draining nodes sees each replaced node's hook message. Failed
nodes are in the first batches (`domain/cluster/policies/batch.py`). Between batches
the batch policy's pause is a durable timer. A batch whose replacements do not all
come up stops the roll with the old nodes still in service. Each batch is its own pair
of children (`cluster-op:{cluster}:{action}:batch-{n}:create|remove`) in the Temporal
UI.

A cluster of Heat stacks is updated in place, as Senlin's `StackProfile.do_update`
does: each node's stack gets the new profile's template and settings (Heat's PATCH),
batch by batch, and keeps its id; a node that has no stack gets one.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from activities.recovery import RecoveryActivities
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.cluster.lifecycle import DeletionSettings
    from domain.cluster.nodes import NodeState, NodeStatus, node_name
    from domain.cluster.policies.loadbalance import LbBinding
    from domain.cluster.recovery import RebuildRequest
    from domain.cluster.server_update import ServerChanges
    from domain.cluster.stack_calls import stack_fields, stack_of
    from domain.cluster.stack_profile import is_stack_profile
    from domain.projection import ChangeSet
    from domain.servers import ResizeRequest, ServerMetadataRequest, ServerPasswordRequest
    from workflows import ids
    from workflows.cluster.operations import (
        ClusterCreateWorkflow,
        NodesOperationInput,
        NodesOperationResult,
        finished,
        record_nodes,
        summarize_errors,
        wait_until_active,
        with_status,
    )
    from workflows.cluster.retries import POLL_RETRY, SERVER_WAIT, cloud_call
    from workflows.cluster.scale_in import ScaleInInput, ScaleInWorkflow
    from workflows.cluster.stack_nodes import build_stack, update_stack
    from workflows.entity import failure_reason, record
    from workflows.search_attributes import warden_attributes


class ClusterUpdateInput(BaseModel):
    """The roll, as the cluster planned it when it accepted the update."""

    project_id: str
    cluster_id: str
    cluster_name: str
    action_id: str
    profile_id: str
    profile: dict[str, Any]
    nodes: list[NodeState]
    #: Node ids of each batch, failed nodes first.
    batches: list[list[str]]
    pause_time_s: int
    #: Index of the first replacement's name (the cluster reserved one per node).
    first_index: int
    deletion: DeletionSettings
    complete_url: str
    server_poll_interval_s: int = 30
    #: The cluster's load-balancing policy: each batch's new nodes join the pool before
    #: the nodes they replace leave it.
    lb: LbBinding | None = None
    #: Nodes whose servers take `changes` in place (the others of a batch are replaced).
    in_place: list[str] = []
    changes: ServerChanges | None = None


@workflow.defn(name="ClusterUpdateWorkflow")
class ClusterUpdateWorkflow:
    """Update or replace the nodes batch by batch; answer the nodes it touched and the
    removed ones."""

    @workflow.run
    async def run(self, inp: ClusterUpdateInput) -> NodesOperationResult:
        if is_stack_profile(inp.profile):
            return finished(await self._update_stacks(inp))
        by_id = {n.node_id: n for n in inp.nodes}
        touched: list[NodeState] = []
        removed: list[str] = []
        index = inp.first_index
        kept_ids, updated = set(inp.in_place), 0
        for number, batch in enumerate(inp.batches, start=1):
            kept = [by_id[node_id] for node_id in batch if node_id in kept_ids]
            old = [by_id[node_id] for node_id in batch if node_id not in kept_ids]
            await self._progress(
                inp,
                f"batch {number}/{len(inp.batches)}: "
                + ", ".join(
                    part
                    for part in (
                        kept and f"updating {', '.join(n.name for n in kept)} in place",
                        old and f"replacing {', '.join(n.name for n in old)}",
                    )
                    if part
                )
                + f" ({len(removed) + updated} of {len(inp.nodes)} done)",
            )
            if kept:
                in_place = await self._update_in_place(inp, kept)
                touched.extend(in_place)
                updated += len(in_place)
                error = summarize_errors(in_place, "update")
                if error:
                    return finished(self._stopped(touched, removed, number, error))
            if not old:
                await self._pause(inp, number, len(removed) + updated)
                continue
            fresh = [self._replacement(inp, index + i) for i in range(len(old))]
            index += len(old)
            result = await self._build(inp, number, fresh)
            touched.extend(result.nodes)
            if result.error:
                return finished(self._stopped(touched, removed, number, result.error))
            stage = f"CLUSTER_UPDATE batch {number}/{len(inp.batches)}: "
            result = await self._remove(inp, number, old, stage)
            touched.extend(n for n in result.nodes if n.node_id not in result.removed)
            removed.extend(result.removed)
            if result.error:
                return finished(self._stopped(touched, removed, number, result.error))
            await self._pause(inp, number, len(removed) + updated)
        return finished(NodesOperationResult(nodes=touched, removed=removed))

    async def _pause(self, inp: ClusterUpdateInput, number: int, done: int) -> None:
        """The batch policy's pause after batch `number` (none after the last)."""
        if number < len(inp.batches) and inp.pause_time_s:
            await self._progress(
                inp,
                f"pausing {inp.pause_time_s} s after batch {number}/{len(inp.batches)} "
                f"({done} of {len(inp.nodes)} done)",
            )
            await workflow.sleep(timedelta(seconds=inp.pause_time_s), summary="batch pause")

    async def _update_in_place(
        self, inp: ClusterUpdateInput, nodes: list[NodeState]
    ) -> list[NodeState]:
        """Senlin's `do_update` on each node's server, the batch at once."""
        base = _on_new_profile(inp, [])
        updating = [with_status(n, NodeStatus.UPDATING, "Updating server") for n in nodes]
        await record_nodes(base, updating, "NODE_UPDATE")
        done = list(await asyncio.gather(*(self._update_server(inp, n) for n in updating)))
        await record_nodes(base, done, "NODE_UPDATE")
        return done

    @staticmethod
    async def _update_server(inp: ClusterUpdateInput, node: NodeState) -> NodeState:
        changes, pid = inp.changes, node.physical_id
        assert changes is not None  # planned so (`plan_update`)
        assert pid is not None
        try:
            if changes.image is not None:
                rebuild = RebuildRequest(physical_id=pid, image=changes.image)
                await cloud_call(RecoveryActivities.rebuild_server, rebuild, f"rebuild {node.name}")
                await wait_until_active(pid, node.name)
            if changes.flavor is not None:
                resize = ResizeRequest(physical_id=pid, flavor=changes.flavor)
                if await cloud_call(
                    RecoveryActivities.resize_server, resize, f"resize {node.name}"
                ):
                    await workflow.execute_activity_method(
                        ComputeActivities.wait_server_resized,
                        pid,
                        start_to_close_timeout=timedelta(seconds=30),
                        schedule_to_close_timeout=SERVER_WAIT,
                        retry_policy=POLL_RETRY,
                        summary=f"wait for {node.name} VERIFY_RESIZE",
                    )
                    await cloud_call(
                        RecoveryActivities.confirm_server_resize, pid, f"confirm {node.name}"
                    )
                    await wait_until_active(pid, node.name)
            if changes.admin_pass:
                password = ServerPasswordRequest(physical_id=pid, admin_pass=changes.admin_pass)
                await cloud_call(
                    RecoveryActivities.change_server_password, password, f"password {node.name}"
                )
            if changes.metadata is not None:
                metadata = ServerMetadataRequest(physical_id=pid, metadata=changes.metadata)
                await cloud_call(
                    RecoveryActivities.update_server_metadata, metadata, f"metadata {node.name}"
                )
        except ActivityError as err:
            return with_status(node, NodeStatus.ERROR, failure_reason(err))
        return with_status(
            node.model_copy(update={"profile_id": inp.profile_id}), NodeStatus.ACTIVE
        )

    async def _update_stacks(self, inp: ClusterUpdateInput) -> NodesOperationResult:
        by_id = {n.node_id: n for n in inp.nodes}
        nodes = _on_new_profile(inp, [])
        touched: list[NodeState] = []
        for number, batch in enumerate(inp.batches, start=1):
            old = [by_id[node_id] for node_id in batch]
            await self._progress(
                inp,
                f"batch {number}/{len(inp.batches)}: updating the stacks of "
                f"{', '.join(n.name for n in old)} ({len(touched)} of {len(inp.nodes)} done)",
            )
            updating = [with_status(n, NodeStatus.UPDATING, "Updating stack") for n in old]
            await record_nodes(nodes, updating, "NODE_UPDATE")
            done = list(await asyncio.gather(*(self._update_stack(inp, n) for n in updating)))
            await record_nodes(nodes, done, "NODE_UPDATE")
            touched.extend(done)
            error = summarize_errors(done, "update")
            if error:
                return self._stopped(touched, [], number, error)
            if number < len(inp.batches) and inp.pause_time_s:
                await workflow.sleep(timedelta(seconds=inp.pause_time_s), summary="batch pause")
        return NodesOperationResult(nodes=touched)

    @staticmethod
    async def _update_stack(inp: ClusterUpdateInput, node: NodeState) -> NodeState:
        on_new = node.model_copy(update={"profile_id": inp.profile_id})
        if stack_of(node) is None:
            built, failed = await build_stack(
                inp.profile, on_new, request_id=f"{node.node_id}:{inp.action_id}",
                cluster_id=inp.cluster_id,
            )  # fmt: skip
            if failed is not None:
                return with_status(built, NodeStatus.ERROR, failed)
            return with_status(built, NodeStatus.ACTIVE)
        try:
            await update_stack(node, inp.profile, stack_fields(inp.profile))
        except ActivityError as err:
            return with_status(node, NodeStatus.ERROR, failure_reason(err))
        return with_status(on_new, NodeStatus.ACTIVE)

    async def _progress(self, inp: ClusterUpdateInput, text: str) -> None:
        """Show where the roll is: in the Temporal UI and on the action (CLI, API)."""
        workflow.set_current_details(f"**{inp.cluster_name}**: {text}")
        progress = ActionChange(
            action_id=inp.action_id,
            project_id=inp.project_id,
            name=ActionName.CLUSTER_UPDATE,
            target=inp.cluster_id,
            status=ActionStatus.RUNNING,
            status_reason=f"CLUSTER_UPDATE {text}",
            at=workflow.now(),
        )
        await record(ChangeSet(actions=[progress]), summary=text)

    def _replacement(self, inp: ClusterUpdateInput, index: int) -> NodeState:
        now = workflow.now()
        return NodeState(
            node_id=str(workflow.uuid4()),
            name=node_name(inp.cluster_name, index),
            index=index,
            profile_id=inp.profile_id,
            created_at=now,
            updated_at=now,
        )

    async def _build(
        self, inp: ClusterUpdateInput, number: int, fresh: list[NodeState]
    ) -> NodesOperationResult:
        nodes = _on_new_profile(inp, fresh)
        return await self._child(
            ClusterCreateWorkflow.run,
            nodes,
            ids.cluster_update_step(inp.cluster_id, inp.action_id, number, "create"),
            f"batch {number}: create {len(fresh)} node(s) of cluster {inp.cluster_name}",
            inp,
            fresh,
        )

    async def _remove(
        self, inp: ClusterUpdateInput, number: int, old: list[NodeState], stage: str
    ) -> NodesOperationResult:
        victims = ScaleInInput(
            project_id=inp.project_id,
            cluster_id=inp.cluster_id,
            cluster_name=inp.cluster_name,
            action_id=inp.action_id,
            action_name=ActionName.CLUSTER_UPDATE,
            victims=old,
            deletion=inp.deletion,
            complete_url=inp.complete_url,
            server_poll_interval_s=inp.server_poll_interval_s,
            stage=stage,
            lb=inp.lb,
        )
        return await self._child(
            ScaleInWorkflow.run,
            victims,
            ids.cluster_update_step(inp.cluster_id, inp.action_id, number, "remove"),
            f"batch {number}: remove {len(old)} replaced node(s) of cluster {inp.cluster_name}",
            inp,
            old,
        )

    async def _child(
        self,
        run: Any,
        arg: Any,
        workflow_id: str,
        summary: str,
        inp: ClusterUpdateInput,
        nodes: list[NodeState],
    ) -> NodesOperationResult:
        """A batch step as a child; a crash of the step fails the batch, not the roll."""
        try:
            result: NodesOperationResult = await workflow.execute_child_workflow(
                run,
                arg,
                id=workflow_id,
                static_summary=summary,
                search_attributes=warden_attributes(
                    inp.project_id, "cluster-op", inp.cluster_id, "RUNNING"
                ),
            )
        except ChildWorkflowError as err:
            return NodesOperationResult(nodes=nodes, error=failure_reason(err))
        return result

    @staticmethod
    def _stopped(
        touched: list[NodeState], removed: list[str], number: int, error: str
    ) -> NodesOperationResult:
        failed = [n.name for n in touched if n.status == NodeStatus.ERROR]
        detail = f" ({', '.join(failed)} in ERROR)" if failed else ""
        return NodesOperationResult(
            nodes=touched,
            removed=removed,
            error=f"Update stopped at batch {number}: {error}{detail}",
        )


def _on_new_profile(inp: ClusterUpdateInput, nodes: list[NodeState]) -> NodesOperationInput:
    """A node operation of this update: `nodes` on the update's new profile."""
    return NodesOperationInput(
        project_id=inp.project_id,
        cluster_id=inp.cluster_id,
        cluster_name=inp.cluster_name,
        action_id=inp.action_id,
        profile=inp.profile,
        nodes=nodes,
        lb=inp.lb,
    )
