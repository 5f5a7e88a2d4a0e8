"""Bare Temporal's scale-in: victims that announce themselves, wait for a signal and
delete, started by a parent the way Warden's are, and the activities they call.

A worker in the benchmark's own process runs them on their own task queue of the same
dev server (`baselines`, `probes`): the floor of the same work done by Warden.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client

from workflows.search_attributes import set_status, warden_attributes


@workflow.defn(name="BenchVictimWorkflow")
class BenchVictimWorkflow:
    """A bare node-delete: announce, wait for a signal (with a deadline), then 'delete'."""

    def __init__(self) -> None:
        self.completed = False

    @workflow.run
    async def run(self, timeout_s: int, listed: bool = False) -> bool:
        me = workflow.info().workflow_id
        announce = workflow.start_activity(
            "bench_announce", me, start_to_close_timeout=timedelta(seconds=30)
        )
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: self.completed, timeout=timedelta(seconds=timeout_s)
            )
        await announce
        await workflow.execute_activity(
            "bench_delete", me, start_to_close_timeout=timedelta(seconds=30)
        )
        if listed:
            set_status("DELETED")
        return self.completed

    @workflow.signal(name="complete_lifecycle")
    def complete_lifecycle(self) -> None:
        """Go ahead."""
        self.completed = True


@workflow.defn(name="BenchFanOutWorkflow")
class BenchFanOutWorkflow:
    """A bare scale-in: start every victim child (at once, or in waves of `wave` as
    Warden's `START_WAVE`, each once the one before has started) and wait for all."""

    @workflow.run
    async def run(self, args: list[int]) -> int:
        count, timeout_s, *rest = args
        listed = bool(rest and rest[0])
        wave = (rest[1] if len(rest) > 1 else 0) or count
        prefix = workflow.info().workflow_id.replace("bench-fanout:", "bench-victim:")
        handles: list[workflow.ChildWorkflowHandle[Any, bool]] = []
        for first in range(0, count, wave):
            handles += await asyncio.gather(
                *(
                    workflow.start_child_workflow(
                        BenchVictimWorkflow.run,
                        args=[timeout_s, True] if listed else [timeout_s],
                        id=f"{prefix}:{i}",
                        **(_listing(prefix, i) if listed else {}),
                    )
                    for i in range(first, min(count, first + wave))
                )
            )
        done = await asyncio.gather(*handles)
        return sum(done)


def _listing(prefix: str, i: int) -> dict[str, Any]:
    """What Warden's victims carry for the UI and `warden` listings: its four search
    attributes, a summary and details (the final status upsert is the victim's)."""
    return {
        "static_summary": f"delete node bench-{i} of cluster bench",
        "static_details": f"Node `{prefix}:{i}`, server `{prefix}`; lifecycle token "
        f"`{prefix}:{i}`; parent action `{prefix}`",
        "search_attributes": warden_attributes("bench", "node-delete", prefix, "WAITING"),
    }


class BareHooks:
    """Activities of the bare fan-out; completes each victim as soon as it announces."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.sent: dict[str, float] = {}
        self.returned: dict[str, float] = {}
        self.deleted: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @activity.defn(name="bench_announce")
    async def announce(self, workflow_id: str) -> None:
        """The lifecycle message: the 'app' completes it concurrently."""
        task = asyncio.create_task(self._complete(workflow_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _complete(self, workflow_id: str) -> None:
        self.sent[workflow_id] = time.time()
        await self.client.get_workflow_handle(workflow_id).signal("complete_lifecycle")
        self.returned[workflow_id] = time.time()

    @activity.defn(name="bench_delete")
    async def delete(self, workflow_id: str) -> None:
        """The backend delete: only its start time matters."""
        self.deleted.setdefault(workflow_id, time.time())
