"""`warden node …`."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.actions import DEFAULT_TIMEOUT_S, finish
from cli.clusters import (
    NODE_COLUMNS,
    CheckFirst,
    Operation,
    Reason,
    RebootType,
    recover_body,
)
from cli.context import FormatOpt, TimeoutOpt, WaitOpt, session

node_app = typer.Typer(help="Nodes: the members of clusters.")

Node = Annotated[str, typer.Argument(metavar="NODE_ID")]


@node_app.command("list")
def list_nodes(
    ctx: typer.Context,
    cluster: Annotated[str | None, typer.Option(help="Only this cluster's (id).")] = None,
    fmt: FormatOpt = None,
) -> None:
    """The project's nodes."""
    client, out = session(ctx, fmt)
    out.rows(client.get("/v1/nodes", cluster_id=cluster)["nodes"], NODE_COLUMNS)


@node_app.command("show")
def show_node(ctx: typer.Context, node: Node, fmt: FormatOpt = None) -> None:
    """One node."""
    client, out = session(ctx, fmt)
    out.record(client.get(f"/v1/nodes/{node}")["node"])


@node_app.command("delete")
def delete_node(
    ctx: typer.Context,
    node: Node,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Remove a node from its cluster (its lifecycle hook fires)."""
    client, out = session(ctx, fmt)
    action = client.action_of(client.request("DELETE", f"/v1/nodes/{node}"))
    finish(client, out, action, what=f"Delete node {node}", wait=wait, timeout=timeout)


@node_app.command("mark-unhealthy")
def mark_node(
    ctx: typer.Context,
    node: Node,
    reason: Reason = "",
    reset: Annotated[bool, typer.Option("--reset", help="Clear the mark instead.")] = False,
    fmt: FormatOpt = None,
) -> None:
    """Mark a node unhealthy: it goes first at the next scale-in."""
    client, out = session(ctx, fmt)
    body = {"mark_unhealthy": not reset, "status_reason": reason}
    out.record(client.request("PATCH", f"/v1/nodes/{node}", json=body).json()["node"])


@node_app.command("recover")
def recover_node(
    ctx: typer.Context,
    node: Node,
    operation: Operation = None,
    reboot_type: RebootType = None,
    check: CheckFirst = False,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Recover one node (with --check: only if the cloud finds it unhealthy, or it is marked)."""
    client, out = session(ctx, fmt)
    body = recover_body(operation, reboot_type, check)
    accepted = client.post(f"/v1/nodes/{node}/actions", body).json()
    finish(client, out, accepted["action"], what=f"Recover {node}", wait=wait, timeout=timeout)
