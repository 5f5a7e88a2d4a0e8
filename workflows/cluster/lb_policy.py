"""Attaching and detaching a load-balancing policy: long operations, as in Senlin.

Attach makes the load balancer (or finds the one named) and makes every node a
member; a node that cannot join fails the attach, which then removes what it made
(Senlin's `LoadBalancingPolicy.attach`). Detach deletes what the attach made, or only
the members of a pool that existed before. Either answers the binding as it now is.
"""

from __future__ import annotations

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from domain.cluster.nodes import NodeState
    from domain.cluster.policies.loadbalance import (
        LB_MEMBER,
        LbBinding,
        binding_of,
        with_member,
    )
    from domain.cluster.state import AttachedPolicy
    from domain.errors import InvalidRequest
    from workflows.cluster.lb_members import ADD_FAILED, create_lb, delete_lb, join_pool, leave_pool
    from workflows.cluster.operations import (
        NodesOperationInput,
        NodesOperationResult,
        changed_nodes,
        finished,
        record_nodes,
    )
    from workflows.entity import failure_reason


class LbPolicyInput(BaseModel):
    """The cluster's nodes and the binding being attached or detached."""

    base: NodesOperationInput
    policy: AttachedPolicy


@workflow.defn(name="LbPolicyAttachWorkflow")
class LbPolicyAttachWorkflow:
    """Make the load balancer and put every node in its pool."""

    @workflow.run
    async def run(self, inp: LbPolicyInput) -> NodesOperationResult:
        base, bound = inp.base, inp.policy
        workflow.set_current_details(
            f"Making the load balancer of **{base.cluster_name}** and adding "
            f"{len(base.nodes)} node(s) to its pool"
        )
        binding = binding_of(bound)
        try:
            made = await create_lb(binding.properties, base.cluster_name, base.action_id)
        except InvalidRequest as err:
            return finished(NodesOperationResult(nodes=[], error=err.message))
        except ActivityError as err:
            reason = f"Failed in creating loadbalancer: {failure_reason(err)}"
            return finished(NodesOperationResult(nodes=[], error=reason))
        binding = binding.model_copy(update={"resources": made})
        nodes = await join_pool(binding, base.nodes, base.action_id)
        if any(n.status != o.status for n, o in zip(nodes, base.nodes, strict=True)):
            return finished(await self._undone(base, binding, nodes))
        changed = changed_nodes(base.nodes, nodes)
        if changed:
            await record_nodes(base, changed, "CLUSTER_ATTACH_POLICY")
        attached = bound.model_copy(update={"data": made.model_dump(mode="json")})
        return finished(NodesOperationResult(nodes=changed, policy=attached))

    @staticmethod
    async def _undone(
        base: NodesOperationInput, binding: LbBinding, nodes: list[NodeState]
    ) -> NodesOperationResult:
        """A node could not join: the others leave, what was made goes, nodes unchanged."""
        failed = next(n for n, o in zip(nodes, base.nodes, strict=True) if n.status != o.status)
        joined = [n for n, o in zip(nodes, base.nodes, strict=True) if n.data != o.data]
        made = binding.resources
        assert made is not None
        try:
            if made.preexisting:
                await leave_pool(binding, joined)
            else:
                await delete_lb(made, binding.timeout_s)
        except ActivityError as err:
            workflow.logger.warning("undoing a failed LB attach: %s", failure_reason(err))
        reason = failed.status_reason.removeprefix(ADD_FAILED).strip()
        return NodesOperationResult(nodes=[], error=f"{ADD_FAILED} {failed.name}: {reason}")


@workflow.defn(name="LbPolicyDetachWorkflow")
class LbPolicyDetachWorkflow:
    """Delete the load balancer the attach made, or take the nodes out of the pool."""

    @workflow.run
    async def run(self, inp: LbPolicyInput) -> NodesOperationResult:
        base, binding = inp.base, binding_of(inp.policy)
        made = binding.resources
        workflow.set_current_details(f"Removing the load balancing of **{base.cluster_name}**")
        nodes = base.nodes
        try:
            if made is not None and made.preexisting:
                nodes = await leave_pool(binding, base.nodes)
            elif made is not None:
                await delete_lb(made, binding.timeout_s)
                nodes = [n.model_copy(update={"data": with_member(n.data, None)}) for n in nodes]
        except ActivityError as err:
            reason = f"Failed in deleting the load balancer: {failure_reason(err)}"
            return finished(NodesOperationResult(nodes=[], error=reason))
        changed = changed_nodes(base.nodes, nodes)
        if changed:
            await record_nodes(base, changed, "CLUSTER_DETACH_POLICY")
        if any(LB_MEMBER in n.data for n in nodes):
            error = "Failed to remove servers from existed LB."
            return finished(NodesOperationResult(nodes=changed, error=error))
        return finished(NodesOperationResult(nodes=changed, policy=inp.policy))
