"""`OS::Heat::WaitConditionHandle` and `OS::Heat::WaitCondition`: a durable wait for
signals from outside the stack (a server's boot script, an operator's `curl`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.signals import SignalActivities
    from domain.stack.state import ResourceState
    from domain.stack.types.wait_condition import (
        HANDLE,
        condition_data,
        handle_attributes,
        timeout_message,
        wait_outcome,
    )
    from workflows.stack.nested import NestedContext
    from workflows.stack.records import new_id
    from workflows.stack.resources.base import (
        Applied,
        ResourceFailed,
        ResourceHandler,
        call_activity,
        unchanged,
    )


class WaitConditionHandleHandler(ResourceHandler):
    """A handle: its physical id is the signal URL's id; its signals are its metadata."""

    pure: ClassVar[bool] = False

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Draw the handle's signal id (replay-safe) and give out its URL."""
        signal_id = new_id()
        endpoint = None
        if props.get("signal_transport") != "NO_SIGNAL":
            endpoint = await call_activity(SignalActivities.signal_url, signal_id)
        return Applied(
            physical_id=signal_id, reference=signal_id, attributes=handle_attributes(endpoint)
        )


class WaitConditionHandler(ResourceHandler):
    """Waits for its handle's signals: a wait on the workflow's state with a durable timer,
    cancelled at once by cancel_update or the stack's timeout (it has no cloud side)."""

    pure: ClassVar[bool] = True

    async def create(
        self, ctx: NestedContext, name: str, props: dict[str, Any], resource_id: str
    ) -> Applied:
        """Wait until the handle has `count` SUCCESS signals (or a FAILURE, or the timeout)."""
        data = await _wait(ctx, name, props)
        return Applied(physical_id=resource_id, reference=resource_id, attributes={"data": data})

    async def update(
        self, ctx: NestedContext, current: ResourceState, props: dict[str, Any]
    ) -> Applied:
        """Wait again with the new `count` and `timeout`: signals already received count."""
        data = await _wait(ctx, current.name, props)
        return unchanged(current).model_copy(update={"attributes": {"data": data}})


async def _wait(ctx: NestedContext, name: str, props: dict[str, Any]) -> str:
    reference = str(props.get("handle") or "")
    count = int(props.get("count") or 1)
    if ctx.resource_by_reference(HANDLE, reference) is None:
        raise ResourceFailed(f"{reference} is not a valid wait condition handle.")

    def received() -> dict[str, Any]:
        handle = ctx.resource_by_reference(HANDLE, reference)
        return handle.rsrc_metadata if handle is not None else {}

    def settled() -> bool:
        handle = ctx.resource_by_reference(HANDLE, reference)
        if handle is None:
            return False  # not made yet (it was checked above): nothing came
        if handle.attributes.get("endpoint") is None:
            return True  # NO_SIGNAL: nothing will come, nothing to wait for
        return wait_outcome(handle.rsrc_metadata, count) is not None

    ctx.progress(name, f"waiting for {count} signal(s) to its handle")
    try:
        await workflow.wait_condition(settled, timeout=timedelta(seconds=float(props["timeout"])))
    except TimeoutError:
        raise ResourceFailed(
            f"WaitConditionTimeout: {timeout_message(received(), count)}"
        ) from None
    finally:
        ctx.progress(name, "")
    failure = wait_outcome(received(), count)
    if failure:
        raise ResourceFailed(f"WaitConditionFailure: {failure}")
    return condition_data(received())
