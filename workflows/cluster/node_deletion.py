"""NodeDeletionWorkflow (`node-delete:{token}`): one victim of a scale-in, hook and all.

The token is the id of the victim's NODE_DELETE action. The workflow sends the
lifecycle message, then waits for `complete_lifecycle` (delete at once),
`heartbeat_lifecycle` (the deadline moves), `server_gone` (sent by the parent
when the server vanished) or its deadline, and finally removes the node.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, FailureError
from temporalio.workflow import ActivityHandle, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities.hooks import HookActivities
    from activities.nodes import NodeActivities
    from domain.actions import ActionChange, ActionName, ActionStatus
    from domain.cluster.lifecycle import (
        DeletionSettings,
        HookDelivery,
        HookDeliveryResult,
        HookTarget,
        LifecycleMessage,
        LifecycleNote,
    )
    from domain.cluster.nodes import NodeState, NodeStatus
    from domain.cluster.stack_calls import stack_of
    from domain.cluster.standalone import NO_CLUSTER, StandaloneNode
    from domain.events import Event, EventLevel, node_event
    from domain.projection import ChangeSet, NodeRemoval
    from workflows import ids
    from workflows.cluster.lifecycle_messages import (
        COMPLETE_LIFECYCLE,
        HEARTBEAT_LIFECYCLE,
        LifecycleView,
    )
    from workflows.cluster.operations import node_snapshot, with_status
    from workflows.cluster.retries import CLOUD_RETRY, REMOVE_TIMEOUT
    from workflows.cluster.stack_nodes import destroy_stack, retag_stack
    from workflows.entity import failure_reason, record
    from workflows.node.messages import NODE_WORKFLOW, NodeInput
    from workflows.search_attributes import set_status, show_final_status, warden_attributes

#: Webhooks are retried with backoff until the hook's deadline.
HOOK_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
)
#: A message-only hook (timeout 0) still gets this long to be delivered.
MESSAGE_ONLY_WINDOW = timedelta(seconds=30)
#: One delivery attempt (the webhook client's own bound is 10 s by default).
DELIVERY_ATTEMPT_TIMEOUT = timedelta(seconds=20)
#: The local first attempt is tried once, briefly; its retries are the activity's.
ONE_ATTEMPT = RetryPolicy(maximum_attempts=1)
#: A local activity holds one of the worker's workflow task slots until it ends (measured:
#: with 2 slots, four 3 s local activities kept a plain workflow waiting 6 s), so a slow
#: or hung receiver must not keep it long: past this, the activity takes over. A receiver
#: that answers later still got the first message; it sees the retry too and dedupes on
#: the token, as it does for any retry.
FIRST_ATTEMPT_TIMEOUT = timedelta(seconds=2)
NO_WAIT = "message sent; hook timeout is 0, no wait"

#: How a victim's code has changed, by `NodeDeletionInput.revision`. The parent stamps
#: `VICTIM_REVISION` on each victim it starts; a victim started before a revision
#: existed carries a lower number (0 when the field did not exist) and replays its old
#: path. Versioning by input writes nothing to history, where `workflow.patched()`
#: would add a marker and a TemporalChangeVersion upsert to every one of a scale-in's
#: thousand victims (docs/performance.md). Revisions only ever grow.
#:
#: 1: the lifecycle message's first attempt is a local activity (`_first_attempt`).
LOCAL_FIRST_ATTEMPT = 1
#: 1: the final `WardenStatus` is set without the `final-warden-status` patch marker.
UNPATCHED_FINAL_STATUS = 1
VICTIM_REVISION = 1
#: A stack node that leaves its cluster loses its cluster tags (histories from before: kept).
STACK_TAGS_ON_LEAVE = "stack-tags-on-leave"


class NodeDeletionInput(BaseModel):
    """One victim and how to remove it."""

    project_id: str
    cluster_id: str
    cluster_name: str
    parent_action_id: str
    token: str
    node: NodeState
    deletion: DeletionSettings
    complete_url: str
    #: Whether this victim waits for its app (hook set, node ACTIVE with a server).
    wait: bool
    #: Which revision of this workflow's code started it (see `VICTIM_REVISION`).
    revision: int = 0
    #: The cluster's profile spec; with it, a node removed without destroying its server
    #: lives on standalone (Senlin's orphan node), else its row is deleted.
    profile: dict[str, Any] | None = None


class NodeDeletionResult(BaseModel):
    """How the victim's removal ended."""

    node_id: str
    removed: bool
    outcome: str
    node: NodeState | None = None


def _retryable(error: BaseException) -> bool:
    """Whether a failed delivery may still succeed (the activity's own retry rules)."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, ApplicationError):
            return not current.non_retryable
        current = current.__cause__
    return True


def waits_for_hook(node: NodeState, deletion: DeletionSettings) -> bool:
    """Whether a node waits for its lifecycle hook before it is deleted.

    Nodes that are not ACTIVE or have no server skip the wait (docs/api-contract.md
    §Lifecycle hooks).
    """
    return (
        deletion.hook is not None
        and node.status == NodeStatus.ACTIVE
        and node.physical_id is not None
    )


@workflow.defn(name="NodeDeletionWorkflow")
class NodeDeletionWorkflow:
    """Wait for the app's go-ahead (or the deadline), then delete the node exactly once."""

    @workflow.init
    def __init__(self, inp: NodeDeletionInput) -> None:
        self.inp = inp
        self.completed = False
        self.gone = False
        self.extended = False
        self.waiting = False
        self.heartbeats = 0
        self.deadline: datetime | None = None
        self.outcome = "pending"
        self.notes: list[Event] = []

    @workflow.run
    async def run(self, inp: NodeDeletionInput) -> NodeDeletionResult:
        if inp.wait and inp.deletion.hook is not None:
            self.outcome = await self._lifecycle(inp.deletion.hook)
        else:
            self.outcome = "no lifecycle wait"
        result = await self._remove()
        final = "DELETED" if result.removed else "FAILED"
        if inp.revision >= UNPATCHED_FINAL_STATUS:
            set_status(final)
        else:
            show_final_status(final)
        return result

    # ---- what apps (through the API or Temporal) and the parent send ----

    @workflow.signal(name=COMPLETE_LIFECYCLE)
    def complete_lifecycle(self, note: LifecycleNote | None = None) -> None:
        """The app is done with the node: delete it now. Repeats are no-ops."""
        if not self.completed:
            self.completed = True
            self._note("LIFECYCLE_COMPLETE", "complete_lifecycle received", note)

    @workflow.signal(name=HEARTBEAT_LIFECYCLE)
    def heartbeat_lifecycle(self, note: LifecycleNote | None = None) -> None:
        """The app needs more time: the deadline restarts from now (AWS-style)."""
        hook = self.inp.deletion.hook
        if self.waiting and hook is not None and not self.completed:
            self.deadline = workflow.now() + timedelta(seconds=hook.timeout)
            self.heartbeats += 1
            self.extended = True
            self._note(
                "LIFECYCLE_HEARTBEAT",
                f"heartbeat_lifecycle: deadline moved to {_iso(self.deadline)}",
                note,
            )

    @workflow.signal(name="server_gone")
    def server_gone(self) -> None:
        """The node's server disappeared: stop waiting."""
        self.gone = True

    @workflow.query(name="describe")
    def describe(self) -> LifecycleView:
        """The victim's wait, for the API and operators."""
        return LifecycleView(
            token=self.inp.token,
            node_id=self.inp.node.node_id,
            node_name=self.inp.node.name,
            waiting=self.waiting,
            deadline=self.deadline,
            heartbeats=self.heartbeats,
            outcome=self.outcome,
        )

    # ---- the hook ----

    async def _lifecycle(self, hook: HookTarget) -> str:
        inp = self.inp
        self.deadline = workflow.now() + timedelta(seconds=hook.timeout)
        delivery = HookDelivery(
            project_id=inp.project_id,
            policy_id=hook.policy_id,
            hook_type=hook.type,
            url=hook.url,
            queue=hook.queue,
            message=self._message(hook),
        )
        if inp.revision >= LOCAL_FIRST_ATTEMPT:
            error = await self._first_attempt(delivery)
            if error is None or not _retryable(error):
                if error is not None:
                    self._delivery_failed(error)
                if hook.timeout == 0:
                    return NO_WAIT
                return await self._wait()
            delivery = delivery.model_copy(update={"prior_attempts": 1})
        handle = workflow.start_activity_method(
            HookActivities.deliver_lifecycle_message,
            delivery,
            start_to_close_timeout=DELIVERY_ATTEMPT_TIMEOUT,
            # Retried until the hook's deadline, and for at least MESSAGE_ONLY_WINDOW.
            schedule_to_close_timeout=max(self.deadline - workflow.now(), MESSAGE_ONLY_WINDOW),
            retry_policy=HOOK_RETRY,
            summary=f"deliver lifecycle message for {inp.node.name}",
        )
        # Its failure is read below; never leave it "unretrieved" if the run is evicted.
        handle.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        if hook.timeout == 0:
            await asyncio.wait([handle])
            self._delivery_outcome(handle)
            return NO_WAIT
        outcome = await self._wait()
        if handle.done():
            self._delivery_outcome(handle)
            return outcome
        handle.cancel()
        if not self.completed:
            # A completion proves the app got the message (it may answer only after
            # calling complete_lifecycle); only a wait that ended otherwise is news.
            self._event(
                "LIFECYCLE_HOOK",
                "Lifecycle message was not delivered before the wait ended",
                EventLevel.WARNING,
            )
        return outcome

    async def _first_attempt(self, delivery: HookDelivery) -> FailureError | None:
        """Deliver once from a local activity, inside the victim's first workflow task.

        On the happy path this saves the activity's three events, a workflow task and
        its store writes per victim, and the app's prompt `complete_lifecycle` no longer
        lands while the server records the delivery (docs/performance.md). Signals that arrive
        meanwhile are buffered and handled in the next task. A local activity's failure
        reaches the workflow as the activity's own error (an ApplicationError or a
        TimeoutError), not wrapped in an ActivityError.
        """
        try:
            await workflow.execute_local_activity_method(
                HookActivities.deliver_lifecycle_message,
                delivery,
                start_to_close_timeout=FIRST_ATTEMPT_TIMEOUT,
                retry_policy=ONE_ATTEMPT,
                summary=f"deliver lifecycle message for {self.inp.node.name}",
            )
        except CancelledError:
            raise
        except FailureError as err:
            return err
        return None

    async def _wait(self) -> str:
        self.waiting = True
        try:
            while True:
                assert self.deadline is not None
                remaining = self.deadline - workflow.now()
                if remaining <= timedelta(0):
                    return "lifecycle hook timed out"
                self._show()
                self.extended = False
                try:
                    await workflow.wait_condition(
                        lambda: self.completed or self.gone or self.extended,
                        timeout=remaining,
                        timeout_summary=f"deadline of {self.inp.node.name}",
                    )
                except TimeoutError:
                    return "lifecycle hook timed out"
                if self.completed:
                    return "complete_lifecycle received"
                if self.gone:
                    return "server disappeared while waiting"
                await self._record_heartbeat()
        finally:
            self.waiting = False

    def _message(self, hook: HookTarget) -> LifecycleMessage:
        inp = self.inp
        assert self.deadline is not None
        return LifecycleMessage(
            lifecycle_action_token=inp.token,
            node_id=inp.node.node_id,
            node_name=inp.node.name,
            resource_id=inp.node.physical_id or "",
            cluster_id=inp.cluster_id,
            timeout=hook.timeout,
            deadline=self.deadline,
            complete_url=inp.complete_url,
        )

    def _delivery_outcome(self, delivery: ActivityHandle[HookDeliveryResult]) -> None:
        error = delivery.exception()
        if error is not None:
            self._delivery_failed(error)

    def _delivery_failed(self, error: BaseException) -> None:
        self._event(
            "LIFECYCLE_HOOK",
            f"Lifecycle message delivery failed: {failure_reason(error)}",
            EventLevel.WARNING,
        )

    async def _record_heartbeat(self) -> None:
        """Show the new deadline in the action record (heartbeats are rare)."""
        notes, self.notes = self.notes, []
        assert self.deadline is not None
        await record(
            ChangeSet(
                actions=[
                    self._action(
                        ActionStatus.WAITING_LIFECYCLE_COMPLETION,
                        f"Waiting for complete_lifecycle until {_iso(self.deadline)}",
                        outputs={"deadline": _iso(self.deadline), "heartbeats": self.heartbeats},
                    )
                ],
                events=notes,
            ),
            summary="record heartbeat",
        )

    # ---- removal ----

    async def _remove(self) -> NodeDeletionResult:
        inp, node = self.inp, self.inp.node
        destroy = inp.deletion.destroy_after_deletion
        if not destroy and inp.profile is not None:
            return await self._leave()
        done = (
            f"Node deleted ({self.outcome})"
            if destroy
            else f"Node removed from cluster, server kept ({self.outcome})"
        )
        workflow.set_current_details(f"Deleting node **{node.name}** ({self.outcome})")
        self._event("NODE_DELETE", done, EventLevel.INFO, status="DELETED")
        stack = stack_of(node) is not None
        try:
            if stack and destroy:
                await destroy_stack(node)
            await workflow.execute_activity_method(
                NodeActivities.remove_node,
                NodeRemoval(
                    node_id=node.node_id,
                    # A stack node has no servers of its own to look for.
                    name=None if stack else node.name,
                    physical_id=None if stack else node.physical_id,
                    destroy=destroy,
                    changes=ChangeSet(
                        deleted_nodes=[node.node_id],
                        actions=[
                            self._action(ActionStatus.SUCCEEDED, done, outputs=self._outputs())
                        ],
                        events=self.notes,
                    ),
                ),
                start_to_close_timeout=REMOVE_TIMEOUT,
                heartbeat_timeout=timedelta(seconds=30),
                retry_policy=CLOUD_RETRY,
                summary=f"delete node {node.name}",
            )
        except ActivityError as err:
            return await self._removal_failed(failure_reason(err))
        return NodeDeletionResult(node_id=node.node_id, removed=True, outcome=self.outcome)

    async def _leave(self) -> NodeDeletionResult:
        """The node leaves the cluster and lives on standalone, its server kept: its own
        entity workflow (abandoned by this one) owns it from now on."""
        inp = self.inp
        assert inp.profile is not None
        node = inp.node.model_copy(update={"index": -1, "updated_at": workflow.now()})
        if node.status == NodeStatus.DELETING:
            node = node.model_copy(update={"status": NodeStatus.ACTIVE, "status_reason": ""})
        done = f"Node removed from cluster, kept as a standalone node ({self.outcome})"
        workflow.set_current_details(f"Node **{node.name}** leaves its cluster ({self.outcome})")
        self._event("NODE_LEAVE", done, EventLevel.INFO, status=node.status.value)
        if stack_of(node) is not None and workflow.patched(STACK_TAGS_ON_LEAVE):
            await retag_stack(node, None)  # Senlin's do_leave: no cluster tags
        standalone = StandaloneNode(
            project_id=inp.project_id, profile=inp.profile, node=node, created=True
        )
        await workflow.start_child_workflow(
            NODE_WORKFLOW,
            NodeInput(state=standalone),
            id=ids.node(node.node_id),
            static_summary=f"node {node.name}",
            static_details=f"Standalone node `{node.node_id}` of project `{inp.project_id}` "
            f"(left cluster `{inp.cluster_id}`)",
            search_attributes=warden_attributes(
                inp.project_id, "node", node.node_id, node.status.value
            ),
            parent_close_policy=ParentClosePolicy.ABANDON,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        )
        await record(
            ChangeSet(
                nodes=[node_snapshot(inp.project_id, NO_CLUSTER, node)],
                actions=[self._action(ActionStatus.SUCCEEDED, done, outputs=self._outputs())],
                events=self.notes,
            ),
            summary=f"node {node.name} left the cluster",
        )
        return NodeDeletionResult(node_id=node.node_id, removed=True, outcome=self.outcome)

    async def _removal_failed(self, reason: str) -> NodeDeletionResult:
        inp = self.inp
        failed = with_status(inp.node, NodeStatus.ERROR, f"Failed to delete: {reason}")
        self.notes = [n for n in self.notes if n.action != "NODE_DELETE"]
        self._event("NODE_DELETE", failed.status_reason, EventLevel.ERROR, status="ERROR")
        await record(
            ChangeSet(
                nodes=[node_snapshot(inp.project_id, inp.cluster_id, failed)],
                actions=[
                    self._action(ActionStatus.FAILED, failed.status_reason, outputs=self._outputs())
                ],
                events=self.notes,
            ),
            summary="record failed deletion",
        )
        return NodeDeletionResult(
            node_id=failed.node_id, removed=False, outcome=failed.status_reason, node=failed
        )

    # ---- projection helpers ----

    def _outputs(self) -> dict[str, object]:
        return {"outcome": self.outcome, "heartbeats": self.heartbeats}

    def _action(
        self, status: ActionStatus, reason: str, outputs: dict[str, object] | None = None
    ) -> ActionChange:
        inp = self.inp
        return ActionChange(
            action_id=inp.token,
            project_id=inp.project_id,
            name=ActionName.NODE_DELETE,
            target=inp.node.node_id,
            status=status,
            status_reason=reason,
            outputs=outputs,
            workflow_id=workflow.info().workflow_id,
            at=workflow.now(),
        )

    def _note(self, action: str, reason: str, note: LifecycleNote | None) -> None:
        source = f" via {note.source}" if note and note.source else ""
        extra = f": {note.reason}" if note and note.reason else ""
        self._event(action, f"{reason}{source}{extra}", EventLevel.INFO)

    def _event(self, action: str, reason: str, level: EventLevel, *, status: str = "") -> None:
        inp = self.inp
        self.notes.append(
            node_event(
                event_id=str(workflow.uuid4()),
                at=workflow.now(),
                project_id=inp.project_id,
                cluster_id=inp.cluster_id,
                node_id=inp.node.node_id,
                node_name=inp.node.name,
                action=action,
                status=status or NodeStatus.DELETING.value,
                reason=reason,
                level=level,
                action_id=inp.token,
            )
        )

    def _show(self) -> None:
        assert self.deadline is not None
        workflow.set_current_details(
            f"Waiting for `complete_lifecycle` of node **{self.inp.node.name}** until "
            f"{_iso(self.deadline)} (heartbeats: {self.heartbeats}).\n\n"
            f"Token `{self.inp.token}` · cluster **{self.inp.cluster_name}**"
        )


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
