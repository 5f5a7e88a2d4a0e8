"""HealthManagerWorkflow (`health:{cluster_id}`): watch a cluster, ask it to recover nodes.

A durable loop at the policy's `interval`: one batched `probe_nodes` activity for
all nodes (or, with LIFECYCLE_EVENTS, the notifications signalled in), then the
pure rules of `domain.cluster.health` decide under the safety envelope, and the cluster
gets a `recover` signal: the cluster workflow stays the only owner of its nodes.
Started by the cluster with parent close policy ABANDON, so it outlives the
cluster workflow's continue-as-new; it continues as new itself.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.exceptions import ActivityError, FailureError

with workflow.unsafe.imports_passed_through():
    from activities.health import HealthActivities
    from domain.cluster.health import (
        EVENT_HINTS,
        Assessment,
        HealthView,
        NodeHealth,
        NodeProbe,
        ProbeRequest,
        ProbeResult,
        ProbeState,
        choose_recoveries,
        detection_with_pool,
        judge,
    )
    from domain.cluster.policies.health import DetectionType, HealthPolicyProperties
    from domain.cluster.requests import ClusterOperationRequest
    from domain.events import Event, EventLevel, node_event
    from domain.projection import ChangeSet
    from workflows import ids
    from workflows.cluster.retries import CLOUD_RETRY
    from workflows.entity import continue_as_new_due, failure_reason, record
    from workflows.health.messages import HealthSummary, LifecycleEvent, RecoveryRecord

HISTORY_KEPT = 50


class HealthManagerInput(BaseModel):
    """Everything the loop knows; carried across continue-as-new."""

    project_id: str
    cluster_id: str
    cluster_name: str
    policy_id: str
    properties: dict[str, object]
    view: HealthView
    nodes: dict[str, NodeHealth] = Field(default_factory=dict)
    recoveries: list[RecoveryRecord] = Field(default_factory=list)
    events: list[LifecycleEvent] = Field(default_factory=list)
    warning: str = ""
    history_limit: int | None = None


@workflow.defn(name="HealthManagerWorkflow")
class HealthManagerWorkflow:
    """Detect failed nodes of one cluster and have them recovered, safely."""

    @workflow.init
    def __init__(self, inp: HealthManagerInput) -> None:
        self.inp = inp
        self.props = HealthPolicyProperties.model_validate(inp.properties)
        self.view = inp.view
        self.nodes = dict(inp.nodes)
        self.recoveries = list(inp.recoveries)
        self.events = list(inp.events)
        self.warning = inp.warning
        self.stopped = False
        self.kick = False
        self.last_round: datetime | None = None

    @workflow.run
    async def run(self, inp: HealthManagerInput) -> None:
        interval = timedelta(seconds=self.props.detection.interval)
        next_round = workflow.now() + interval
        while not self.stopped:
            self._show()
            # Rounds start every `interval`, not `interval` after the last one ended.
            wait = max(next_round - workflow.now(), timedelta(seconds=1))
            with contextlib.suppress(TimeoutError):  # the interval passed: probe
                await workflow.wait_condition(
                    lambda: self.stopped or self.kick, timeout=wait, timeout_summary="interval"
                )
            next_round = max(next_round + interval, workflow.now())
            self.kick = False
            if self.stopped:
                break
            if not (self.view.paused or self.view.locked):
                await self._round()
            if continue_as_new_due(inp.history_limit):
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._carry_over())

    # ---- signals from the cluster workflow and the API ----

    @workflow.signal(name="cluster_changed")
    def cluster_changed(self, view: HealthView) -> None:
        """The cluster's nodes, marks, lock or busy state changed."""
        newly_marked = set(view.marked) - set(self.view.marked)
        if not view.paused:
            # The recover operation we asked for (if any) is over.
            self.nodes = {k: _after_recovery(v, view) for k, v in self.nodes.items()}
        self.view = view
        if (newly_marked or self.events) and not (view.paused or view.locked):
            self.kick = True  # marks, and events that arrived while paused, act now

    @workflow.signal(name="lifecycle_event")
    def lifecycle_event(self, event: LifecycleEvent) -> None:
        """A notification for LIFECYCLE_EVENTS detection: act at once."""
        self.events.append(event)
        del self.events[:-1000]
        self.kick = True

    @workflow.signal(name="stop")
    def stop(self) -> None:
        """The policy was detached or the cluster deleted."""
        self.stopped = True

    @workflow.query(name="describe")
    def describe(self) -> HealthSummary:
        """Per-node state, last probe results and the recovery history."""
        return HealthSummary(
            cluster_id=self.inp.cluster_id,
            paused=self.view.paused,
            locked=self.view.locked,
            warning=self.warning,
            last_round=self.last_round,
            nodes=sorted(self.nodes.values(), key=lambda n: n.name),
            recoveries=self.recoveries,
        )

    # ---- one round ----

    async def _round(self) -> None:
        now = workflow.now()
        self.last_round = now
        result = await self._detect()
        probes = {p.node_id: p for p in result.probes}
        before = {k: (v.state, v.reason) for k, v in self.nodes.items()}
        live = {t.node_id for t in self.view.targets}
        self.nodes = {
            t.node_id: judge(
                self.nodes.get(t.node_id),
                t,
                probes.get(t.node_id),
                self.view,
                warm_up_s=self.props.detection.node_update_timeout,
                now=now,
            )
            for t in self.view.targets
        }
        decision = choose_recoveries(
            {k: v for k, v in self.nodes.items() if k in live},
            max_unhealthy=self.props.max_unhealthy_count(len(live)),
            max_concurrent=self.props.max_concurrent(len(live)),
            retry_limit=self.props.recovery.node_retry_limit,
            backoff_s=self.props.recovery.retry_backoff,
            now=now,
        )
        if result.cloud_error and not decision.recover:
            decision = decision.model_copy(
                update={"warning": f"Health probes inconclusive: {result.cloud_error}"}
            )
        self.nodes = decision.nodes
        changed = [k for k, v in self.nodes.items() if before.get(k) != (v.state, v.reason)]
        await self._report(decision, changed)
        if decision.recover:
            await self._ask_recovery(decision)

    async def _detect(self) -> ProbeResult:
        modes = {m.type for m in self.props.detection.detection_modes}
        if modes == {DetectionType.LIFECYCLE_EVENTS}:
            return self._from_events()
        self.events = []  # polling modes: an event only brought the next round forward
        try:
            result = await workflow.execute_activity_method(
                HealthActivities.probe_nodes,
                ProbeRequest(
                    cluster_id=self.inp.cluster_id,
                    detection=detection_with_pool(
                        self.props.detection.model_dump(mode="json"), self.view.lb_pool
                    ),
                    targets=self.view.targets,
                    share_listing=True,
                ),
                start_to_close_timeout=timedelta(minutes=5),
                heartbeat_timeout=timedelta(seconds=60),
                retry_policy=CLOUD_RETRY,
                summary=f"probe {len(self.view.targets)} node(s)",
            )
        except ActivityError as err:  # never let a probe failure end the loop
            return ProbeResult(probes=[], cloud_error=failure_reason(err))
        return result

    def _from_events(self) -> ProbeResult:
        events, self.events = self.events, []
        probes = [
            NodeProbe(
                node_id=e.node_id,
                state=ProbeState.UNHEALTHY,
                reason=f"lifecycle event {e.event_type}",
                server_status=_STATUS_OF_HINT.get(EVENT_HINTS.get(e.event_type, "")),
            )
            for e in events
        ]
        return ProbeResult(probes=probes)

    async def _report(self, decision: Assessment, changed: list[str]) -> None:
        """Write events for transitions and warnings, and tell the cluster about warnings."""
        events = [
            self._node_event(
                node.node_id,
                node.name,
                "HEALTH_CHECK",
                f"{node.state.value}: {node.reason}" if node.reason else node.state.value,
                EventLevel.WARNING if node.state == ProbeState.UNHEALTHY else EventLevel.INFO,
            )
            for node in (self.nodes[k] for k in changed)
        ]
        if decision.warning != self.warning:
            self.warning = decision.warning
            await self._signal_cluster("health_report", self.warning)
            if self.warning:
                events.append(self._warning_event(self.warning))
        if events:
            await record(ChangeSet(events=events), summary=f"record {len(events)} health event(s)")

    async def _ask_recovery(self, decision: Assessment) -> None:
        now = workflow.now()
        for node_id in decision.recover:
            node = self.nodes[node_id]
            self.recoveries.append(
                RecoveryRecord(
                    node_id=node_id,
                    name=node.name,
                    attempt=node.attempts,
                    reason=node.reason,
                    at=now,
                )
            )
        del self.recoveries[:-HISTORY_KEPT]
        await self._signal_cluster(
            "recover",
            ClusterOperationRequest(
                action_id=str(workflow.uuid4()),
                params={"nodes": decision.recover, "hints": decision.hints},
            ),
        )

    async def _signal_cluster(self, name: str, arg: object) -> None:
        handle = workflow.get_external_workflow_handle(ids.cluster(self.inp.cluster_id))
        try:
            await handle.signal(name, arg)
        except FailureError as err:  # the cluster is gone: nothing left to watch
            workflow.logger.warning("signal %s to cluster failed: %s", name, err)
            self.stopped = True

    def _node_event(
        self, node_id: str, name: str, action: str, reason: str, level: EventLevel
    ) -> Event:
        return node_event(
            event_id=str(workflow.uuid4()),
            at=workflow.now(),
            project_id=self.inp.project_id,
            cluster_id=self.inp.cluster_id,
            node_id=node_id,
            node_name=name,
            action=action,
            status=self.nodes[node_id].state.value,
            reason=reason,
            level=level,
        )

    def _warning_event(self, reason: str) -> Event:
        """HEALTH_WARNING about the cluster itself."""
        return Event(
            event_id=str(workflow.uuid4()),
            project_id=self.inp.project_id,
            obj_type="cluster",
            obj_id=self.inp.cluster_id,
            obj_name=self.inp.cluster_name,
            cluster_id=self.inp.cluster_id,
            action="HEALTH_WARNING",
            status_reason=reason,
            level=EventLevel.WARNING,
            at=workflow.now(),
        )

    def _carry_over(self) -> HealthManagerInput:
        return self.inp.model_copy(
            update={
                "view": self.view,
                "nodes": self.nodes,
                "recoveries": self.recoveries,
                "events": self.events,
                "warning": self.warning,
            }
        )

    def _show(self) -> None:
        unhealthy = [n.name for n in self.nodes.values() if n.state == ProbeState.UNHEALTHY]
        state = "paused (cluster busy)" if self.view.paused else "watching"
        if self.view.locked:
            state = "paused (cluster locked)"
        workflow.set_current_details(
            f"Health of **{self.inp.cluster_name}**: {state}, {len(self.view.targets)} node(s), "
            f"every {self.props.detection.interval} s. Unhealthy: {', '.join(unhealthy) or 'none'}"
            + (f"\n\n⚠ {self.warning}" if self.warning else "")
        )


def _after_recovery(node: NodeHealth, view: HealthView) -> NodeHealth:
    """A node whose recovery left it ACTIVE is healthy until a probe or event says not.

    Without this, LIFECYCLE_EVENTS detection (which has no probe to say "healthy")
    would recover the same node again after every backoff.
    """
    if not node.recovering:
        return node
    if view.node_status.get(node.node_id) == "ACTIVE":
        return node.model_copy(
            update={
                "recovering": False,
                "state": ProbeState.HEALTHY,
                "reason": "recovered",
                "hint": "",
                "attempts": 0,
                "next_attempt_at": None,
            }
        )
    return node.model_copy(update={"recovering": False})


#: Server status a hint stands for (so recovery picks the cheap fix first).
_STATUS_OF_HINT = {"UNPAUSE": "PAUSED", "START": "SHUTOFF"}
