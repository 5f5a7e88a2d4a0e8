"""Activities on stacks reached through an orchestration API: those of `os.heat.stack`
nodes, and the remote stacks of `OS::Heat::Stack` resources (in any region).

Every call is idempotent, as the compute activities are: a create finds the stack an
earlier attempt made (the same request names the same stack), a delete of a stack
already gone counts as done, an update sent twice leaves the stack as one would.
Waits poll by being retried by Temporal (no history per attempt).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cloud.orchestration import OrchestrationClient, Stack
from activities.errors import application_error
from domain.cluster.stack_calls import (
    StackActionRequest,
    StackCreateRequest,
    StackHealthResult,
    StackRef,
    StackRetagRequest,
    StackShown,
    StackUpdateRequest,
    StackWaitRequest,
    refreshed_tags,
)
from domain.cluster.stack_profile import DONE, StackVerdict, judge_stack
from domain.errors import BackendConflict, WardenError

#: Stacks judged at once by one health call.
HEALTH_CONCURRENCY = 10


class StackNotReady(ApplicationError):
    """A stack still in progress: Temporal retries the wait."""

    def __init__(self, message: str) -> None:
        super().__init__(message, type="StackNotReady")


class StackNodeActivities:
    """Create, wait for, judge, update, act on and delete stacks."""

    def __init__(self, orchestration: OrchestrationClient) -> None:
        self._orchestration = orchestration

    def _heat_of(self, region: str | None) -> OrchestrationClient:
        return self._orchestration.in_region(region)

    @activity.defn(name="create_node_stack")
    async def create_node_stack(self, request: StackCreateRequest) -> StackRef:
        """Create the stack, or find the one an earlier attempt of this request made."""
        heat, region = self._heat_of(request.region), request.region
        try:
            found = await heat.find_stack(request.name)
            if found is not None:
                return StackRef(name=found.name, id=found.id, region=region)
            try:
                stack_id = await heat.create_stack(request.name, request.fields)
            except BackendConflict:
                # The name is taken: by this request's lost answer, or by another stack.
                found = await heat.find_stack(request.name)
                if found is None:
                    raise
                return StackRef(name=found.name, id=found.id, region=region)
        except WardenError as err:
            raise application_error(err) from err
        return StackRef(name=request.name, id=stack_id, region=region)

    @activity.defn(name="wait_node_stack")
    async def wait_node_stack(self, request: StackWaitRequest) -> str:
        """Return the stack's status once its `action` is COMPLETE; retried while it is
        in progress; a FAILED stack (or one gone) fails for good."""
        ref = request.stack
        try:
            stack = await self._heat_of(ref.region).get_stack(ref.name, ref.id)
        except WardenError as err:
            raise application_error(err) from err
        if stack is None:
            raise ApplicationError(
                f"Stack {ref.name} ({ref.id}) is gone", type="BackendNotFound", non_retryable=True
            )
        done = DONE[request.action]
        if request.since is not None and stack.updated_time == request.since:
            # The state from before the update was sent: Heat has not started it yet.
            raise StackNotReady(f"Stack {ref.name} is {stack.status}, its update not begun")
        if stack.status == done:
            return stack.status
        # A rollback that completed undid this operation: it failed as surely.
        if stack.status.endswith("_FAILED") or stack.status == "ROLLBACK_COMPLETE":
            why = f": {stack.status_reason}" if stack.status_reason else ""
            raise ApplicationError(
                f"Stack {ref.name} went to {stack.status} instead of {done}{why}",
                type="BackendError",
                non_retryable=True,
            )
        raise StackNotReady(f"Stack {ref.name} is {stack.status}")

    @activity.defn(name="update_node_stack")
    async def update_node_stack(self, request: StackUpdateRequest) -> str | None:
        """Update the stack: in place (its failed and CHECK_FAILED resources replaced)
        or to new fields; the `updated_time` to wait past, None when an update was
        already running."""
        ref = request.stack
        heat = self._heat_of(ref.region)
        try:
            stack = await heat.get_stack(ref.name, ref.id)
            if stack is None:
                raise ApplicationError(
                    f"Stack {ref.name} ({ref.id}) is gone",
                    type="BackendNotFound",
                    non_retryable=True,
                )
            if stack.status == "UPDATE_IN_PROGRESS":  # this request's, answered too late
                return None
            if request.existing:
                await heat.patch_stack(ref.name, ref.id, request.fields)
            else:
                await heat.put_stack(ref.name, ref.id, request.fields)
        except WardenError as err:
            raise application_error(err) from err
        return stack.updated_time

    @activity.defn(name="retag_node_stack")
    async def retag_node_stack(self, request: StackRetagRequest) -> None:
        """Senlin's `do_join` / `do_leave` of a stack node: the stack's cluster tags set
        (or removed) by a PATCH, when they change; a stack gone is nothing to tag."""
        ref = request.stack
        heat = self._heat_of(ref.region)
        try:
            stack = await heat.get_stack(ref.name, ref.id)
            if stack is None:
                return
            tags, changed = refreshed_tags(stack.tags, request)
            if changed:
                await heat.patch_stack(ref.name, ref.id, {"tags": tags})
        except WardenError as err:
            raise application_error(err) from err

    @activity.defn(name="act_on_node_stack")
    async def act_on_node_stack(self, request: StackActionRequest) -> None:
        """Start the stack's SUSPEND, RESUME or CHECK (wait for it with `wait_node_stack`);
        nothing when the stack is already doing it."""
        ref = request.stack
        heat = self._heat_of(ref.region)
        try:
            stack = await heat.get_stack(ref.name, ref.id)
            if stack is None:
                raise ApplicationError(
                    f"Stack {ref.name} ({ref.id}) is gone",
                    type="BackendNotFound",
                    non_retryable=True,
                )
            if stack.status != f"{request.action}_IN_PROGRESS":
                await heat.act(ref.name, ref.id, request.action.lower())
        except WardenError as err:
            raise application_error(err) from err

    @activity.defn(name="show_node_stack")
    async def show_node_stack(self, ref: StackRef) -> StackShown:
        """The stack's name and outputs (`{key: value}`)."""
        try:
            stack = await self._heat_of(ref.region).get_stack(ref.name, ref.id)
        except WardenError as err:
            raise application_error(err) from err
        if stack is None:
            raise ApplicationError(
                f"Stack {ref.name} ({ref.id}) is gone", type="BackendNotFound", non_retryable=True
            )
        outputs = {str(o.get("output_key")): o.get("output_value") for o in stack.outputs}
        return StackShown(stack_name=stack.name or ref.name, outputs=outputs)

    @activity.defn(name="delete_node_stack")
    async def delete_node_stack(self, stack: StackRef) -> None:
        """Delete the stack and return once it is gone (a stack already gone counts)."""
        heat = self._heat_of(stack.region)
        try:
            current = await heat.get_stack(stack.name, stack.id)
            if current is None:
                return
            if current.status != "DELETE_IN_PROGRESS":
                await heat.delete_stack(stack.name, stack.id)
                current = await heat.get_stack(stack.name, stack.id)
        except WardenError as err:
            raise application_error(err) from err
        if current is None:
            return
        if current.status == "DELETE_FAILED":
            raise ApplicationError(
                f"Stack {stack.name} could not be deleted: {current.status_reason}",
                type="BackendError",
            )
        raise StackNotReady(f"Stack {stack.name} is {current.status}")

    @activity.defn(name="judge_node_stacks")
    async def judge_node_stacks(self, stacks: Sequence[StackRef]) -> StackHealthResult:
        """Each stack's health: its status, and its resources in a FAILED state (a
        resource marked unhealthy is CHECK_FAILED)."""
        try:
            return StackHealthResult(verdicts=await self.judge(stacks))
        except WardenError as err:
            raise application_error(err) from err

    async def judge(self, stacks: Sequence[StackRef]) -> dict[str, StackVerdict]:
        """Each stack's verdict by stack id, a few stacks at a time (`domain.errors`
        exceptions when the orchestration API fails)."""
        gate = asyncio.Semaphore(HEALTH_CONCURRENCY)

        async def one(ref: StackRef) -> tuple[str, StackVerdict]:
            async with gate:
                return ref.id, await self._judge(ref)

        return dict(await asyncio.gather(*(one(ref) for ref in stacks)))

    async def _judge(self, ref: StackRef) -> StackVerdict:
        heat = self._heat_of(ref.region)
        stack: Stack | None = await heat.get_stack(ref.name, ref.id)
        if stack is None:
            return judge_stack(ref.id, None)
        failed = [
            (r.name, r.status, r.status_reason)
            for r in await heat.list_resources(ref.name, ref.id)
            if r.failed
        ]
        return judge_stack(ref.id, stack.status, stack.status_reason, failed)
