"""ScaleInWorkflow: remove chosen victims from a cluster, each as its own child.

Used by scale_in, shrinking resize, del_nodes and node delete alike, so lifecycle
hooks fire for every node removal. Large removals are sharded so that no single
history grows past a few thousand events (Temporal's per-run limits,
docs/api-contract.md §Orchestration).
"""

from __future__ import annotations

import asyncio
import functools
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.cluster.lifecycle import DeletionSettings
    from domain.cluster.nodes import NodeState, NodeStatus
    from domain.cluster.policies.loadbalance import LbBinding
    from domain.cluster.stack_calls import stack_of
    from domain.projection import ChangeSet
    from workflows import ids
    from workflows.cluster.lb_members import leave_pool
    from workflows.cluster.node_deletion import (
        VICTIM_REVISION,
        NodeDeletionInput,
        NodeDeletionResult,
        NodeDeletionWorkflow,
        waits_for_hook,
    )
    from workflows.cluster.operations import (
        NodesOperationResult,
        finished,
        node_snapshot,
        record_changed,
        summarize_errors,
        with_status,
    )
    from workflows.cluster.retries import CLOUD_RETRY
    from workflows.entity import failure_reason, record
    from workflows.search_attributes import warden_attributes

#: Victims one ScaleInWorkflow run handles itself; more are split into shards.
SHARD_SIZE = 500
#: Shards start one after another: each starts its victims once the one before has
#: started all of its own (`shard_started`). Started together, two shards' child starts
#: queue in front of every victim's signal, task and delete on the server's store (one
#: SQLite connection in the dev server): complete_lifecycle → delete took 214 ms at
#: 1,000 nodes, 142 ms with one parent starting at a time (`python -m bench scale_in`).
STAGGERED_SHARDS = "staggered-shards"
#: A run starts its victims' deletions this many at a time, each wave once the one
#: before has started. The server takes the parent's lock for every child it starts
#: (twice: to read the command, then to record the start) and gives up on a lock after
#: 500 ms (`history.cacheNonUserContextLockTimeout`), retrying later. Hundreds of starts
#: at once queue on that one lock: most time out and retry, and the parent's own
#: workflow task waits behind them, up to the sticky queue's timeout. Measured on bare
#: Temporal, 300 children with a 0.2 s activity: 37-42 s all at once, 17-19 s in waves
#: of 20, with 20 times fewer busy-workflow retries (docs/performance.md).
START_WAVE = 20
VICTIM_START_WAVES = "victim-start-waves"


class ScaleInInput(BaseModel):
    """The victims (already chosen by the cluster) and the deletion policy's settings."""

    project_id: str
    cluster_id: str
    cluster_name: str
    action_id: str
    action_name: ActionName
    victims: list[NodeState]
    deletion: DeletionSettings
    complete_url: str
    #: How often waiting victims' servers are looked at (a vanished one ends its wait).
    server_poll_interval_s: int = 30
    #: Set on shard children; only the top run sleeps the grace period.
    shard: int | None = None
    #: What the removal is part of, shown before the action's reason (a cluster update's
    #: batch: "CLUSTER_UPDATE batch 2/3: ").
    stage: str = ""
    #: Victims one run handles itself (more are split into shards of this size).
    shard_size: int = Field(SHARD_SIZE, ge=1)
    #: The cluster's profile spec: a node removed without destroying its server lives
    #: on as a standalone node on it (None: inputs from before, the node row goes).
    profile: dict[str, Any] | None = None
    #: Set on shard children of a staggered run: tell the parent once every victim of
    #: this shard has started (`ScaleInWorkflow.shard_started`).
    report_started: bool = False
    #: Victims whose deletions start together (see `START_WAVE`).
    start_wave: int = Field(START_WAVE, ge=1)
    #: The cluster's load-balancing policy: victims leave its pool before anything else
    #: (grace period, hooks), so that no traffic reaches a node being removed.
    lb: LbBinding | None = None


WAITING_FOR_HOOKS = "Waiting for lifecycle hooks of the nodes being removed"


@workflow.defn(name="ScaleInWorkflow")
class ScaleInWorkflow:
    """Fan out one NodeDeletionWorkflow per victim and follow them to the end."""

    def __init__(self) -> None:
        #: Shards of this run that have started all their victims.
        self.shards_started: set[int] = set()

    @workflow.signal(name="shard_started")
    def shard_started(self, shard: int) -> None:
        """A shard of this run has started every victim: the next shard may start."""
        self.shards_started.add(shard)

    @workflow.run
    async def run(self, inp: ScaleInInput) -> NodesOperationResult:
        if inp.shard is None and inp.lb is not None:
            inp = await self._drain(inp, inp.lb)
        if inp.shard is None and inp.deletion.grace_period > 0:
            workflow.set_current_details(
                f"Grace period of {inp.deletion.grace_period} s before removing "
                f"{len(inp.victims)} node(s) of **{inp.cluster_name}**"
            )
            await workflow.sleep(
                timedelta(seconds=inp.deletion.grace_period), summary="grace period"
            )
        if len(inp.victims) > inp.shard_size:
            return finished(await self._sharded(inp))
        return finished(await self._remove(inp))

    @staticmethod
    async def _drain(inp: ScaleInInput, lb: LbBinding) -> ScaleInInput:
        """The victims out of the load balancer's pool (recorded), before their hooks."""
        workflow.set_current_details(
            f"Removing {len(inp.victims)} node(s) of **{inp.cluster_name}** from the "
            "load balancer's pool"
        )
        left = await leave_pool(lb, inp.victims)
        await record_changed(inp, inp.victims, left, inp.action_name.value)
        return inp.model_copy(update={"victims": left})

    async def _sharded(self, inp: ScaleInInput) -> NodesOperationResult:
        size = inp.shard_size
        shards = [inp.victims[i : i + size] for i in range(0, len(inp.victims), size)]
        staggered = workflow.patched(STAGGERED_SHARDS)
        workflow.set_current_details(
            f"Removing {len(inp.victims)} node(s) of **{inp.cluster_name}** in {len(shards)} "
            "shards"
            + (
                ", each started once the one before has started its nodes' deletions"
                if staggered
                else ""
            )
        )
        if staggered:
            results = await self._staggered(inp, shards)
        else:  # a run started before shards were staggered: all at once, as then
            results = await asyncio.gather(
                *(self._shard(inp, i, shards, staggered=False) for i in range(len(shards)))
            )
        nodes = [n for r in results for n in r.nodes]
        removed = [nid for r in results for nid in r.removed]
        return NodesOperationResult(
            nodes=nodes, removed=removed, error=summarize_errors(nodes, "delete")
        )

    async def _staggered(
        self, inp: ScaleInInput, shards: list[list[NodeState]]
    ) -> list[NodesOperationResult]:
        """Start each shard once the one before has started all its victims; follow all."""
        handles: list[workflow.ChildWorkflowHandle[ScaleInWorkflow, NodesOperationResult]] = []
        for i in range(len(shards)):
            handle = await workflow.start_child_workflow(
                ScaleInWorkflow.run, **self._shard_start(inp, i, shards, staggered=True)
            )
            handles.append(handle)
            if i + 1 < len(shards):
                # A shard that ended (even failed) before reporting lets the next one go.
                await workflow.wait_condition(functools.partial(self._shard_began, i, handle))
        return list(await asyncio.gather(*handles))

    def _shard_began(self, shard: int, handle: asyncio.Future[Any]) -> bool:
        return shard in self.shards_started or handle.done()

    async def _shard(
        self, inp: ScaleInInput, i: int, shards: list[list[NodeState]], *, staggered: bool
    ) -> NodesOperationResult:
        return await workflow.execute_child_workflow(
            ScaleInWorkflow.run, **self._shard_start(inp, i, shards, staggered=staggered)
        )

    def _shard_start(
        self, inp: ScaleInInput, i: int, shards: list[list[NodeState]], *, staggered: bool
    ) -> dict[str, Any]:
        """The arguments that start shard `i` of `shards` as a child of this run."""
        update = {"victims": shards[i], "shard": i, "report_started": staggered}
        return {
            "arg": inp.model_copy(update=update),
            "id": f"{workflow.info().workflow_id}:shard-{i}",
            "static_summary": f"remove {len(shards[i])} node(s) of {inp.cluster_name} "
            f"(shard {i + 1}/{len(shards)})",
            "search_attributes": warden_attributes(
                inp.project_id, "cluster-op", inp.cluster_id, "RUNNING"
            ),
        }

    async def _remove(self, inp: ScaleInInput) -> NodesOperationResult:
        plans = [(str(workflow.uuid4()), v, waits_for_hook(v, inp.deletion)) for v in inp.victims]
        await self._record_start(inp, plans)
        handles = await self._start_victims(inp, plans)
        parent = workflow.info().parent
        if inp.report_started and inp.shard is not None and parent is not None:
            await workflow.get_external_workflow_handle_for(
                ScaleInWorkflow.run, parent.workflow_id
            ).signal(ScaleInWorkflow.shard_started, inp.shard)
        results: dict[str, NodeDeletionResult] = {}
        followers = asyncio.gather(
            *(
                self._follow(h, node, results)
                for h, (_, node, _) in zip(handles, plans, strict=True)
            )
        )
        waiting = [node for _, node, wait in plans if wait]
        while waiting and not followers.done():
            self._show(inp, len(results))
            try:
                await workflow.wait_condition(
                    followers.done,
                    timeout=timedelta(seconds=inp.server_poll_interval_s),
                    timeout_summary="look for vanished servers",
                )
            except TimeoutError:
                waiting = [n for n in waiting if n.node_id not in results]
                await self._signal_vanished(inp, waiting, handles, plans)
        await followers
        left = [r.node for r in results.values() if not r.removed and r.node is not None]
        removed = [r.node_id for r in results.values() if r.removed]
        return NodesOperationResult(
            nodes=left, removed=removed, error=summarize_errors(left, "delete")
        )

    async def _start_victims(
        self, inp: ScaleInInput, plans: list[tuple[str, NodeState, bool]]
    ) -> list[workflow.ChildWorkflowHandle[NodeDeletionWorkflow, NodeDeletionResult]]:
        """Start every victim's deletion, in waves of `inp.start_wave` (`START_WAVE`).

        A run recorded before waves started all its victims at once and replays so; the
        patch is asked only when there is more than one wave, so small removals carry
        no marker.
        """
        wave = len(plans)
        if len(plans) > inp.start_wave and workflow.patched(VICTIM_START_WAVES):
            wave = inp.start_wave
        handles: list[workflow.ChildWorkflowHandle[NodeDeletionWorkflow, NodeDeletionResult]] = []
        for first in range(0, len(plans), wave):
            handles += await asyncio.gather(
                *(self._start_victim(inp, plan) for plan in plans[first : first + wave])
            )
        return handles

    async def _start_victim(
        self, inp: ScaleInInput, plan: tuple[str, NodeState, bool]
    ) -> workflow.ChildWorkflowHandle[NodeDeletionWorkflow, NodeDeletionResult]:
        token, node, wait = plan
        return await workflow.start_child_workflow(
            NodeDeletionWorkflow.run,
            NodeDeletionInput(
                project_id=inp.project_id,
                cluster_id=inp.cluster_id,
                cluster_name=inp.cluster_name,
                parent_action_id=inp.action_id,
                token=token,
                node=node,
                deletion=inp.deletion,
                complete_url=inp.complete_url,
                wait=wait,
                revision=VICTIM_REVISION,
                profile=inp.profile,
            ),
            id=ids.node_deletion(token),
            static_summary=f"delete node {node.name} of cluster {inp.cluster_name}",
            static_details=f"Node `{node.node_id}`, server `{node.physical_id}`; "
            f"lifecycle token `{token}`; parent action `{inp.action_id}`",
            search_attributes=warden_attributes(
                inp.project_id,
                "node-delete",
                inp.cluster_id,
                "WAITING" if wait else "RUNNING",
            ),
        )

    async def _follow(
        self,
        handle: workflow.ChildWorkflowHandle[NodeDeletionWorkflow, NodeDeletionResult],
        node: NodeState,
        results: dict[str, NodeDeletionResult],
    ) -> None:
        try:
            results[node.node_id] = await handle
        except ChildWorkflowError as err:
            reason = failure_reason(err)
            results[node.node_id] = NodeDeletionResult(
                node_id=node.node_id,
                removed=False,
                outcome=reason,
                node=with_status(node, NodeStatus.ERROR, f"Failed to delete: {reason}"),
            )

    async def _signal_vanished(
        self,
        inp: ScaleInInput,
        waiting: list[NodeState],
        handles: list[workflow.ChildWorkflowHandle[NodeDeletionWorkflow, NodeDeletionResult]],
        plans: list[tuple[str, NodeState, bool]],
    ) -> None:
        # A stack node's physical id is a stack's: no server listing could find it.
        server_ids = [n.physical_id for n in waiting if n.physical_id and stack_of(n) is None]
        if not server_ids:
            return
        try:
            found = await workflow.execute_activity_method(
                ComputeActivities.get_server_statuses,
                server_ids,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=CLOUD_RETRY,
                summary=f"look at {len(server_ids)} waiting server(s)",
            )
        except ActivityError:
            return  # a cloud outage is no reason to stop waiting; try again next round
        gone = {pid for pid, status in found.statuses.items() if status in (None, "DELETED")}
        by_node = {
            node.node_id: handle for handle, (_, node, _) in zip(handles, plans, strict=True)
        }
        for node in waiting:
            if node.physical_id in gone:
                await by_node[node.node_id].signal(NodeDeletionWorkflow.server_gone)

    async def _record_start(
        self, inp: ScaleInInput, plans: list[tuple[str, NodeState, bool]]
    ) -> None:
        """One write: victims DELETING, a NODE_DELETE action per victim, parent WAITING."""
        now = workflow.now()
        any_wait = any(wait for _, _, wait in plans)
        actions = [
            ActionChange(
                action_id=token,
                project_id=inp.project_id,
                name=ActionName.NODE_DELETE,
                target=node.node_id,
                status=ActionStatus.WAITING_LIFECYCLE_COMPLETION if wait else ActionStatus.RUNNING,
                status_reason="Waiting for complete_lifecycle" if wait else "Deleting node",
                inputs={
                    "cluster_id": inp.cluster_id,
                    "node_id": node.node_id,
                    "node_name": node.name,
                },
                # Senlin's links: a node action is depended on by its cluster action.
                depended_by=[inp.action_id],
                workflow_id=ids.node_deletion(token),
                at=now,
            )
            for token, node, wait in plans
        ]
        if any_wait:
            actions.append(
                ActionChange(
                    action_id=inp.action_id,
                    project_id=inp.project_id,
                    name=inp.action_name,
                    target=inp.cluster_id,
                    status=ActionStatus.WAITING,
                    status_reason=f"{inp.stage}{WAITING_FOR_HOOKS}",
                    depends_on=[token for token, _, _ in plans],
                    at=now,
                )
            )
        nodes = [
            with_status(
                node,
                NodeStatus.DELETING,
                f"Waiting for complete_lifecycle (token {token})" if wait else "Deleting node",
            )
            for token, node, wait in plans
        ]
        await record(
            ChangeSet(
                nodes=[node_snapshot(inp.project_id, inp.cluster_id, n) for n in nodes],
                actions=actions,
            ),
            summary=f"record {len(plans)} victim(s)",
        )

    def _show(self, inp: ScaleInInput, done: int) -> None:
        workflow.set_current_details(
            f"Removing {len(inp.victims)} node(s) of **{inp.cluster_name}**: {done} done, "
            f"the rest wait for `complete_lifecycle` or their deadline.\n\n"
            f'Find them: `WardenKind="node-delete" AND WardenTarget="{inp.cluster_id}"`'
        )
