"""Recovering nodes: NodeRecoveryWorkflow per node, under ClusterRecoverWorkflow.

Each node walks its ordered list of steps (an event hint's cheap fix first, then
REBOOT / REBUILD / RECREATE / a user's Temporal workflow), verifying health after
every step with the policy's own detection and stopping at the first success.
RECREATE fences the old server (deleted and confirmed gone) before creating the
replacement, so two copies of a node never run at once.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from activities.health import HealthActivities
    from activities.recovery import RecoveryActivities
    from domain.cluster.health import (
        FenceRequest,
        ProbeRequest,
        ProbeState,
        RecoveryStep,
        expand_params,
        probe_target,
    )
    from domain.cluster.nodes import MARKED_UNHEALTHY, NodeState, NodeStatus, without_mark
    from domain.cluster.policies.health import RebootType
    from domain.cluster.policies.loadbalance import LB_MEMBER, LbBinding
    from domain.cluster.recovery import RebootRequest, RebuildRequest
    from domain.cluster.stack_calls import stack_of, without_stack
    from domain.cluster.stack_profile import StackHealth, is_stack_profile
    from domain.events import EventLevel, node_event
    from domain.projection import ChangeSet
    from domain.servers import ServerInfo
    from workflows import ids
    from workflows.cluster.lb_members import join_pool, leave_pool
    from workflows.cluster.operations import (
        NodesOperationInput,
        NodesOperationResult,
        adopt_lost_server,
        check_nodes,
        finished,
        node_snapshot,
        record_changed,
        server_request,
        summarize_errors,
        wait_until_active,
        with_status,
    )
    from workflows.cluster.retries import CLOUD_RETRY, POLL_RETRY, SERVER_WAIT
    from workflows.cluster.stack_nodes import build_stack, destroy_stack, judge_stacks, update_stack
    from workflows.entity import failure_reason, record
    from workflows.search_attributes import show_final_status, warden_attributes

STEP_TIMEOUT = timedelta(minutes=5)
#: Each fence attempt already waits `node_delete_timeout` for confirmation.
FENCE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=3,
)


class NodeRecoveryInput(BaseModel):
    """One node and what to try on it."""

    project_id: str
    cluster_id: str
    cluster_name: str
    action_id: str
    node: NodeState
    steps: list[RecoveryStep]
    profile: dict[str, Any] = Field(default_factory=dict)
    #: The health policy's `detection` (JSON); None = verify by server status only.
    detection: dict[str, Any] | None = None
    fencing: bool = True
    node_delete_timeout: int = 20
    #: Create the replacement even when the old server could be neither deleted nor
    #: powered off (Senlin's `node_force_recreate`).
    node_force_recreate: bool = False


class ClusterRecoverInput(BaseModel):
    """Nodes to recover, each with its steps, at most `concurrency` at once."""

    project_id: str
    cluster_id: str
    cluster_name: str
    action_id: str
    nodes: list[NodeState]
    steps: dict[str, list[RecoveryStep]]
    profile: dict[str, Any] = Field(default_factory=dict)
    detection: dict[str, Any] | None = None
    fencing: bool = True
    node_delete_timeout: int = 20
    node_force_recreate: bool = False
    concurrency: int = 1
    #: Check `nodes` first; recover only those found unhealthy or marked unhealthy.
    check: bool = False
    #: The cluster's load-balancing policy: a node recreated leaves the pool at its old
    #: address and joins at its new one; one not in the pool joins (Senlin's
    #: `_process_recovery`).
    lb: LbBinding | None = None


@workflow.defn(name="ClusterRecoverWorkflow")
class ClusterRecoverWorkflow:
    """Recover several nodes, a bounded number at a time."""

    @workflow.run
    async def run(self, inp: ClusterRecoverInput) -> NodesOperationResult:
        gate = asyncio.Semaphore(max(1, inp.concurrency))

        async def one(node: NodeState) -> NodeState:
            async with gate:
                return await workflow.execute_child_workflow(
                    NodeRecoveryWorkflow.run,
                    NodeRecoveryInput(
                        project_id=inp.project_id,
                        cluster_id=inp.cluster_id,
                        cluster_name=inp.cluster_name,
                        action_id=inp.action_id,
                        node=node,
                        steps=inp.steps.get(node.node_id, []),
                        profile=inp.profile,
                        detection=inp.detection,
                        fencing=inp.fencing,
                        node_delete_timeout=inp.node_delete_timeout,
                        node_force_recreate=inp.node_force_recreate,
                    ),
                    id=ids.node_recovery(node.node_id, inp.action_id),
                    static_summary=f"recover node {node.name} of cluster {inp.cluster_name}",
                    static_details=f"Node `{node.node_id}`, server `{node.physical_id}`; "
                    f"parent action `{inp.action_id}`",
                    search_attributes=warden_attributes(
                        inp.project_id, "node-recover", inp.cluster_id, "RUNNING"
                    ),
                )

        checked = await self._checked(inp) if inp.check else inp.nodes
        failed = [n for n in checked if not inp.check or needs_recovery(n)]
        workflow.set_current_details(
            f"Recovering {len(failed)} node(s) of **{inp.cluster_name}**, "
            f"{inp.concurrency} at a time"
        )
        recovered = {n.node_id: n for n in await asyncio.gather(*(one(n) for n in failed))}
        if inp.lb is not None and recovered:
            recovered = await self._rejoined(inp, inp.lb, failed, recovered)
        nodes = [recovered.get(n.node_id, n) for n in checked]
        return finished(
            NodesOperationResult(
                nodes=nodes, error=summarize_errors(list(recovered.values()), "recover")
            )
        )

    @staticmethod
    async def _rejoined(
        inp: ClusterRecoverInput,
        lb: LbBinding,
        before: list[NodeState],
        recovered: dict[str, NodeState],
    ) -> dict[str, NodeState]:
        """Recovered nodes in the pool at their current server's address (recorded)."""
        servers = {n.node_id: n.physical_id for n in before}
        moved = [
            n
            for n in recovered.values()
            if LB_MEMBER in n.data and n.physical_id != servers.get(n.node_id)
        ]
        after = {n.node_id: n for n in await leave_pool(lb, moved)}
        nodes = [after.get(n.node_id, n) for n in recovered.values()]
        joined = await join_pool(lb, nodes, inp.action_id)
        await record_changed(inp, list(recovered.values()), joined, "NODE_RECOVER")
        return {n.node_id: n for n in joined}

    @staticmethod
    async def _checked(inp: ClusterRecoverInput) -> list[NodeState]:
        workflow.set_current_details(
            f"Checking {len(inp.nodes)} node(s) of **{inp.cluster_name}** before recovering"
        )
        return await check_nodes(
            NodesOperationInput(
                project_id=inp.project_id,
                cluster_id=inp.cluster_id,
                cluster_name=inp.cluster_name,
                action_id=inp.action_id,
                profile=inp.profile,
                nodes=inp.nodes,
            )
        )


def needs_recovery(checked: NodeState) -> bool:
    """After a check: the cloud says the node is unhealthy, or someone marked it so."""
    return checked.status != NodeStatus.ACTIVE or bool(checked.data.get(MARKED_UNHEALTHY))


@workflow.defn(name="NodeRecoveryWorkflow")
class NodeRecoveryWorkflow:
    """Try each step until the node is healthy again; ERROR with the reasons otherwise."""

    @workflow.run
    async def run(self, inp: NodeRecoveryInput) -> NodeState:
        node = with_status(inp.node, NodeStatus.RECOVERING, "Recovery in progress")
        await self._record(inp, node, "NODE_RECOVER", "Recovery started", EventLevel.INFO)
        failures: list[str] = []
        for number, step in enumerate(inp.steps, start=1):
            workflow.set_current_details(
                f"Node **{node.name}**: step {number}/{len(inp.steps)} `{step.name}`"
            )
            try:
                node = await self._run_step(inp, node, step, number)
                healthy, why = await self._verify(inp, node)
            except StepFailed as err:
                node, healthy, why = err.node or node, False, err.reason
            except (ActivityError, ChildWorkflowError) as err:
                healthy, why = False, failure_reason(err)
            if healthy:
                done = with_status(without_mark(node), NodeStatus.ACTIVE, "")
                await self._record(
                    inp,
                    done,
                    f"RECOVER_{step.name}",
                    f"Step {number} {step.name}: healthy again",
                    EventLevel.INFO,
                )
                show_final_status("SUCCEEDED")
                return done
            failures.append(f"{step.name}: {why}")
            await self._record(
                inp,
                node,
                f"RECOVER_{step.name}",
                f"Step {number} {step.name} failed: {why}",
                EventLevel.WARNING,
            )
        reason = "All recovery actions failed: " + "; ".join(failures)
        failed = with_status(node, NodeStatus.ERROR, reason[:1000])
        await self._record(inp, failed, "NODE_RECOVER", failed.status_reason, EventLevel.ERROR)
        show_final_status("FAILED")
        return failed

    async def _run_step(
        self, inp: NodeRecoveryInput, node: NodeState, step: RecoveryStep, number: int
    ) -> NodeState:
        if step.workflow:
            await self._user_workflow(inp, node, step, number)
            return node
        if stack_of(node) is not None or is_stack_profile(inp.profile):
            return await self._stack_step(inp, node, step)
        if step.name == "RECREATE":
            return await self._recreate(inp, node)
        if not node.physical_id:
            raise StepFailed(f"{step.name} needs a server and the node has none")
        reboot_type = RebootType(str(step.params.get("type", "SOFT")).upper())
        calls: dict[str, tuple[Any, Any]] = {
            "REBOOT": (
                RecoveryActivities.reboot_server,
                RebootRequest(physical_id=node.physical_id, type=reboot_type),
            ),
            "REBUILD": (
                RecoveryActivities.rebuild_server,
                RebuildRequest(physical_id=node.physical_id, image=_image(inp.profile)),
            ),
            "START": (RecoveryActivities.start_server, node.physical_id),
            "UNPAUSE": (RecoveryActivities.unpause_server, node.physical_id),
        }
        activity, arg = calls[step.name]
        await workflow.execute_activity_method(
            activity,
            arg,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=CLOUD_RETRY,
            summary=f"{step.name.lower()} {node.name}",
        )
        return node

    async def _stack_step(
        self, inp: NodeRecoveryInput, node: NodeState, step: RecoveryStep
    ) -> NodeState:
        """A stack node's step: STACK_UPDATE updates its stack in place, RECREATE
        deletes it and creates another (Senlin's `Profile.do_recover`)."""
        if step.name == "STACK_UPDATE":
            if stack_of(node) is None:
                raise StepFailed("STACK_UPDATE needs a stack and the node has none")
            await update_stack(node, inp.profile)
            return node
        if step.name != "RECREATE":
            raise StepFailed(
                f"{step.name} does not apply to a stack node: use STACK_UPDATE or RECREATE"
            )
        try:
            await destroy_stack(node)
        except ActivityError as err:
            if not inp.node_force_recreate:
                raise StepFailed(f"Deleting the old stack failed: {failure_reason(err)}") from None
            left = f"Old stack {node.physical_id} could not be deleted ({failure_reason(err)})"
            await self._record(inp, node, "RECOVER_RECREATE", left, EventLevel.WARNING)
        bare = node.model_copy(update={"physical_id": None, "data": without_stack(node.data)})
        rebuilt, failed = await build_stack(
            inp.profile, bare, request_id=f"{node.node_id}:{inp.action_id}",
            cluster_id=inp.cluster_id,
        )  # fmt: skip
        if failed is not None:
            raise StepFailed(failed, node=rebuilt)
        return rebuilt

    async def _recreate(self, inp: NodeRecoveryInput, node: NodeState) -> NodeState:
        # Before this patch a failed create, wait or delete left the node on its old
        # server and the replacement untracked: a leaked server at every recovery.
        adopts = workflow.patched("recreate-adopts-replacement")
        old = node.physical_id
        fenced = "DELETED"
        if old and inp.fencing:
            fenced = await self._fence(inp, node, old)
        stale = old if old and (not inp.fencing or fenced != "DELETED") else None
        request = server_request(
            inp.profile, inp.cluster_id, node, request_id=f"{node.node_id}:{inp.action_id}"
        )
        failed: str | None = None
        try:
            created: ServerInfo = await workflow.execute_activity_method(
                ComputeActivities.create_server,
                request,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=CLOUD_RETRY,
                summary=f"recreate server {node.name}",
            )
            node = node.model_copy(update={"physical_id": created.physical_id})
            await wait_until_active(created.physical_id, node.name)
        except ActivityError as err:
            if not adopts:
                raise
            failed = failure_reason(err)
            if node.physical_id == old:  # the create itself failed: did its last POST land?
                node = await adopt_lost_server(node, request)
        if stale and node.physical_id != old:
            # The node is on its replacement now, ready or not: the old server goes.
            await (
                self._delete_stale(inp, node, stale) if adopts else self._delete_server(node, stale)
            )
        if failed is not None:
            raise StepFailed(failed, node=node)
        return node

    async def _delete_server(self, node: NodeState, physical_id: str) -> None:
        await workflow.execute_activity_method(
            ComputeActivities.delete_server,
            physical_id,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=CLOUD_RETRY,
            summary=f"delete old server of {node.name}",
        )

    async def _delete_stale(self, inp: NodeRecoveryInput, node: NodeState, old: str) -> None:
        """Delete the server a RECREATE replaced; one the cloud refuses to delete (locked
        by an admin, say) is logged and left to the node's deletion, which removes every
        server made for the node."""
        try:
            await self._delete_server(node, old)
        except ActivityError as err:
            left = (
                f"Old server {old} could not be deleted ({failure_reason(err)}); "
                "it is deleted with the node"
            )
            await self._record(inp, node, "RECOVER_RECREATE", left, EventLevel.WARNING)

    async def _fence(self, inp: NodeRecoveryInput, node: NodeState, old: str) -> str:
        """Make sure the old server can't run: deleted, else powered off, both confirmed.

        Answers "DELETED", "SHUTOFF", or "UNFENCED" (only with `node_force_recreate`);
        otherwise a fence that can't be confirmed fails the step.
        """
        try:
            await self._fence_call(inp, node, old, delete=True)
            return "DELETED"
        except ActivityError as err:
            # Before this patch a failed delete failed the step at once.
            if not workflow.patched("fence-power-off-fallback"):
                raise
            delete_failed = failure_reason(err)
        try:
            await self._fence_call(inp, node, old, delete=False)
        except ActivityError as err:
            why = (
                f"Fencing server {old} failed: not deleted ({delete_failed}) "
                f"and not powered off ({failure_reason(err)})"
            )
            if not inp.node_force_recreate:
                # Not chained: failure_reason() would pick the cause's narrower message.
                raise StepFailed(why) from None
            forced = f"{why}; creating the replacement anyway (node_force_recreate)"
            await self._record(inp, node, "FENCE", forced, EventLevel.WARNING)
            return "UNFENCED"
        powered_off = (
            f"Server {old} could not be deleted ({delete_failed}); it is powered off "
            "and will be deleted once the replacement runs"
        )
        await self._record(inp, node, "FENCE", powered_off, EventLevel.WARNING)
        return "SHUTOFF"

    async def _fence_call(
        self, inp: NodeRecoveryInput, node: NodeState, old: str, *, delete: bool
    ) -> None:
        await workflow.execute_activity_method(
            RecoveryActivities.fence_server,
            FenceRequest(physical_id=old, delete=delete, timeout_s=inp.node_delete_timeout),
            start_to_close_timeout=timedelta(seconds=inp.node_delete_timeout + 30),
            heartbeat_timeout=timedelta(seconds=30),
            retry_policy=FENCE_RETRY,
            summary=f"fence {node.name}: {'delete' if delete else 'power off'} and confirm",
        )

    async def _user_workflow(
        self, inp: NodeRecoveryInput, node: NodeState, step: RecoveryStep, number: int
    ) -> None:
        params = expand_params(
            dict(step.params),
            {
                "physical_id": node.physical_id or "",
                "node_id": node.node_id,
                "name": node.name,
                "cluster_id": inp.cluster_id,
            },
        )
        queue = str(params.pop("task_queue", "") or workflow.info().task_queue)
        await workflow.execute_child_workflow(
            step.name,
            params,
            id=ids.node_recovery(node.node_id, inp.action_id, number),
            task_queue=queue,
            execution_timeout=STEP_TIMEOUT,
            static_summary=f"user recovery workflow {step.name} for {node.name}",
        )

    async def _verify(self, inp: NodeRecoveryInput, node: NodeState) -> tuple[bool, str]:
        if not node.physical_id:
            return False, "node has no server"
        if stack_of(node) is not None:
            verdict = (await judge_stacks([node])).get(node.node_id)
            if verdict is None or verdict.health is not StackHealth.HEALTHY:
                return False, verdict.reason if verdict else "node has no stack"
            return await self._probe(inp, node)
        status = await workflow.execute_activity_method(
            RecoveryActivities.wait_server_healthy,
            node.physical_id,
            start_to_close_timeout=timedelta(seconds=30),
            schedule_to_close_timeout=SERVER_WAIT,
            retry_policy=POLL_RETRY,
            summary=f"wait for {node.name} to settle",
        )
        if status != "ACTIVE":
            return False, f"server status is {status}"
        return await self._probe(inp, node)

    async def _probe(self, inp: NodeRecoveryInput, node: NodeState) -> tuple[bool, str]:
        """The health policy's own detection says the node is healthy (none: it is)."""
        if not inp.detection:
            return True, ""
        result = await workflow.execute_activity_method(
            HealthActivities.probe_nodes,
            ProbeRequest(
                cluster_id=inp.cluster_id,
                detection=inp.detection,
                targets=[probe_target(node)],
            ),
            start_to_close_timeout=timedelta(minutes=2),
            heartbeat_timeout=timedelta(seconds=60),
            retry_policy=CLOUD_RETRY,
            summary=f"probe {node.name}",
        )
        probe = result.probes[0] if result.probes else None
        if probe is None or probe.state == ProbeState.UNHEALTHY:
            return False, probe.reason if probe else "no probe result"
        return True, ""

    async def _record(
        self, inp: NodeRecoveryInput, node: NodeState, action: str, reason: str, level: EventLevel
    ) -> None:
        await record(
            ChangeSet(
                nodes=[node_snapshot(inp.project_id, inp.cluster_id, node)],
                events=[
                    node_event(
                        event_id=str(workflow.uuid4()),
                        at=workflow.now(),
                        project_id=inp.project_id,
                        cluster_id=inp.cluster_id,
                        node_id=node.node_id,
                        node_name=node.name,
                        action=action,
                        status=node.status.value,
                        reason=reason,
                        level=level,
                        action_id=inp.action_id,
                    )
                ],
            ),
            summary=f"record {action.lower()} of {node.name}",
        )


class StepFailed(Exception):
    """A step that failed; `node` is the node as the step left it (a RECREATE's node is
    on its replacement even when that never became ACTIVE). Caught by the step loop."""

    def __init__(self, reason: str, node: NodeState | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.node = node


def _image(profile: dict[str, Any]) -> str | None:
    image = profile.get("properties", {}).get("image")
    return str(image) if image else None
