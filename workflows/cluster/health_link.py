"""How a cluster's entity workflow keeps its health manager informed.

The health manager (`health:{cluster_id}`) is started, not run as a child: it must
not pin the cluster workflow's run, and it outlives continue-as-new
(docs/api-contract.md §Orchestration). The cluster tells it of every change with a signal; the
manager answers with a `health_report` signal (`ClusterWorkflow.health_report`).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import FailureError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from domain.cluster.health import HealthView, probe_target
    from domain.cluster.membership import health_policy
    from domain.cluster.nodes import MARKED_UNHEALTHY
    from domain.cluster.policies.loadbalance import lb_binding
    from domain.cluster.requests import OperationAccepted
    from domain.cluster.state import AttachedPolicy, ClusterState, ClusterStatus, RunningOperation
    from workflows import ids
    from workflows.cluster.records import show
    from workflows.health.manager import HealthManagerInput, HealthManagerWorkflow
    from workflows.search_attributes import warden_attributes
    from workflows.spine import EntityWorkflow


class ClusterHealthLink(EntityWorkflow[ClusterState, RunningOperation, OperationAccepted]):
    """Starts, informs and stops the cluster's health manager."""

    async def _start_health_manager(self, policy: AttachedPolicy) -> None:
        spec = self.state.spec
        try:
            await workflow.start_child_workflow(
                HealthManagerWorkflow.run,
                HealthManagerInput(
                    project_id=spec.project_id,
                    cluster_id=spec.cluster_id,
                    cluster_name=spec.name,
                    policy_id=policy.policy_id,
                    properties=policy.properties,
                    view=self._health_view(),
                ),
                id=ids.health_manager(spec.cluster_id),
                parent_close_policy=ParentClosePolicy.ABANDON,
                static_summary=f"health of cluster {spec.name}",
                static_details=f"Health policy `{policy.name}` of cluster `{spec.cluster_id}`",
                search_attributes=warden_attributes(
                    spec.project_id, "health", spec.cluster_id, "RUNNING"
                ),
            )
        except WorkflowAlreadyStartedError:
            await self._signal_health("cluster_changed", self._health_view())

    def _health_view(self) -> HealthView:
        s = self.state
        return HealthView(
            targets=[probe_target(n) for n in s.nodes],
            node_status={n.node_id: n.status.value for n in s.nodes},
            updated_at={n.node_id: n.created_at for n in s.nodes},
            marked=[n.node_id for n in s.nodes if n.data.get(MARKED_UNHEALTHY)],
            paused=s.busy is not None,
            locked=s.lock is not None,
            lb_pool=lb.resources.pool if (lb := lb_binding(s.policies)) and lb.resources else None,
        )

    async def _signal_health(self, name: str, arg: HealthView | None = None) -> None:
        handle = workflow.get_external_workflow_handle(
            ids.health_manager(self.state.spec.cluster_id)
        )
        try:
            await (handle.signal(name) if arg is None else handle.signal(name, arg))
        except FailureError as err:
            workflow.logger.info("health manager not told %s: %s", name, err)

    async def _changed(self) -> None:
        """Show the new state in the UI and tell the health manager, if one watches."""
        self._show()
        if health_policy(self.state) is not None:
            if self.state.deleted or (
                self.state.status == ClusterStatus.DELETING and self.state.busy is None
            ):
                await self._signal_health("stop")
            else:
                await self._signal_health("cluster_changed", self._health_view())

    def _show(self) -> None:
        """Keep the UI's current details and WardenStatus true."""
        show(self.state)
