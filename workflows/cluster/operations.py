"""Child workflows that carry out a cluster's long operations on its nodes."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.compute import ComputeActivities
    from activities.nodes import NodeActivities
    from domain.cluster.nodes import NodeState, NodeStatus, node_status_from_server
    from domain.cluster.placement import server_group_of, zone_of
    from domain.cluster.policies.loadbalance import LbBinding
    from domain.cluster.profiles import block_devices, network_requests, nova_metadata
    from domain.cluster.stack_calls import node_status_from_stack, stack_of
    from domain.cluster.stack_profile import is_stack_profile
    from domain.cluster.state import AttachedPolicy
    from domain.events import node_event
    from domain.projection import ChangeSet, NodeRemoval, NodeSnapshot
    from domain.servers import CLUSTER_KEY, NODE_KEY, ServerRequest
    from workflows.cluster.lb_members import delete_lb, join_pool, leave_pool
    from workflows.cluster.retries import CLOUD_RETRY, POLL_RETRY, REMOVE_TIMEOUT, SERVER_WAIT
    from workflows.cluster.stack_nodes import build_stack, destroy_stack, judge_stacks
    from workflows.entity import failure_reason, record
    from workflows.search_attributes import show_final_status

#: Nodes handled at once; keeps pending activities far below Temporal's 2,000.
BATCH_SIZE = 100


class NodesOperationInput(BaseModel):
    """What a node operation needs: no database reads inside workflows."""

    project_id: str
    cluster_id: str
    cluster_name: str
    action_id: str
    profile: dict[str, Any] = Field(default_factory=dict)
    nodes: list[NodeState]
    #: The cluster's load-balancing policy: new nodes join its pool; a cluster delete
    #: deletes its load balancer (Senlin detaches every policy first).
    lb: LbBinding | None = None


class NodesOperationResult(BaseModel):
    """The nodes the operation touched as it left them, those it removed, and any error."""

    nodes: list[NodeState]
    removed: list[str] = Field(default_factory=list)
    error: str = ""
    #: The binding a policy attach made (with what it made) or a detach removed.
    policy: AttachedPolicy | None = None


def node_snapshot(project_id: str, cluster_id: str, node: NodeState) -> NodeSnapshot:
    """The database row of a node."""
    return NodeSnapshot(
        node_id=node.node_id,
        project_id=project_id,
        cluster_id=cluster_id,
        name=node.name,
        index=node.index,
        profile_id=node.profile_id,
        physical_id=node.physical_id,
        status=node.status.value,
        status_reason=node.status_reason,
        data=node.data,
        role=node.role,
        metadata=node.metadata,
        created_at=node.created_at,
        updated_at=node.updated_at,
    )


def with_status(node: NodeState, status: NodeStatus, reason: str = "", **changes: Any) -> NodeState:
    """A copy of the node with a new status, stamped with workflow time."""
    return node.model_copy(
        update={"status": status, "status_reason": reason, "updated_at": workflow.now(), **changes}
    )


async def record_nodes(inp: NodesOperationInput, nodes: list[NodeState], action: str) -> None:
    """Project a batch of node transitions in one write."""
    await record(
        ChangeSet(
            nodes=[node_snapshot(inp.project_id, inp.cluster_id, n) for n in nodes],
            events=[
                node_event(
                    event_id=str(workflow.uuid4()),
                    at=workflow.now(),
                    project_id=inp.project_id,
                    cluster_id=inp.cluster_id,
                    node_id=n.node_id,
                    node_name=n.name,
                    action=action,
                    status=n.status.value,
                    reason=n.status_reason,
                    action_id=inp.action_id,
                )
                for n in nodes
            ],
        ),
        summary=f"record {len(nodes)} node(s)",
    )


def changed_nodes(before: list[NodeState], after: list[NodeState]) -> list[NodeState]:
    """The nodes of `after` that differ from their place in `before` (same order)."""
    return [new for new, old in zip(after, before, strict=True) if new != old]


async def record_changed(
    where: Any, before: list[NodeState], after: list[NodeState], action: str
) -> None:
    """Record the nodes an operation changed, if any; `where` is any operation input with
    the cluster's `project_id`, `cluster_id`, `cluster_name` and `action_id`."""
    changed = changed_nodes(before, after)
    if changed:
        ids = NodesOperationInput(
            project_id=where.project_id,
            cluster_id=where.cluster_id,
            cluster_name=where.cluster_name,
            action_id=where.action_id,
            nodes=[],
        )
        await record_nodes(ids, changed, action)


def batches(nodes: list[NodeState]) -> list[list[NodeState]]:
    """Split nodes into fan-out batches."""
    return [nodes[i : i + BATCH_SIZE] for i in range(0, len(nodes), BATCH_SIZE)]


def summarize_errors(nodes: list[NodeState], verb: str) -> str:
    """One line naming the nodes that failed, empty when none did."""
    failed = [n for n in nodes if n.status == NodeStatus.ERROR]
    if not failed:
        return ""
    names = ", ".join(n.name for n in failed[:5]) + (" …" if len(failed) > 5 else "")
    return f"Failed to {verb} {len(failed)} node(s): {names}. {failed[0].status_reason}"


def finished(result: NodesOperationResult) -> NodesOperationResult:
    """Show how the operation ended in `WardenStatus`, then answer its result."""
    show_final_status("FAILED" if result.error else "SUCCEEDED")
    return result


@workflow.defn(name="ClusterCreateWorkflow")
class ClusterCreateWorkflow:
    """Create every node's server in parallel and wait for them to be ACTIVE."""

    @workflow.run
    async def run(self, inp: NodesOperationInput) -> NodesOperationResult:
        done: list[NodeState] = []
        for batch in batches(inp.nodes):
            workflow.set_current_details(
                f"Creating nodes {len(done) + 1}-{len(done) + len(batch)} of "
                f"{len(inp.nodes)} in cluster **{inp.cluster_name}**"
            )
            what = "Creating stack" if is_stack_profile(inp.profile) else "Creating server"
            creating = [with_status(n, NodeStatus.CREATING, what) for n in batch]
            await record_nodes(inp, creating, "NODE_CREATE")
            results = await asyncio.gather(*(self._create(inp, n) for n in creating))
            await record_nodes(inp, list(results), "NODE_CREATE")
            done.extend(results)
        if inp.lb is not None:
            joined = await join_pool(inp.lb, done, inp.action_id)
            await record_changed(inp, done, joined, "NODE_CREATE")
            done = joined
        return finished(NodesOperationResult(nodes=done, error=summarize_errors(done, "create")))

    async def _create(self, inp: NodesOperationInput, node: NodeState) -> NodeState:
        if is_stack_profile(inp.profile):
            node, failed = await build_stack(
                inp.profile, node, request_id=node.node_id, cluster_id=inp.cluster_id
            )
            if failed is not None:
                return with_status(node, NodeStatus.ERROR, failed)
            return with_status(node, NodeStatus.ACTIVE)
        request = server_request(inp.profile, inp.cluster_id, node, request_id=node.node_id)
        try:
            created = await workflow.execute_activity_method(
                ComputeActivities.create_server,
                request,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=CLOUD_RETRY,
                summary=f"create server {node.name}",
            )
            node = node.model_copy(update={"physical_id": created.physical_id})
            await wait_until_active(created.physical_id, node.name)
        except ActivityError as err:
            if node.physical_id is None and workflow.patched("adopt-after-failed-create"):
                node = await adopt_lost_server(node, request)
            return with_status(node, NodeStatus.ERROR, failure_reason(err))
        return with_status(node, NodeStatus.ACTIVE)


async def adopt_lost_server(node: NodeState, request: ServerRequest) -> NodeState:
    """After every create attempt failed, the server the last one made (its answer lost).

    The node then names it, in ERROR: deleting or recovering the node deals with the
    server, instead of leaving it an orphan no node refers to.
    """
    try:
        found = await workflow.execute_activity_method(
            ComputeActivities.find_created_server,
            request,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=CLOUD_RETRY,
            summary=f"look for the server a failed create of {node.name} made",
        )
    except ActivityError:
        return node
    return node if found is None else node.model_copy(update={"physical_id": found.physical_id})


def server_request(
    profile: dict[str, Any], cluster_id: str, node: NodeState, *, request_id: str
) -> ServerRequest:
    """The server a node runs on, from its profile, as Senlin's `ServerProfile.do_create`
    asks Nova for it; tagged so it can be traced back.

    Unlike Senlin, a profile's `name` is not the server's: a server is always named after
    its node (`{nodename}` URLs and the search for a lost create rely on it).
    """
    props = profile.get("properties", {})
    return ServerRequest(
        name=node.name,
        image=props.get("image") or None,
        flavor=str(props.get("flavor", "")),
        metadata={
            **nova_metadata(props.get("metadata")),
            CLUSTER_KEY: cluster_id,
            NODE_KEY: node.node_id,
        },
        request_id=request_id,
        networks=network_requests(props.get("networks")),
        key_name=props.get("key_name") or None,
        user_data=props.get("user_data"),
        # A zone placement policy's zone wins over the profile's, as in Senlin.
        availability_zone=zone_of(node) or props.get("availability_zone") or None,
        security_groups=tuple(str(group) for group in props.get("security_groups") or ()),
        # An affinity policy's server group wins over the profile's hint, as in Senlin.
        scheduler_hints=dict(props.get("scheduler_hints") or {})
        | ({"group": group} if (group := server_group_of(node)) else {}),
        block_device_mapping_v2=block_devices(props.get("block_device_mapping_v2")),
        config_drive=props.get("config_drive"),
        admin_pass=props.get("admin_pass") or None,
    )


async def wait_until_active(physical_id: str, name: str) -> None:
    """Poll (by activity retries: no history per attempt) until the server is ACTIVE."""
    await workflow.execute_activity_method(
        ComputeActivities.wait_server_active,
        physical_id,
        start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=SERVER_WAIT,
        retry_policy=POLL_RETRY,
        summary=f"wait for {name} ACTIVE",
    )


@workflow.defn(name="ClusterCheckWorkflow")
class ClusterCheckWorkflow:
    """Refresh every node's status from the compute API in one batched call."""

    @workflow.run
    async def run(self, inp: NodesOperationInput) -> NodesOperationResult:
        workflow.set_current_details(f"Checking {len(inp.nodes)} node(s) of **{inp.cluster_name}**")
        checked = await check_nodes(inp)
        return finished(
            NodesOperationResult(nodes=checked, error=summarize_errors(checked, "check"))
        )


async def check_nodes(inp: NodesOperationInput) -> list[NodeState]:
    """`inp.nodes` with their status refreshed from the compute API in one batched call;
    the nodes whose status changed are recorded (NODE_CHECK).

    A stack node is judged by its stack's status and its resources' (one marked
    unhealthy is CHECK_FAILED). Unlike Senlin, Warden runs no Heat stack check: a check
    that passed would clear the mark someone set on purpose.
    """
    stacks = [n for n in inp.nodes if stack_of(n) is not None]
    verdicts = await judge_stacks(stacks) if stacks else {}
    ids = [n.physical_id for n in inp.nodes if n.physical_id and stack_of(n) is None]
    statuses: dict[str, str | None] = {}
    if ids:
        result = await workflow.execute_activity_method(
            ComputeActivities.get_server_statuses,
            ids,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=CLOUD_RETRY,
            summary=f"check {len(ids)} server(s)",
        )
        statuses = result.statuses
    checked: list[NodeState] = []
    for node in inp.nodes:
        if stack_of(node) is not None or is_stack_profile(inp.profile):
            status, reason = node_status_from_stack(verdicts.get(node.node_id))
        else:
            status, reason = node_status_from_server(
                statuses.get(node.physical_id) if node.physical_id else None
            )
        checked.append(with_status(node, status, reason))
    changed = [
        new
        for new, old in zip(checked, inp.nodes, strict=True)
        if (new.status, new.status_reason) != (old.status, old.status_reason)
    ]
    if changed:
        await record_nodes(inp, changed, "NODE_CHECK")
    return checked


@workflow.defn(name="ClusterDeleteWorkflow")
class ClusterDeleteWorkflow:
    """Delete every node's server in parallel and wait until each is gone."""

    @workflow.run
    async def run(self, inp: NodesOperationInput) -> NodesOperationResult:
        remaining: list[NodeState] = []
        if inp.lb is not None and inp.lb.resources is not None:
            lb_error = await self._delete_lb(inp, inp.lb)
            if lb_error:
                return finished(NodesOperationResult(nodes=[], error=lb_error))
        for batch in batches(inp.nodes):
            workflow.set_current_details(
                f"Deleting {len(inp.nodes)} node(s) of **{inp.cluster_name}**"
            )
            deleting = [with_status(n, NodeStatus.DELETING, "Deleting server") for n in batch]
            await record_nodes(inp, deleting, "NODE_DELETE")
            results = await asyncio.gather(*(self._delete(n) for n in deleting))
            failed = [n for n in results if n is not None]
            if failed:
                await record_nodes(inp, failed, "NODE_DELETE")
            remaining.extend(failed)
        return finished(
            NodesOperationResult(nodes=remaining, error=summarize_errors(remaining, "delete"))
        )

    async def _delete(self, node: NodeState) -> NodeState | None:
        if workflow.patched("cluster-delete-removes-every-node-server"):
            # Before this patch only the server the node named was deleted: one a
            # RECREATE could not delete, or a create's late duplicate, outlived the cluster.
            return await self._remove(node)
        if not node.physical_id:
            return None
        try:
            await workflow.execute_activity_method(
                ComputeActivities.delete_server,
                node.physical_id,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=CLOUD_RETRY,
                summary=f"delete server {node.name}",
            )
            await workflow.execute_activity_method(
                ComputeActivities.wait_server_deleted,
                node.physical_id,
                start_to_close_timeout=timedelta(seconds=30),
                schedule_to_close_timeout=SERVER_WAIT,
                retry_policy=POLL_RETRY,
                summary=f"wait for {node.name} gone",
            )
        except ActivityError as err:
            return with_status(node, NodeStatus.ERROR, failure_reason(err))
        return None

    @staticmethod
    async def _delete_lb(inp: NodesOperationInput, lb: LbBinding) -> str:
        """Senlin's cluster delete detaches its policies first: the load balancer an
        attach made goes; the members of a load balancer the policy named leave it."""
        made = lb.resources
        if made is None:
            return ""
        if made.preexisting:  # members leave; one that cannot does not stop the delete
            await leave_pool(lb, inp.nodes)
            return ""
        workflow.set_current_details(f"Deleting the load balancer of **{inp.cluster_name}**")
        try:
            await delete_lb(made, lb.timeout_s)
        except ActivityError as err:
            return f"Unable to detach policy {lb.policy_id} before deletion: {failure_reason(err)}"
        return ""

    @staticmethod
    async def _remove(node: NodeState) -> NodeState | None:
        if stack_of(node) is not None:
            try:
                await destroy_stack(node)
            except ActivityError as err:
                return with_status(node, NodeStatus.ERROR, failure_reason(err))
            return None
        removal = NodeRemoval(
            node_id=node.node_id, name=node.name, physical_id=node.physical_id, changes=ChangeSet()
        )
        try:
            await workflow.execute_activity_method(
                NodeActivities.remove_node,
                removal,
                start_to_close_timeout=REMOVE_TIMEOUT,
                heartbeat_timeout=timedelta(seconds=30),
                retry_policy=CLOUD_RETRY,
                summary=f"delete the servers of {node.name}",
            )
        except ActivityError as err:
            return with_status(node, NodeStatus.ERROR, failure_reason(err))
        return None
