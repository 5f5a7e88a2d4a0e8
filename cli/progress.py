"""`--wait`: follow an action (or a stack) until it ends, with a live view on a terminal.

On a terminal the view is redrawn in place (Rich `Live`); otherwise each change is
printed once as a line, so logs of scripts stay readable. Both go to stderr.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from cli.client import ApiError, WardenClient
from cli.output import Output, short_time

FINAL_ACTION_STATUSES = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
#: Victims shown (and read) at most per refresh, so a big scale-in stays cheap.
MAX_VICTIMS_SHOWN = 20
POLL_INTERVAL_S = 1.0


def victim_line(victim: dict[str, Any]) -> str:
    """One node being removed: `web-3  WAITING_LIFECYCLE_COMPLETION  until 14:05:00`."""
    name = victim.get("inputs", {}).get("node_name") or victim["target"]
    line = f"{name}  {victim['status']}"
    lifecycle = victim.get("lifecycle") or {}
    if victim["status"] == "WAITING_LIFECYCLE_COMPLETION" and lifecycle.get("deadline"):
        line += f"  waiting for complete_lifecycle until {short_time(lifecycle['deadline'])} UTC"
        if lifecycle.get("heartbeats"):
            line += f" ({lifecycle['heartbeats']} heartbeats)"
    return line


def action_lines(action: dict[str, Any], victims: list[dict[str, Any]]) -> list[str]:
    """The text of the view: the action, then each node it is removing."""
    head = f"{action['name']} {action['id'][:8]}  {action['status']}"
    if action.get("status_reason"):
        head += f"  {action['status_reason']}"
    return [head, *(f"  {victim_line(v)}" for v in victims)]


def _render(lines: list[str]) -> Group:
    table = Table.grid(padding=(0, 1))
    for line in lines:
        table.add_row(Text(line))
    return Group(table)


def follow(
    out: Output,
    read: Callable[[], tuple[list[str], bool]],
    *,
    timeout: float,
    what: str,
) -> None:
    """Call `read` until it says done, showing its lines; `ApiError` on timeout."""
    deadline = time.monotonic() + timeout
    live_view = out.err.is_terminal
    last: list[str] = []
    with Live(console=out.err, auto_refresh=False) if live_view else _NoLive() as live:
        while True:
            lines, done = read()
            if lines != last:
                if live_view:
                    live.update(_render(lines), refresh=True)
                else:
                    for line in lines:
                        if line not in last:
                            out.note(line)
                last = lines
            if done:
                return
            if time.monotonic() > deadline:
                raise ApiError(f"Gave up after {timeout:g} s waiting for {what}; it goes on.")
            time.sleep(POLL_INTERVAL_S)


class _NoLive:
    def __enter__(self) -> _NoLive:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def update(self, *_: object, **__: object) -> None:
        return None


def wait_action(
    client: WardenClient, out: Output, action_id: str, timeout: float
) -> dict[str, Any]:
    """Follow an action to its end; answers the final action."""
    final: dict[str, Any] = {}

    def read() -> tuple[list[str], bool]:
        action = client.get(f"/v1/actions/{action_id}")["action"]
        victims = []
        if action["status"] not in FINAL_ACTION_STATUSES:
            for token in action.get("depends_on", [])[:MAX_VICTIMS_SHOWN]:
                victims.append(client.get(f"/v1/actions/{token}")["action"])
        final.update(action)
        return action_lines(action, victims), action["status"] in FINAL_ACTION_STATUSES

    follow(out, read, timeout=timeout, what=f"action {action_id}")
    return final


def stack_lines(stack: dict[str, Any], resources: list[dict[str, Any]]) -> list[str]:
    """A stack's status and each resource's; a group's members as `group/member`, so a
    rolling update shows its batches going through."""
    head = f"stack {stack['stack_name']}  {stack['stack_status']}"
    if stack.get("stack_status_reason"):
        head += f"  {stack['stack_status_reason']}"
    rows = [
        f"  {_label(r)}  {r['resource_status']}  {r.get('physical_resource_id', '')}"
        for r in resources
    ]
    return [head, *rows]


def _label(resource: dict[str, Any]) -> str:
    parent = resource.get("parent_resource")
    return f"{parent}/{resource['resource_name']}" if parent else str(resource["resource_name"])


def wait_stack(
    client: WardenClient, out: Output, path: str, action: str, timeout: float
) -> dict[str, Any] | None:
    """Follow a stack until its status is `<action>_*` and no longer IN_PROGRESS.

    Answers the final stack, or None once a delete made it disappear (404).
    """
    final: dict[str, Any] = {}
    gone = False

    def read() -> tuple[list[str], bool]:
        nonlocal gone
        try:
            stack = client.get(path)["stack"]
            resources = client.get(f"{path}/resources", nested_depth=1)["resources"]
        except ApiError as err:
            if err.status == 404 and action == "DELETE":
                gone = True
                return [f"stack {path.rsplit('/', 2)[-2]}  DELETE_COMPLETE"], True
            raise
        final.update(stack)
        status = str(stack["stack_status"])
        done = status.startswith(_prefixes(action)) and not status.endswith("_IN_PROGRESS")
        return stack_lines(stack, resources), done

    follow(out, read, timeout=timeout, what=f"stack {path}")
    return None if gone else final


def _prefixes(action: str) -> tuple[str, ...]:
    # An update that fails may roll back: ROLLBACK_* ends it too.
    return (f"{action}_", "ROLLBACK_") if action in ("UPDATE", "CREATE") else (f"{action}_",)
