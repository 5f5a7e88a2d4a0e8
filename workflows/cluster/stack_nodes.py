"""The steps of an `os.heat.stack` node, used by the cluster's children where a server
node's steps would run: build, judge, update in place, destroy.

A node is a stack node when it names its stack (`domain.cluster.stack_calls.stack_of`),
so deletion and checks need no profile; a create is one when its profile says so.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.stack_nodes import StackNodeActivities
    from domain.cluster.nodes import NodeState
    from domain.cluster.stack_calls import (
        StackRef,
        StackRetagRequest,
        StackUpdateRequest,
        StackWaitRequest,
        on_stack,
        stack_create_request,
        stack_of,
        timeout_minutes,
    )
    from domain.cluster.stack_profile import StackVerdict
    from workflows.cluster.retries import CLOUD_RETRY, POLL_RETRY, REMOVE_TIMEOUT
    from workflows.entity import failure_reason

CALL_TIMEOUT = timedelta(seconds=60)
#: Tags only describe a stack: a few tries, then the join or leave goes on without them.
TAG_RETRY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=10))


async def build_stack(
    profile: dict[str, Any], node: NodeState, *, request_id: str, cluster_id: str = ""
) -> tuple[NodeState, str | None]:
    """Create the node's stack and wait for CREATE_COMPLETE.

    Answers the node (on its stack as soon as Heat named one, so that deleting or
    recovering the node deals with it) and the failure, None when the stack is up.
    """
    request = stack_create_request(profile, node, request_id=request_id, cluster_id=cluster_id)
    try:
        ref: StackRef = await workflow.execute_activity_method(
            StackNodeActivities.create_node_stack,
            request,
            start_to_close_timeout=CALL_TIMEOUT,
            retry_policy=CLOUD_RETRY,
            summary=f"create stack {request.name}",
        )
    except ActivityError as err:
        return node, failure_reason(err)
    node = on_stack(node, ref)
    try:
        await wait_for_stack(ref, "CREATE", profile)
    except ActivityError as err:
        return node, failure_reason(err)
    return node, None


async def wait_for_stack(
    ref: StackRef, action: str, profile: dict[str, Any], since: str | None = None
) -> None:
    """Poll (by activity retries) until the stack's `action` is COMPLETE, within the
    profile's `timeout`; ActivityError when it FAILED or took too long."""
    await workflow.execute_activity_method(
        StackNodeActivities.wait_node_stack,
        StackWaitRequest(stack=ref, action=action, since=since),
        start_to_close_timeout=CALL_TIMEOUT,
        schedule_to_close_timeout=timedelta(minutes=timeout_minutes(profile)),
        retry_policy=POLL_RETRY,
        summary=f"wait for stack {ref.name} {action}_COMPLETE",
    )


async def update_stack(
    node: NodeState, profile: dict[str, Any], fields: dict[str, Any] | None = None
) -> None:
    """Update the node's stack in place and wait for UPDATE_COMPLETE (ActivityError
    otherwise): with its existing template (no `fields`: Heat replaces every failed and
    CHECK_FAILED resource), or with a new profile's (`stack_update_fields`)."""
    ref = stack_of(node)
    if ref is None:
        raise ValueError(f"node {node.name} has no stack")
    since: str | None = await workflow.execute_activity_method(
        StackNodeActivities.update_node_stack,
        StackUpdateRequest(stack=ref, fields=fields or {}),
        start_to_close_timeout=CALL_TIMEOUT,
        retry_policy=CLOUD_RETRY,
        summary=f"update stack {ref.name} in place",
    )
    await wait_for_stack(ref, "UPDATE", profile, since)


async def destroy_stack(node: NodeState) -> None:
    """Delete the node's stack and wait until it is gone (nothing when it has none)."""
    ref = stack_of(node)
    if ref is None:
        return
    await workflow.execute_activity_method(
        StackNodeActivities.delete_node_stack,
        ref,
        start_to_close_timeout=CALL_TIMEOUT,
        schedule_to_close_timeout=REMOVE_TIMEOUT,
        retry_policy=POLL_RETRY,
        summary=f"delete stack {ref.name}",
    )


async def retag_stack(node: NodeState, cluster_id: str | None) -> None:
    """Tag the node's stack with its membership of `cluster_id` (None: of no cluster),
    as Senlin's stack profile does when a node joins or leaves; a failure is logged, the
    join or leave goes on (the tags only describe the stack)."""
    ref = stack_of(node)
    if ref is None:
        return
    request = StackRetagRequest(
        stack=ref, node_id=node.node_id, cluster_id=cluster_id, index=node.index
    )
    try:
        await workflow.execute_activity_method(
            StackNodeActivities.retag_node_stack,
            request,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=TAG_RETRY,
            summary=f"tag stack {ref.name}",
        )
    except ActivityError as err:
        workflow.logger.warning("Stack %s not retagged: %s", ref.name, failure_reason(err))


async def judge_stacks(nodes: list[NodeState]) -> dict[str, StackVerdict]:
    """Each stack node's verdict, by node id (nodes without a stack are left out)."""
    refs = {node.node_id: ref for node in nodes if (ref := stack_of(node)) is not None}
    if not refs:
        return {}
    result = await workflow.execute_activity_method(
        StackNodeActivities.judge_node_stacks,
        list(refs.values()),
        start_to_close_timeout=timedelta(minutes=2),
        retry_policy=CLOUD_RETRY,
        summary=f"judge {len(refs)} stack(s)",
    )
    return {
        node_id: result.verdicts[ref.id]
        for node_id, ref in refs.items()
        if ref.id in result.verdicts
    }
