"""ClusterWorkflow: the entity workflow of one cluster (`cluster:{cluster_id}`).

Its operations are declared in `ClusterOperations` (`workflows/cluster/messages.py`);
each line below binds one to the body that carries it out (`workflows/cluster/spine.py`),
deriving the Temporal update, its validator and, where declared, the signal twin.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from domain.cluster import transitions
    from domain.cluster.state import ClusterState
    from domain.projection import ChangeSet, cluster_snapshot
    from workflows.cluster.messages import ClusterInput
    from workflows.cluster.messages import ClusterOperations as Ops
    from workflows.cluster.spine import ClusterSpine
    from workflows.entity import record
    from workflows.spine import update_and_signal, update_handler

# Kept importable from here: the API, tests and benchmarks start clusters with it.
__all__ = ["ClusterInput", "ClusterWorkflow"]


@workflow.defn(name="ClusterWorkflow")
class ClusterWorkflow(ClusterSpine):
    """Owns a cluster's state; serialises its operations; is its lock."""

    # ---- operations: one line each (how to add one: docs/ARCHITECTURE.md) ----
    create = update_handler(Ops.create, ClusterSpine.accept)
    check, check_signal = update_and_signal(Ops.check, ClusterSpine.accept)
    check_node, check_node_signal = update_and_signal(Ops.check_node, ClusterSpine.accept)
    update, update_signal = update_and_signal(Ops.update, ClusterSpine.accept)
    delete, delete_signal = update_and_signal(Ops.delete, ClusterSpine.accept)
    scale_out, scale_out_signal = update_and_signal(Ops.scale_out, ClusterSpine.accept)
    scale_in, scale_in_signal = update_and_signal(Ops.scale_in, ClusterSpine.accept)
    resize, resize_signal = update_and_signal(Ops.resize, ClusterSpine.accept)
    del_nodes, del_nodes_signal = update_and_signal(Ops.del_nodes, ClusterSpine.accept)
    replace_nodes, replace_nodes_signal = update_and_signal(Ops.replace_nodes, ClusterSpine.accept)
    operation, operation_signal = update_and_signal(Ops.operation, ClusterSpine.accept)
    node_operation, node_operation_signal = update_and_signal(
        Ops.node_operation, ClusterSpine.accept
    )
    create_node, create_node_signal = update_and_signal(Ops.create_node, ClusterSpine.accept)
    add_nodes, add_nodes_signal = update_and_signal(Ops.add_nodes, ClusterSpine.accept)
    delete_node, delete_node_signal = update_and_signal(Ops.delete_node, ClusterSpine.accept)
    recover, recover_signal = update_and_signal(Ops.recover, ClusterSpine.accept)
    policy_attach, policy_attach_signal = update_and_signal(Ops.policy_attach, ClusterSpine.attach)
    policy_detach, policy_detach_signal = update_and_signal(Ops.policy_detach, ClusterSpine.detach)
    update_properties, update_properties_signal = update_and_signal(
        Ops.update_properties, ClusterSpine.change_properties
    )
    policy_update, policy_update_signal = update_and_signal(Ops.policy_update, ClusterSpine.rebind)
    mark_unhealthy, mark_unhealthy_signal = update_and_signal(Ops.mark_unhealthy, ClusterSpine.mark)
    lock, lock_signal = update_and_signal(Ops.lock, ClusterSpine.enter_maintenance)
    unlock, unlock_signal = update_and_signal(Ops.unlock, ClusterSpine.leave_maintenance)

    @workflow.init
    def __init__(self, inp: ClusterInput) -> None:
        self._setup(inp)

    @workflow.run
    async def run(self, inp: ClusterInput) -> ClusterState:
        await self._serve()
        return self.state

    @workflow.signal(name="health_report")
    async def health_report(self, warning: str) -> None:
        """The health manager's verdict: a warning (WARNING status) or all clear."""
        async with self.mutex:
            takes_verdict = transitions.takes_health_verdict(self.state)
            self.state = transitions.with_health_verdict(self.state, warning)
            if takes_verdict:
                await record(
                    ChangeSet(clusters=[cluster_snapshot(self.state, workflow.now())]),
                    summary="record health verdict",
                )
            self._show()

    @workflow.query(name="describe")
    def describe(self) -> ClusterState:
        """The cluster as this workflow knows it (needs a running worker)."""
        return self.state
