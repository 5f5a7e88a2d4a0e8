"""`warden action …` and `warden lifecycle …`, plus how every operation ends (`finish`)."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.client import ApiError, WardenClient
from cli.context import FormatOpt, TimeoutOpt, session
from cli.output import Column, Output
from cli.progress import wait_action

ACTION_FIELDS = [
    "id",
    "name",
    "target",
    "status",
    "status_reason",
    "inputs",
    "outputs",
    "lifecycle",
    "depends_on",
    "depended_by",
    "workflow_id",
    "created_at",
    "started_at",
    "ended_at",
]
ACTION_COLUMNS = [
    Column("ID", "id"),
    Column("Name", "name"),
    Column("Target", "target"),
    Column("Status", "status"),
    Column("Reason", "status_reason"),
    Column("Created", "created_at"),
]
DEFAULT_TIMEOUT_S = 1800.0

action_app = typer.Typer(help="Actions: the record of every operation.")
lifecycle_app = typer.Typer(help="Lifecycle hooks: let a node's deletion go ahead, or wait longer.")

ActionId = Annotated[str, typer.Argument(metavar="ACTION_ID")]
Token = Annotated[str, typer.Argument(metavar="TOKEN", help="The lifecycle_action_token.")]


def finish(
    client: WardenClient,
    out: Output,
    action_id: str,
    *,
    what: str,
    wait: bool,
    timeout: float,
) -> None:
    """Report an accepted operation; with `wait`, follow it and fail unless it succeeds."""
    if not wait:
        out.done(
            f"{what}: accepted as action {action_id} (follow it: warden action wait {action_id})",
            {"action": action_id},
        )
        return
    action = wait_action(client, out, action_id, timeout)
    out.record(action, ACTION_FIELDS)
    if action["status"] != "SUCCEEDED":
        raise typer.Exit(1)


@action_app.command("list")
def list_actions(
    ctx: typer.Context,
    target: Annotated[str | None, typer.Option(help="Only actions on this object id.")] = None,
    status: Annotated[str | None, typer.Option(help="Only actions in this status.")] = None,
    name: Annotated[str | None, typer.Option(help="Only actions of this name.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
    fmt: FormatOpt = None,
) -> None:
    """The project's actions, oldest first."""
    client, out = session(ctx, fmt)
    actions = client.get("/v1/actions", target=target, status=status, name=name, limit=limit)
    out.rows(actions["actions"], ACTION_COLUMNS)


@action_app.command("show")
def show_action(ctx: typer.Context, action_id: ActionId, fmt: FormatOpt = None) -> None:
    """One action; a node deletion waiting on its hook shows its deadline."""
    client, out = session(ctx, fmt)
    out.record(client.get(f"/v1/actions/{action_id}")["action"], ACTION_FIELDS)


@action_app.command("wait")
def wait(
    ctx: typer.Context,
    action_id: ActionId,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Follow an action until it ends; exits 1 unless it SUCCEEDED."""
    client, out = session(ctx, fmt)
    finish(client, out, action_id, what="", wait=True, timeout=timeout)


def _lifecycle(ctx: typer.Context, token: str, key: str, fmt: FormatOpt, verb: str) -> None:
    client, out = session(ctx, fmt)
    action = client.get(f"/v1/actions/{token}")["action"]
    cluster_id = action.get("inputs", {}).get("cluster_id")
    if action["name"] != "NODE_DELETE" or not cluster_id:
        raise ApiError(f"{token} is not a lifecycle action token (it is a {action['name']}).")
    body = {key: {"lifecycle_action_token": token}}
    client.post(f"/v1/clusters/{cluster_id}/actions", body)
    node = action.get("inputs", {}).get("node_name") or action["target"]
    out.done(f"{verb} for node {node} (token {token}).", {"action": token, "node": node})


@lifecycle_app.command("complete")
def complete(ctx: typer.Context, token: Token, fmt: FormatOpt = None) -> None:
    """The app is done with the node: delete it now (harmless to repeat)."""
    _lifecycle(ctx, token, "complete_lifecycle", fmt, "complete_lifecycle sent")


@lifecycle_app.command("heartbeat")
def heartbeat(ctx: typer.Context, token: Token, fmt: FormatOpt = None) -> None:
    """The app needs more time: the deadline becomes now + the hook's timeout."""
    _lifecycle(ctx, token, "heartbeat_lifecycle", fmt, "heartbeat_lifecycle sent")
