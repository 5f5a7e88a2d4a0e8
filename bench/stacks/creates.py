"""Stack creates through the API, timed to CREATE_COMPLETE, and where each one's time
went, from its workflows' histories."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from bench.histories import event_seconds
from bench.measure import delta, ms, pct
from bench.stack import Stack
from bench.stacks.settings import BASE, CREATE_TIMEOUT_S, POLL_S, SERVER

_STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
_COMPLETED = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
_TASK_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
_TASK_FAILED = EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
_TASK_COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
_CHILD_STARTED = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED


def template(count: int, *, chain: bool = False) -> dict[str, Any]:
    """`count` servers, independent, or each depending on the one before (`chain`)."""
    resources: dict[str, Any] = {}
    for i in range(count):
        after = {"depends_on": [f"server{i - 1:03d}"]} if chain and i else {}
        resources[f"server{i:03d}"] = SERVER | after
    return {"heat_template_version": "2021-04-16", "resources": resources}


def expect(response: httpx.Response, status: int) -> httpx.Response:
    """The response, if it has `status`; anything else fails the run."""
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} → {response.status_code}: "
            f"{response.text[:500]}"
        )
    return response


async def settled(api: httpx.AsyncClient, url: str, within_s: float) -> dict[str, Any]:
    """The stack once its status is no longer *_IN_PROGRESS."""
    begun = time.monotonic()
    while time.monotonic() < begun + within_s:
        stack: dict[str, Any] = expect(await api.get(url), 200).json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        # Fine-grained early, ≤ 2% of the elapsed time later (polling costs CPU too).
        await asyncio.sleep(max(POLL_S, (time.monotonic() - begun) / 50))
    raise TimeoutError(f"{url} still in progress after {within_s} s")


async def create(
    stack: Stack, api: httpx.AsyncClient, label: str, stack_template: dict[str, Any]
) -> dict[str, Any]:
    """Create a stack and wait for CREATE_COMPLETE: wall time plus its history profile."""
    name = f"bench-{label}-{uuid.uuid4().hex[:6]}"
    cpu = stack.cpu()
    start = time.perf_counter()
    posted = await api.post(BASE, json={"stack_name": name, "template": stack_template})
    post_s = time.perf_counter() - start
    body = expect(posted, 201).json()["stack"]
    url = body["links"][0]["href"]
    final = await settled(api, url, CREATE_TIMEOUT_S)
    wall = time.perf_counter() - start
    cpu_s = delta(stack.cpu(), cpu)
    if final["stack_status"] != "CREATE_COMPLETE":
        raise RuntimeError(f"{name}: {final['stack_status']} {final['stack_status_reason']}")
    profile = await _profile(stack.temporal, str(body["id"]))
    return {"url": url, "wall_s": wall, "post_ms": post_s * 1000, "cpu_s": cpu_s, **profile}


async def events(client: Client, workflow_id: str) -> list[HistoryEvent]:
    """A workflow's history."""
    return list((await client.get_workflow_handle(workflow_id).fetch_history()).events)


def failed_tasks(history: list[HistoryEvent]) -> int:
    """Workflow tasks the server failed. Under load these are `FORCE_CLOSE_COMMAND`:
    more than 100 events (activity results) buffered while a task ran, so the server
    fails that task to hand them over, and the worker replays the whole history."""
    return sum(1 for e in history if e.event_type == _TASK_FAILED)


def task_runs(history: list[HistoryEvent]) -> list[float]:
    """Each workflow task's run, started to completed: the activation the SDK's deadlock
    detector fails at 2 s (plus the worker's round trip to the server)."""
    by_id = {e.event_id: e for e in history}
    return [
        event_seconds(e)
        - event_seconds(by_id[e.workflow_task_completed_event_attributes.started_event_id])
        for e in history
        if e.event_type == _TASK_COMPLETED
    ]


def _waits_and_runs(
    history: list[HistoryEvent],
) -> tuple[dict[str, list[float]], list[float], list[float], int]:
    """Each activity's run time by type, activities' and workflow tasks' time queued,
    and the activities' retries."""
    by_id = {e.event_id: e for e in history}
    runs: dict[str, list[float]] = {}
    queued: list[float] = []
    task_queued: list[float] = []
    retries = 0
    for e in history:
        if e.event_type == _STARTED:
            begun = e.activity_task_started_event_attributes
            queued.append(event_seconds(e) - event_seconds(by_id[begun.scheduled_event_id]))
            retries += begun.attempt - 1
        elif e.event_type == _TASK_STARTED:
            task = e.workflow_task_started_event_attributes
            task_queued.append(event_seconds(e) - event_seconds(by_id[task.scheduled_event_id]))
        elif e.event_type == _COMPLETED:
            done = e.activity_task_completed_event_attributes
            kind = by_id[done.scheduled_event_id].activity_task_scheduled_event_attributes
            runs.setdefault(kind.activity_type.name, []).append(
                event_seconds(e) - event_seconds(by_id[done.started_event_id])
            )
    return runs, queued, task_queued, retries


async def _profile(client: Client, stack_id: str) -> dict[str, Any]:
    """Where a create went: the stack workflow up to its stack-op child, then the child."""
    parent = await events(client, f"stack:{stack_id}")
    started = next(e for e in parent if e.event_type == _CHILD_STARTED)
    child = started.child_workflow_execution_started_event_attributes.workflow_execution
    history = await events(client, child.workflow_id)
    runs, queued, task_queued, retries = _waits_and_runs(history)
    return {
        "before_child_ms": (event_seconds(started) - event_seconds(parent[0])) * 1000,
        "child_span_s": event_seconds(history[-1]) - event_seconds(history[0]),
        "child_events": len(history),
        "workflow_tasks": len(task_queued),
        "failed_workflow_tasks": failed_tasks(history),
        "workflow_task_queue_max_ms": ms(max(task_queued, default=0.0)),
        "workflow_task_run_max_ms": ms(max(task_runs(parent) + task_runs(history))),
        "activity_queue_p50_ms": ms(pct(queued, 0.5)),
        "activity_queue_max_ms": ms(max(queued, default=0.0)),
        "activity_run_p50_ms": {k: ms(pct(v, 0.5)) for k, v in runs.items()},
        "activity_run_max_ms": {k: ms(max(v)) for k, v in runs.items()},
        "activity_retries": retries,
    }
